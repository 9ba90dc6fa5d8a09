import { describe, expectTypeOf, it } from 'vitest';
import type { KubeConfig, V1Deployment, V1Pod } from '@kubernetes/client-node';
import { controller, type Controller } from '../../src/controller/controller.js';
import { finalizer } from '../../src/controller/finalizer.js';
import { ReconcileTimeoutError } from '../../src/controller/ReconcileTimeoutError.js';
import { TerminalError } from '../../src/controller/TerminalError.js';
import type { ReconcileContext, ReconcileOutcome } from '../../src/controller/types.js';
import { objectClient } from '../../src/client/objectClient.js';
import { informer, type Informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';

// Type-level only: these functions are compiled by tsc, never called.
declare const kc: KubeConfig;

describe('controller types', () => {
  it('a reconcile for Informer<V1Deployment> receives a V1Deployment, and the outcomes carry it', () => {
    const typed = (): void => {
      const deployments: Informer<V1Deployment> = informer(kubeSource(kc, 'apps/v1/deployments'));
      const configMaps = informer(kubeSource(kc, 'v1/configmaps'));
      const c = controller({
        for: deployments,
        owns: [{ source: configMaps, kind: 'Deployment', apiVersion: 'apps/v1' }],
        reconcile: (d, ctx) => {
          expectTypeOf(d).toEqualTypeOf<V1Deployment>();
          expectTypeOf(ctx).toEqualTypeOf<ReconcileContext<V1Deployment>>();
          expectTypeOf(ctx.store.getByKey('x')).toEqualTypeOf<V1Deployment | undefined>();
          return { requeueAfter: 1_000 };
        },
        errorPolicy: (err, d) => {
          expectTypeOf(err).toEqualTypeOf<Error>();
          expectTypeOf(d).toEqualTypeOf<V1Deployment>();
          return 'backoff';
        },
      });
      expectTypeOf(c).toEqualTypeOf<Controller<V1Deployment>>();
      c.subscribe((o) => {
        expectTypeOf(o).toEqualTypeOf<ReconcileOutcome<V1Deployment>>();
        if (o.type !== 'gone') expectTypeOf(o.obj).toEqualTypeOf<V1Deployment>();
      });
    };
    void typed;
  });

  it('mistakes do not compile', () => {
    const mistakes = (): void => {
      const deployments = informer(kubeSource(kc, 'apps/v1/deployments'));
      controller({
        // @ts-expect-error a reconcile that takes pods does not fit an informer of deployments
        for: deployments,
        reconcile: (p: V1Pod) => void p,
      });
      controller({
        for: deployments,
        // @ts-expect-error an action is { requeueAfter } or nothing
        reconcile: () => ({ requeueAfer: 5 }),
      });
      controller({
        for: deployments,
        reconcile: () => undefined,
        // @ts-expect-error the error policy answers 'backoff', { requeueAfter } or nothing
        errorPolicy: () => 'retry',
      });
      // @ts-expect-error `for` is required
      controller({ reconcile: () => undefined });
      controller({
        for: deployments,
        reconcile: async (d) => {
          const client = objectClient(kc, 'apps/v1/deployments', { namespace: 'default' });
          // @ts-expect-error the finalizer's handlers get the object's type, not a pod
          return finalizer(client, 'example.com/x', d, { apply: (p: V1Pod) => void p, cleanup: () => undefined });
        },
      });
    };
    void mistakes;
  });

  it('types the scheduling and failure options, terminal outcomes and the errors', () => {
    const typed = (): void => {
      const deployments = informer(kubeSource(kc, 'apps/v1/deployments'));
      const c = controller({ for: deployments, reconcile: () => undefined, reconcileTimeoutMs: 30_000, priorityQueue: false });
      c.subscribe((o) => {
        if (o.type === 'failed') {
          expectTypeOf(o.terminal).toEqualTypeOf<boolean>();
          if (o.error instanceof ReconcileTimeoutError) expectTypeOf(o.error.timeoutMs).toEqualTypeOf<number>();
        }
      });
      expectTypeOf(c.status().stuck).toEqualTypeOf<readonly string[]>();
      // One status shape: the metrics are in it, each fact under one name.
      expectTypeOf(c.status().succeeded).toEqualTypeOf<Readonly<Record<'success' | 'requeue' | 'requeue_after', number>>>();
      expectTypeOf(c.status().durationHistogram.count).toEqualTypeOf<number>();
      // @ts-expect-error the metrics are status(): there is no second snapshot
      c.metrics();
      // @ts-expect-error failures are counted once, as errors
      void c.status().reconcileErrors;
      // @ts-expect-error reconciles running now are inFlight
      void c.status().activeWorkers;
      expectTypeOf(new TerminalError('bad spec', { cause: new Error('x') })).toExtend<Error>();
    };
    const mistakes = (): void => {
      const deployments = informer(kubeSource(kc, 'apps/v1/deployments'));
      // @ts-expect-error a timeout is a number of ms, not a duration string
      controller({ for: deployments, reconcile: () => undefined, reconcileTimeoutMs: '30s' });
      // @ts-expect-error priorityQueue is on or off
      controller({ for: deployments, reconcile: () => undefined, priorityQueue: 'low' });
      // @ts-expect-error a terminal error says what is wrong
      void new TerminalError();
      // @ts-expect-error the stuck keys are read-only
      controller({ for: deployments, reconcile: () => undefined }).status().stuck.push('x');
      controller({ for: deployments, reconcile: () => undefined }).subscribe((o) => {
        // @ts-expect-error only a failed outcome says whether it is terminal
        if (o.type === 'reconciled') void o.terminal;
      });
    };
    void typed;
    void mistakes;
  });
});
