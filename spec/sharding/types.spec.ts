/** The sharding API's types: what a mistake should not compile. */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Observable } from 'rxjs';
import { describe, expectTypeOf, it } from 'vitest';
import { hashRing, liveShards, shardedController, sharder, type ShardEvent, type ShardingEvent, type ShardMembers } from '../../src/sharding/index.js';
import type { KubeConfig } from '@kubernetes/client-node';

declare const kc: KubeConfig;

describe('sharding types', () => {
  it('a sharded controller reconciles its resource type and emits its events', () => {
    const make = () =>
      shardedController<V1ConfigMap>({
        kc,
        resource: 'v1/configmaps',
        controller: 'c',
        identity: 'r',
        leaseNamespace: 'n',
        reconcile: (cm, ctx) => {
          expectTypeOf(cm).toEqualTypeOf<V1ConfigMap>();
          expectTypeOf(ctx.signal).toEqualTypeOf<AbortSignal>();
        },
      });
    expectTypeOf(make).returns.toEqualTypeOf<Observable<ShardEvent<V1ConfigMap>>>();
    // @ts-expect-error the controller's name is required
    const noName = () => shardedController({ kc, resource: 'v1/configmaps', identity: 'r', leaseNamespace: 'n', reconcile: () => undefined });
    // @ts-expect-error owns entries name a resource
    const badOwns = () => shardedController({ kc, resource: 'v1/configmaps', controller: 'c', identity: 'r', leaseNamespace: 'n', reconcile: () => undefined, owns: [{ kind: 'X' }] });
    void noName;
    void badOwns;
  });

  it('events narrow by type', () => {
    const describe = (e: ShardEvent<V1ConfigMap> | ShardingEvent): string => {
      if (e.type === 'outcome') return e.outcome.key;
      if (e.type === 'assigned') return `${e.key}:${e.shard}:${e.from ?? ''}`;
      if (e.type === 'followed') return e.resource;
      // @ts-expect-error a membership event has no key
      if (e.type === 'member') return e.key;
      return e.type;
    };
    void describe;
    expectTypeOf(sharder).returns.toEqualTypeOf<Observable<ShardingEvent>>();
    expectTypeOf(liveShards()).returns.toEqualTypeOf<Observable<ShardMembers>>();
    expectTypeOf(hashRing(['a']).members).toEqualTypeOf<readonly string[]>();
  });
});
