import { describe, expectTypeOf, it } from 'vitest';
import { of } from 'rxjs';
import { KubeConfig, type V1ConfigMap, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import {
  controller,
  defaultControllerRateLimiter,
  informer,
  kubeSource,
  multiClusterController,
  multiClusterInformer,
  type Controller,
  type InformerEvent,
  type MultiClusterInformer,
  type ReconcileOutcome,
} from '../../src/index.js';
import type { Cluster, ClusterEvent, ClusterInformer, ControllerSource } from '../../src/core.js';
import { offlineKubeConfig } from '../helpers/offlineKubeConfig.js';

// These lines are checked by `tsc` (the typecheck step of `npm test`): each @ts-expect-error must be an error.
const kc = offlineKubeConfig();
const fleet = of([{ name: 'eu', kubeConfig: kc }] satisfies Cluster[]);

describe('multi-cluster types', () => {
  it('a multi-cluster informer is typed by its source, and its events are informer events that name a cluster', () => {
    const pods = multiClusterInformer(fleet, (c) => kubeSource(c.kubeConfig, 'v1/pods'));
    expectTypeOf(pods).toEqualTypeOf<MultiClusterInformer<V1Pod>>();
    expectTypeOf<ClusterEvent<V1Pod>>().toExtend<InformerEvent<V1Pod>>();
    expectTypeOf(pods.cluster('eu')).toEqualTypeOf<ClusterInformer<V1Pod>>();
    expectTypeOf(pods.cluster('eu')).toExtend<ControllerSource<V1Pod>>();
    expectTypeOf(pods.store.getByKey('eu/default/web')).toEqualTypeOf<V1Pod | undefined>();
  });

  it('mistakes across clusters do not compile', () => {
    const deployments = multiClusterInformer(fleet, (c) => kubeSource(c.kubeConfig, 'apps/v1/deployments'));
    const hub = informer(kubeSource(kc, 'v1/configmaps'));
    // Never called: these lines are here for the compiler only.
    const mistakes = (): void => {
      // @ts-expect-error a multi-cluster informer is not one cluster's source: its keys need a cluster (use multiClusterController, or .cluster(name))
      controller({ for: deployments, reconcile: () => undefined });
      // @ts-expect-error keying an object of a multi-cluster store needs its cluster
      deployments.store.keyOf({ metadata: { name: 'web', namespace: 'default' } });
      // @ts-expect-error the rate limiter is one instance, as a controller's: keys carry their cluster, so clusters back off apart
      multiClusterController({ for: deployments, reconcile: () => undefined, rateLimiter: () => defaultControllerRateLimiter<string>() });
      // @ts-expect-error a multi-cluster controller is fair by cluster: fairBy is not an option
      multiClusterController({ for: deployments, reconcile: () => undefined, fairBy: (key: string) => key });
      // @ts-expect-error a single-cluster source says nothing of the fleet: clusters is required
      multiClusterController({ for: hub, reconcile: () => undefined });
      // @ts-expect-error a reconcile returns nothing or { requeueAfter: ms }
      multiClusterController({ for: deployments, reconcile: () => ({ requeueAfter: '5m' }) });
      // @ts-expect-error sync state is read from status$; whenSynced() waits for it
      deployments.synced$.subscribe();
      // @ts-expect-error no hasSynced(): status$'s synced says it (LT-23)
      deployments.hasSynced();
      // @ts-expect-error a cluster's view says it through status$ too
      deployments.cluster('eu').synced$.subscribe();
    };
    expectTypeOf(mistakes).toBeFunction();
  });

  it("a multi-cluster reconcile gets the object's type and the cluster; the result is a controller whose outcome keys carry the cluster", () => {
    const deployments = multiClusterInformer(fleet, (c) => kubeSource(c.kubeConfig, 'apps/v1/deployments'));
    const configMaps = multiClusterInformer(fleet, (c) => kubeSource(c.kubeConfig, 'v1/configmaps'));
    const c = multiClusterController({
      for: deployments,
      owns: [{ source: configMaps, kind: 'Deployment' }],
      watches: [{ source: informer(kubeSource(kc, 'v1/configmaps')), map: (cm: V1ConfigMap, cluster: Cluster) => `${cluster.name}-${cm.metadata?.name}` }],
      reconcile: (d, ctx) => {
        expectTypeOf(d).toEqualTypeOf<V1Deployment>();
        expectTypeOf(ctx.cluster.kubeConfig).toEqualTypeOf<KubeConfig>();
        expectTypeOf(ctx.key).toBeString();
      },
      rateLimiter: defaultControllerRateLimiter<string>(),
    });
    expectTypeOf(c).toEqualTypeOf<Controller<V1Deployment>>();
    c.subscribe((o) => expectTypeOf(o).toEqualTypeOf<ReconcileOutcome<V1Deployment>>());
    const shared = multiClusterController({ clusters: fleet, for: informer(kubeSource(kc, 'v1/configmaps')), reconcile: (cm) => void expectTypeOf(cm).toEqualTypeOf<V1ConfigMap>() });
    expectTypeOf(shared.status().groups?.['eu']?.inFlight).toEqualTypeOf<number | undefined>();
  });
});
