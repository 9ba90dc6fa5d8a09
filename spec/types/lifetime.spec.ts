import { describe, expectTypeOf, it } from 'vitest';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import type { Subscription, SubscriptionLike, Unsubscribable } from 'rxjs';
import { informer, InformerFactory, kubeSource, type InformerStatus, type Registration } from '../../src/index.js';
import type { ReflectorCounters } from '../../src/core.js';

// Checked by `tsc`: each @ts-expect-error must be an error. The calls sit in functions that are never run.

describe('one way to start, wait and stop an informer (LT-80…LT-85)', () => {
  it('starts by subscribing, waits with whenSynced, stops by unsubscribing: the other verbs do not compile', () => {
    const calls = (kc: KubeConfig): void => {
      const pods = informer(kubeSource(kc, 'v1/pods'));
      const reg = pods.addHandler({});
      const sub = pods.subscribe();
      void pods.whenSynced({ timeout: 1000 });
      sub.unsubscribe();
      reg.unsubscribe();
      void reg.done;
      // @ts-expect-error starting is subscribing (or adding a handler)
      pods.start();
      // @ts-expect-error stopping is unsubscribing
      void pods.stop();
      // @ts-expect-error sync state is status().synced; waiting is whenSynced
      pods.hasSynced();
      // @ts-expect-error an async iterable is ix's from() over the informer
      pods.notifications();
      // @ts-expect-error the counters are in status(): one status shape
      pods.metrics();
      // @ts-expect-error a registration ends by unsubscribe(); done tells when its call in progress finished (Subscription's remove(child) ends nothing)
      void reg.remove();
      const factory = new InformerFactory(kc);
      // @ts-expect-error the factory holds no lifetime: subscribe to its informers
      factory.start();
      // @ts-expect-error nor does it stop them: their subscribers do
      void factory.shutdown();
    };
    expectTypeOf(calls).toBeFunction();
  });

  it('a registration is an rxjs subscription, and the factory waits as an informer does', () => {
    expectTypeOf<Registration>().toMatchTypeOf<SubscriptionLike>();
    // A real Subscription, so a parent it was add()ed to forgets it when it ends by itself (LT-82).
    expectTypeOf<Registration>().toMatchTypeOf<Subscription>();
    expectTypeOf<Registration>().toMatchTypeOf<Unsubscribable>();
    expectTypeOf<Registration['done']>().toEqualTypeOf<Promise<void>>();
    expectTypeOf<InformerFactory['whenSynced']>().returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf<ReturnType<ReturnType<typeof informer<V1Pod>>['whenSynced']>>().toEqualTypeOf<Promise<void>>();
  });

  it('the status carries the counters the metrics export, with the states of one lifetime', () => {
    expectTypeOf<InformerStatus['state']>().toEqualTypeOf<'idle' | 'running' | 'failed'>();
    expectTypeOf<InformerStatus['counters']>().toEqualTypeOf<ReflectorCounters>();
    expectTypeOf<InformerStatus['objects']>().toEqualTypeOf<number>();
    expectTypeOf<InformerStatus['lastSyncResourceVersion']>().toEqualTypeOf<string>();
  });
});
