// Subscribers that come while a multi-cluster informer runs, and what they
// do from inside its events: they count from the moment they subscribe and hear
// every event once (LT-21, LT-25, LT-26); what a provider's failure does to a
// waiting whenSynced (LT-23), and sets it gives from inside events (LT-27).

import type { V1Pod } from '@kubernetes/client-node';
import { Subject, filter, first, firstValueFrom, switchMap, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { multiClusterInformer, type MultiClusterInformer, type MultiClusterInformerOptions } from '../../src/multicluster/multiClusterInformer.js';
import type { Cluster, ClusterEvent } from '../../src/multicluster/types.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { startApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Fleet, fastReflector } from './fleet.js';

let fleet: Fleet | undefined;
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await fleet?.close();
  fleet = undefined;
});

function keep(sub: Subscription): void {
  cleanups.push(() => sub.unsubscribe());
}

function podsOf(f: Fleet, opts: MultiClusterInformerOptions<V1Pod> = {}): MultiClusterInformer<V1Pod> {
  return multiClusterInformer(f.provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: () => {}, ...opts });
}

/** What a subscriber holds after `events`, and the keys it was told of twice without a delete between. */
function replayed(events: readonly ClusterEvent<V1Pod>[]): { held: string[]; twice: string[] } {
  const held = new Set<string>();
  const twice: string[] = [];
  for (const e of events) {
    if (e.type === 'delete') held.delete(e.key);
    else if (e.type === 'add') {
      if (held.has(e.key)) twice.push(e.key);
      held.add(e.key);
    }
  }
  return { held: [...held].sort(), twice };
}

describe('late subscribers of a multi-cluster informer', () => {
  it('count from the moment they subscribe: the only other subscriber leaving during the replay does not end the run (LT-25)', async () => {
    fleet = await Fleet.start(['a', 'b'], 2);
    const inf = podsOf(fleet);
    const states: string[] = [];
    keep(inf.status$.subscribe((s) => states.push(s.state)));
    const first = inf.subscribe();
    await inf.whenSynced({ timeout: 10_000 });
    states.length = 0;
    const events: ClusterEvent<V1Pod>[] = [];
    // A hand-over: the newcomer lets the old subscriber go at its first object.
    keep(inf.subscribe((e) => {
      events.push(e);
      first.unsubscribe();
    }));
    expect(states).not.toContain('idle');
    await fleet.server('a').create('v1/pods', pod('after'));
    await waitFor(() => events.some((e) => e.key === 'a/default/after'), 'the live add');
    expect(replayed(events)).toEqual({ held: ['a/default/a-p0', 'a/default/a-p1', 'a/default/after', 'b/default/b-p0', 'b/default/b-p1'], twice: [] });
    expect(states).not.toContain('idle');
  });

  it('hear a leave they cause during their replay, and no delete of an object they were not given (LT-25)', async () => {
    fleet = await Fleet.start(['a', 'b'], 2);
    const inf = podsOf(fleet);
    keep(inf.subscribe());
    await inf.whenSynced({ timeout: 10_000 });
    const f = fleet;
    const events: ClusterEvent<V1Pod>[] = [];
    keep(inf.subscribe((e) => {
      events.push(e);
      if (events.length === 1) f.drop(e.cluster);
    }));
    expect(replayed(events).held).toEqual(inf.store.listKeys().sort());
    expect(events.filter((e) => e.type === 'delete')).toHaveLength(1);
  });

  it('a cluster view joining likewise: its cluster leaving during its replay leaves it holding nothing (LT-25)', async () => {
    fleet = await Fleet.start(['a', 'b'], 2);
    const inf = podsOf(fleet);
    keep(inf.subscribe());
    await inf.whenSynced({ timeout: 10_000 });
    const f = fleet;
    const events: ClusterEvent<V1Pod>[] = [];
    keep(inf.cluster('a').subscribe((e) => {
      events.push(e);
      if (events.length === 1) f.drop('a');
    }));
    expect(replayed(events)).toEqual({ held: [], twice: [] });
  });

  it("switching onto the informer inside an ordered relist hears each object once, as with one informer (PF-16, LT-26)", async () => {
    fleet = await Fleet.start(['a'], 3);
    const inf = podsOf(fleet, { fifo: 'ordered' });
    const events: ClusterEvent<V1Pod>[] = [];
    keep(inf.pipe(first(), switchMap(() => inf)).subscribe((e) => events.push(e)));
    await waitFor(() => events.length >= 3, 'the first list');
    expect(replayed(events)).toEqual({ held: ['a/default/a-p0', 'a/default/a-p1', 'a/default/a-p2'], twice: [] });
    expect(events).toHaveLength(3);
  });

  it('switching onto the informer inside a take-over hears each object of the new connection once (MC-5, LT-26)', async () => {
    fleet = await Fleet.start(['x'], 0);
    const old = fleet.server('x');
    await old.create('v1/pods', pod('same'));
    await old.create('v1/pods', pod('gone'));
    const inf = podsOf(fleet);
    keep(inf.subscribe());
    await inf.whenSynced({ timeout: 10_000 });
    const inner: ClusterEvent<V1Pod>[] = [];
    keep(inf.pipe(filter((e) => !(e.type === 'add' && e.isInInitialList)), first(), switchMap(() => inf)).subscribe((e) => inner.push(e)));
    const moved = await startApiServer({ port: 0 });
    cleanups.push(() => moved.close());
    await moved.create('v1/pods', pod('same'));
    await moved.create('v1/pods', pod('new'));
    fleet.provider.next([{ name: 'x', kubeConfig: moved.kubeConfig() }]);
    await waitFor(() => inf.store.getByKey('x/default/new'), 'the take-over');
    expect(replayed(inner)).toEqual({ held: ['x/default/new', 'x/default/same'], twice: [] });
    expect(inner.filter((e) => e.type !== 'add')).toEqual([]);
  });
});

