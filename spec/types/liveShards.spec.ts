import { describe, expectTypeOf, it } from 'vitest';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { asyncScheduler, type Observable } from 'rxjs';
import { informer, kubeSource, type Informer, type InformerEvent } from '../../src/index.js';
import type { Lease, ShardMembers } from '../../src/core.js';
import { liveShards } from '../../src/sharding/members.js';

// Checked by `tsc` (the typecheck step of `npm test`): each @ts-expect-error must be an error. The calls sit in
// functions that are never run, since they would reach for a cluster.

describe('liveShards takes the Leases of an informer of the library’s Lease', () => {
  it('the library’s own Lease (times as the wire’s strings) pipes into it', () => {
    expectTypeOf(liveShards(asyncScheduler)).toEqualTypeOf<(source: Observable<InformerEvent<Lease>>) => Observable<ShardMembers>>();
    const members = (kc: KubeConfig): Observable<ShardMembers> =>
      informer(kubeSource<Lease>(kc, { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true })).pipe(liveShards(asyncScheduler));
    expectTypeOf(members).toBeFunction();
  });

  it('what is not a Lease does not fit', () => {
    const calls = (pods: Informer<V1Pod>, strange: Observable<InformerEvent<{ metadata: { name: string }; spec: { holderIdentity: number } }>>): void => {
      // @ts-expect-error a Pod's spec is not a Lease's
      pods.pipe(liveShards(asyncScheduler));
      // @ts-expect-error a holderIdentity must be a string
      strange.pipe(liveShards(asyncScheduler));
    };
    expectTypeOf(calls).toBeFunction();
  });
});
