import { describe, expectTypeOf, it } from 'vitest';
import type { KubeConfig, V1Pod, V1Lease } from '@kubernetes/client-node';
import type { Observable } from 'rxjs';
import { informer, kubeSource, type Informer, type InformerEvent } from '../../src/index.js';
import type { Lease, ObservedShardLease, ShardMembers } from '../../src/core.js';
import { liveShards } from '../../src/sharding/members.js';

// Checked by `tsc` (the typecheck step of `npm test`): each @ts-expect-error must be an error. The calls sit in
// functions that are never run, since they would reach for a cluster.

describe('liveShards takes the Leases an informer gives, typed either way', () => {
  it('an informer over coordination.k8s.io/v1/leases (client-node V1Lease, times typed as Date) pipes into it as is', () => {
    const members = (kc: KubeConfig): Observable<ShardMembers<V1Lease>> => {
      const leases = informer(kubeSource(kc, 'coordination.k8s.io/v1/leases', { namespace: 'shards' }));
      expectTypeOf(leases).toEqualTypeOf<Informer<V1Lease>>();
      return leases.pipe(liveShards());
    };
    expectTypeOf(members).toBeFunction();
    // What it emits keeps the informer's type, so a Lease read back is the one that was given.
    expectTypeOf<ObservedShardLease<V1Lease>['lease']>().toEqualTypeOf<V1Lease>();
    expectTypeOf<ShardMembers<V1Lease>['leases']>().toEqualTypeOf<ReadonlyMap<string, ObservedShardLease<V1Lease>>>();
  });

  it('the library’s own Lease (times as the wire’s strings) is the default', () => {
    expectTypeOf(liveShards()).toEqualTypeOf<(source: Observable<InformerEvent<Lease>>) => Observable<ShardMembers<Lease>>>();
    expectTypeOf(liveShards<V1Lease>()).parameter(0).toEqualTypeOf<Observable<InformerEvent<V1Lease>>>();
    expectTypeOf<ShardMembers>().toEqualTypeOf<ShardMembers<Lease>>();
    const members = (kc: KubeConfig): Observable<ShardMembers> =>
      informer(kubeSource<Lease>(kc, { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true })).pipe(liveShards());
    expectTypeOf(members).toBeFunction();
  });

  it('what is not a Lease does not fit', () => {
    const calls = (pods: Informer<V1Pod>, strange: Observable<InformerEvent<{ metadata: { name: string }; spec: { holderIdentity: number } }>>): void => {
      // @ts-expect-error a Pod's spec is not a Lease's
      pods.pipe(liveShards());
      // @ts-expect-error a holderIdentity must be a string
      strange.pipe(liveShards());
    };
    expectTypeOf(calls).toBeFunction();
  });
});
