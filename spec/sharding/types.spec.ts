/** The sharding API's types: what a mistake should not compile. */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { asyncScheduler, type Observable } from 'rxjs';
import { describe, expectTypeOf, it } from 'vitest';
import { liveShards } from '../../src/sharding/members.js';
import { hashRing } from '../../src/sharding/ring.js';
import { shardedController, sharder, type ShardedControllerOptions, type ShardEvent, type ShardingEvent, type ShardMembers } from '../../src/sharding/index.js';
import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import type { ControllerOptions } from '../../src/controller/index.js';
import type { Informer } from '../../src/informer/index.js';
import { itemExponentialFailureRateLimiter } from '../../src/workqueue/rateLimiters.js';

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

  it("takes the controller's options, typed as the controller types them", () => {
    // Built, never run: `kc` exists only as a type here.
    const build = () => {
      const secrets = {} as Informer<V1Secret>;
      const opts: ShardedControllerOptions<V1ConfigMap> = {
        kc,
        resource: 'v1/configmaps',
        controller: 'c',
        identity: 'r',
        leaseNamespace: 'n',
        reconcile: () => undefined,
        reconcileTimeoutMs: 30_000,
        priorityQueue: false,
        readYourWrites: false,
        readYourWritesTimeoutMs: 1_000,
        rateLimiter: itemExponentialFailureRateLimiter<string>(),
        watches: [{ source: secrets, map: (s: V1Secret) => `${s.metadata?.namespace}/${s.metadata?.name}` }],
      };
      void opts;
      // Derived from the controller's bag, so an option the controller gains cannot be missing here.
      expectTypeOf<ShardedControllerOptions<V1ConfigMap>['reconcileTimeoutMs']>().toEqualTypeOf<ControllerOptions<V1ConfigMap>['reconcileTimeoutMs']>();
      expectTypeOf<ShardedControllerOptions<V1ConfigMap>['rateLimiter']>().toEqualTypeOf<ControllerOptions<V1ConfigMap>['rateLimiter']>();
      expectTypeOf<ShardedControllerOptions<V1ConfigMap>['watches']>().toEqualTypeOf<ControllerOptions<V1ConfigMap>['watches']>();
      const base = { kc, resource: 'v1/configmaps', controller: 'c', identity: 'r', leaseNamespace: 'n', reconcile: () => undefined } as const;
      // @ts-expect-error the rate limiter is an instance, as the controller's, not a factory
      const factory: ShardedControllerOptions<V1ConfigMap> = { ...base, rateLimiter: () => itemExponentialFailureRateLimiter<string>() };
      // @ts-expect-error the primary source is the share's informer, which the sharded controller makes
      const withFor: ShardedControllerOptions<V1ConfigMap> = { ...base, for: secrets };
      // @ts-expect-error the name is `controller`, the same on every replica
      const withName: ShardedControllerOptions<V1ConfigMap> = { ...base, name: 'x' };
      void factory;
      void withFor;
      void withName;
    };
    void build;
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
    expectTypeOf(liveShards(asyncScheduler)).returns.toEqualTypeOf<Observable<ShardMembers>>();
    expectTypeOf(hashRing(['a']).members).toEqualTypeOf<readonly string[]>();
  });
});