describe("a multi-cluster informer's provider", () => {
  it("failing makes a waiting whenSynced reject with the provider's error as its cause, not a cluster's (LT-23)", async () => {
    fleet = await Fleet.start(['up'], 1);
    const down = await startApiServer({ port: 0 });
    await down.close();
    const provider = new Subject<readonly Cluster[]>();
    const inf = multiClusterInformer(provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: () => {}, unreachableAfterMs: 60_000 });
    keep(inf.subscribe({ error: () => {} }));
    provider.next([{ name: 'up', kubeConfig: fleet.server('up').kubeConfig() }, { name: 'down', kubeConfig: down.kubeConfig() }]);
    await firstValueFrom(inf.status$.pipe(filter((s) => s.clusters.some((c) => c.name === 'down' && c.lastError !== undefined))));
    const waiting = inf.whenSynced();
    const hub = new Error('the hub is gone');
    provider.error(hub);
    await expect(waiting).rejects.toMatchObject({ reason: 'failed', cause: hub });
  });

  it('whenSynced says why it gave up: not running at the call, its last subscriber leaving, the signal (LT-23)', async () => {
    const provider = new Subject<readonly Cluster[]>(); // never gives a set: never synced
    const inf = multiClusterInformer(provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'));
    await expect(inf.whenSynced()).rejects.toMatchObject({ reason: 'not-running' });
    const sub = inf.subscribe();
    await expect(inf.whenSynced({ signal: AbortSignal.abort() })).rejects.toMatchObject({ reason: 'aborted' });
    const later = new AbortController();
    const aborted = inf.whenSynced({ signal: later.signal });
    later.abort();
    await expect(aborted).rejects.toMatchObject({ reason: 'aborted' });
    const waiting = inf.whenSynced();
    sub.unsubscribe();
    await expect(waiting).rejects.toMatchObject({ reason: 'stopped' });
    await expect(inf.whenSynced()).rejects.toMatchObject({ reason: 'not-running' });
  });

  it('emitting again from inside an event of its last set: the sets apply in order and the latest wins, no ghost cluster (LT-27)', async () => {
    fleet = await Fleet.start(['a'], 1);
    const b = await fleet.add('b', 1, false);
    const inf = podsOf(fleet);
    const f = fleet;
    let once = false;
    keep(inf.subscribe((e) => {
      if (e.type === 'delete' && e.reason === 'cluster-removed' && !once) {
        once = true;
        f.provider.next([]);
      }
    }));
    await inf.whenSynced({ timeout: 10_000 });
    // One set: a leaves, b joins; inside a's leave the provider says: no cluster at all.
    f.provider.next([{ name: 'b', kubeConfig: b.kubeConfig() }]);
    const status = await firstValueFrom(inf.status$);
    expect({ clusters: status.clusters.map((c) => c.name), keys: inf.store.listKeys() }).toEqual({ clusters: [], keys: [] });
  });

  it('a second informer over the provider that gives a set while it reads the latest one at its start: both end with that set (MC-15)', async () => {
    fleet = await Fleet.start(['a'], 1);
    const b = await fleet.add('b', 1, false);
    const f = fleet;
    const a = f.server('a').kubeConfig();
    // A cluster with no name is reported, from inside the reading of its set.
    f.provider.next([{ name: 'a', kubeConfig: a }, { name: '', kubeConfig: a }]);
    const first = podsOf(f);
    keep(first.subscribe());
    let corrected = false;
    const second = podsOf(f, {
      onError: () => {
        if (corrected) return;
        corrected = true;
        f.provider.next([{ name: 'a', kubeConfig: a }, { name: 'b', kubeConfig: b.kubeConfig() }]);
      },
    });
    keep(second.subscribe());
    expect(corrected).toBe(true);
    const clusters = async (inf: MultiClusterInformer<V1Pod>) => (await firstValueFrom(inf.status$)).clusters.map((c) => c.name).sort();
    expect([await clusters(first), await clusters(second)]).toEqual([
      ['a', 'b'],
      ['a', 'b'],
    ]);
    await second.whenSynced({ timeout: 10_000 });
    expect(second.store.listKeys().sort()).toEqual(['a/default/a-p0', 'b/default/b-p0']);
  });
});
