import { describe, expectTypeOf, it } from 'vitest';
import { map, of, type Observable } from 'rxjs';
import { Registry } from 'prom-client';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { controller, informer, kubeSource, leaderElection, leaseLock, workQueue, type Informer, type Leadership } from 'rxkube';
import { prometheusMetrics, type PrometheusMetrics } from 'rxkube/metrics';
import { offlineKubeConfig } from '../helpers/offlineKubeConfig.js';

// These lines are checked by `tsc` (the typecheck step of `npm test`): each @ts-expect-error must be an error.
const kc = offlineKubeConfig();

describe('rxkube/metrics types', () => {
  it('takes informers of any type, controllers, work queues and a boolean leadership stream', () => {
    const metrics = prometheusMetrics({ registry: new Registry() });
    expectTypeOf(metrics).toEqualTypeOf<PrometheusMetrics>();
    expectTypeOf(metrics.registry).toEqualTypeOf<Registry>();
    expectTypeOf(metrics.metrics()).toEqualTypeOf<Promise<string>>();
    const pods: Informer<V1Pod> = informer(kubeSource(kc, 'v1/pods'));
    const configMaps = informer(kubeSource(kc, 'v1/configmaps'));
    const ctl = controller<V1ConfigMap>({ for: configMaps, reconcile: () => undefined });
    expectTypeOf(metrics.addInformer(pods)).toEqualTypeOf<() => void>();
    expectTypeOf(metrics.addController(ctl)).toEqualTypeOf<() => void>();
    expectTypeOf(metrics.addWorkQueue(workQueue<string>({ name: 'q' }))).toEqualTypeOf<() => void>();
    const leadership: Observable<Leadership> = leaderElection({ lock: leaseLock(kc, { namespace: 'default', name: 'x' }), identity: 'me' });
    expectTypeOf(metrics.addLeaderElection('x', leadership.pipe(map((l) => l.leading)))).toEqualTypeOf<() => void>();
  });

  it('wrong arguments do not compile', () => {
    const metrics = prometheusMetrics();
    const pods = informer(kubeSource(kc, 'v1/pods'));
    const ctl = controller<V1Pod>({ for: pods, reconcile: () => undefined });
    const queue = workQueue<string>({ name: 'q' });
    // Never called: these lines are here for the compiler only.
    const mistakes = (): void => {
      // @ts-expect-error the registry is prom-client's Registry, not a name
      prometheusMetrics({ registry: 'default' });
      // @ts-expect-error no such option
      prometheusMetrics({ prefix: 'my_' });
      // @ts-expect-error an informer has no controller metrics
      metrics.addController(pods);
      // @ts-expect-error a controller's metrics are not a work queue's
      metrics.addWorkQueue(ctl);
      // @ts-expect-error a work queue is not an informer
      metrics.addInformer(queue);
      // @ts-expect-error a controller is not an informer
      metrics.addInformer(ctl);
      // @ts-expect-error leadership is a stream of booleans: map a Leadership to its `leading`
      metrics.addLeaderElection('x', of<Leadership>({ leading: true, leader: 'me' }));
      // @ts-expect-error the election's name comes first
      metrics.addLeaderElection(of(true));
      // @ts-expect-error a remover takes no arguments and returns nothing to await
      const n: number = metrics.addWorkQueue(queue)();
      void n;
    };
    expectTypeOf(mistakes).toBeFunction();
  });
});
