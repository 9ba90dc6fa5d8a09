import type { V1Pod } from '@kubernetes/client-node';
import { firstValueFrom, filter, of, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { CacheSyncError } from '../../src/informer/CacheSyncError.js';
import { ClusterError } from '../../src/multicluster/ClusterError.js';
import { multiClusterInformer, type MultiClusterInformer, type MultiClusterInformerOptions } from '../../src/multicluster/multiClusterInformer.js';
import type { ClusterEvent } from '../../src/multicluster/types.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { ConnectionError } from '../../src/errors/api/ConnectionError.js';
import { isUnauthorized } from '../../src/errors/api/index.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import { startApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Fleet, fastReflector } from './fleet.js';

let fleet: Fleet | undefined;
const subscriptions: Subscription[] = [];

afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await fleet?.close();
  fleet = undefined;
});

function podsOf(f: Fleet, opts: MultiClusterInformerOptions<V1Pod> = {}): MultiClusterInformer<V1Pod> {
  return multiClusterInformer(f.provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: () => {}, ...opts });
}

/** Subscribes for the test's length, collecting events. */
function collect(inf: MultiClusterInformer<V1Pod>): ClusterEvent<V1Pod>[] {
  const events: ClusterEvent<V1Pod>[] = [];
  subscriptions.push(inf.subscribe((e) => events.push(e)));
  return events;
}

/** The store as key → resourceVersion, to compare with the servers' union. */
function contents(inf: MultiClusterInformer<V1Pod>): Map<string, string> {
  return new Map(inf.store.listKeys().map((k) => [k, inf.store.getByKey(k)?.metadata?.resourceVersion ?? '']));
}

describe('multiClusterInformer over simulated clusters', () => {
  it('merges every cluster into one store keyed cluster/namespace/name, with indexes across clusters and by cluster', async () => {
    fleet = await Fleet.start(['eu', 'us', 'ap'], 3);
    await fleet.server('us').create('v1/pods', pod('extra', { namespace: 'kube-system' }));
    const inf = podsOf(fleet);
    const events = collect(inf);
    await inf.whenSynced({ timeout: 10_000 });
    expect(contents(inf)).toEqual(fleet.union());
    expect(inf.store.size).toBe(10);
    expect(inf.store.getByKey('eu/default/eu-p0')?.metadata?.name).toBe('eu-p0');
    expect(inf.store.getByKey('eu/default/us-p0')).toBeUndefined();
    expect(inf.store.byIndex('cluster', 'us').map((p) => p.metadata?.name).sort()).toEqual(['extra', 'us-p0', 'us-p1', 'us-p2']);
    expect(inf.store.indexKeys('namespace', 'kube-system')).toEqual(['us/kube-system/extra']);
    expect(inf.store.listIndexFuncValues('cluster')).toEqual(['ap', 'eu', 'us']);
    expect(inf.store.list({ namespace: 'default' })).toHaveLength(9);
    expect(() => inf.store.byIndex('nope', 'x')).toThrow(/nope/);
    expect(events).toHaveLength(10);
    expect(events.every((e) => e.type === 'add' && e.isInInitialList && e.key === `${e.cluster}/${e.obj.metadata?.namespace}/${e.obj.metadata?.name}`)).toBe(true);
    const status = await firstValueFrom(inf.status$);
    // One status shape: the informer's synced, errors and lastError, and each cluster with its informer's status (LT-23).
    expect(status).toMatchObject({ state: 'running', synced: true, errors: 0, lastError: undefined });
    expect(status.clusters.every((c) => c.informer?.synced === true && c.informer.state === 'running' && !c.replacing)).toBe(true);
    expect(status.clusters.map((c) => [c.name, c.state, c.objects])).toEqual([
      ['ap', 'synced', 3],
      ['eu', 'synced', 3],
      ['us', 'synced', 4],
    ]);
  });

  it('a cluster that leaves is torn down and its objects leave as deletes saying cluster-removed; one that joins is listed', async () => {
    fleet = await Fleet.start(['a', 'b'], 2);
    const inf = podsOf(fleet);
    const events = collect(inf);
    await inf.whenSynced({ timeout: 10_000 });
    await waitFor(() => fleet?.server('b').stats.watchesOpen === 1, 'the watch of b');
    events.length = 0;

    fleet.drop('b');
    expect(events.map((e) => [e.type, e.key, e.type === 'delete' && e.reason]).sort()).toEqual([
      ['delete', 'b/default/b-p0', 'cluster-removed'],
      ['delete', 'b/default/b-p1', 'cluster-removed'],
    ]);
    expect(inf.store.byIndex('cluster', 'b')).toEqual([]);
    expect(contents(inf)).toEqual(fleet.union());
    await waitFor(() => fleet?.server('b').stats.watchesOpen === 0, 'b to have no watch open');

    events.length = 0;
    await fleet.add('c', 1);
    await inf.whenSynced({ timeout: 10_000 });
    expect(events.map((e) => [e.type, e.key])).toEqual([['add', 'c/default/c-p0']]);
    expect(contents(inf)).toEqual(fleet.union());
    // Re-publishing the same clusters (fresh KubeConfig objects) changes nothing.
    const watches = fleet.server('a').stats.watchesStarted;
    const requests = fleet.server('a').stats.requests;
    fleet.publish();
    // A change made after it reaches the cache through the watch that was already open; a restarted informer would
    // have listed again by then.
    await fleet.server('a').create('v1/pods', pod('after'));
    await waitFor(() => events.length === 2, 'the new pod');
    expect(events.map((e) => [e.type, e.key])).toEqual([['add', 'c/default/c-p0'], ['add', 'a/default/after']]);
    expect(fleet.server('a').stats.requests).toBe(requests);
    expect(fleet.server('a').stats.watchesStarted).toBe(watches);
  });

  it('a cluster whose KubeConfig changes is listed anew and takes over once synced, announcing only what differs', async () => {
    fleet = await Fleet.start(['x'], 0);
    const old = fleet.server('x');
    await old.create('v1/pods', pod('same'));
    await old.create('v1/pods', pod('gone'));
    const inf = podsOf(fleet);
    const events = collect(inf);
    await inf.whenSynced({ timeout: 10_000 });
    events.length = 0;

    // The "same" cluster moved to a server where one pod is missing and one is new.
    const moved = await startApiServer({ port: 0 });
    try {
      await moved.create('v1/pods', pod('same'));
      await moved.create('v1/pods', pod('new'));
      fleet.provider.next([{ name: 'x', kubeConfig: moved.kubeConfig() }]);
      expect(events).toEqual([]);
      await waitFor(() => events.length >= 3, 'the take-over');
      const byKey = new Map(events.map((e) => [e.key, e]));
      const gone = byKey.get('x/default/gone');
      expect(gone?.type === 'delete' && gone.reason === 'deleted' && gone.obj instanceof DeletedFinalStateUnknown).toBe(true);
      expect(byKey.get('x/default/new')?.type).toBe('add');
      // The same name on another server is another object (another uid): a delete and an add.
      expect(events.filter((e) => e.key === 'x/default/same').map((e) => e.type)).toEqual(['delete', 'add']);
      expect(inf.store.listKeys().sort()).toEqual(['x/default/new', 'x/default/same']);
      await waitFor(() => old.stats.watchesOpen === 0, 'the old connection to close');
    } finally {
      await moved.close();
    }
  });

  it('an unreachable cluster does not hold up the others, is reported by name, and keeps its objects (stale) until it answers again', async () => {
    fleet = await Fleet.start(['up', 'down'], 2);
    fleet.server('down').stop();
    const inf = podsOf(fleet, { unreachableAfterMs: 300 });
    const errors: Error[] = [];
    subscriptions.push(inf.errors$.subscribe((e) => errors.push(e)));
    collect(inf);
    await inf.whenSynced({ timeout: 10_000 });
    const status = await firstValueFrom(inf.status$);
    expect(status.clusters.map((c) => [c.name, c.state])).toEqual([
      ['down', 'unreachable'],
      ['up', 'synced'],
    ]);
    expect(inf.store.byIndex('cluster', 'up')).toHaveLength(2);
    const err = errors.find((e) => e instanceof ClusterError && e.cluster === 'down');
    expect(err?.cause).toBeInstanceOf(ConnectionError);

    await fleet.server('down').restart();
    await waitFor(() => inf.store.byIndex('cluster', 'down').length === 2, 'down to be listed once back');
    await firstValueFrom(inf.status$.pipe(filter((s) => s.clusters.every((c) => c.state === 'synced'))));

    // Synced, then away: with 'keep' the objects stay.
    fleet.server('down').stop();
    await firstValueFrom(inf.status$.pipe(filter((s) => s.clusters.find((c) => c.name === 'down')?.state === 'unreachable')));
    expect(inf.store.byIndex('cluster', 'down')).toHaveLength(2);
    expect(contents(inf)).toEqual(fleet.union());
  });

  it("with whileUnreachable 'drop', an unreachable cluster's objects leave (cluster-unreachable) and come back as adds", async () => {
    fleet = await Fleet.start(['a', 'b'], 2);
    const inf = podsOf(fleet, { unreachableAfterMs: 200, whileUnreachable: 'drop' });
    const events = collect(inf);
    await inf.whenSynced({ timeout: 10_000 });
    events.length = 0;
    fleet.server('b').stop();
    await waitFor(() => events.length === 2, 'the drop');
    expect(events.every((e) => e.type === 'delete' && e.reason === 'cluster-unreachable' && e.cluster === 'b')).toBe(true);
    expect(inf.store.byIndex('cluster', 'b')).toEqual([]);
    expect(inf.store.byIndex('cluster', 'a')).toHaveLength(2);
    events.length = 0;
    await fleet.server('b').restart();
    await waitFor(() => events.length === 2, 'the objects to come back');
    expect(events.every((e) => e.type === 'add' && e.cluster === 'b')).toBe(true);
    expect(contents(inf)).toEqual(fleet.union());
  });

  it('refused credentials are reported as a ClusterError whose cause is the 401, and the cluster counts as unreachable', async () => {
    fleet = await Fleet.start(['open'], 1);
    const locked = await startApiServer({ port: 0, token: 'right' });
    try {
      const wrong = locked.kubeConfig();
      wrong.users[0] = { ...wrong.users[0], name: wrong.users[0]?.name ?? 'u', token: 'wrong' };
      fleet.provider.next([...fleet.provider.value, { name: 'locked', kubeConfig: wrong }]);
      const inf = podsOf(fleet, { unreachableAfterMs: 200 });
      const errors: Error[] = [];
      subscriptions.push(inf.errors$.subscribe((e) => errors.push(e)));
      collect(inf);
      await inf.whenSynced({ timeout: 10_000 });
      const refused = errors.find((e): e is ClusterError => e instanceof ClusterError && isUnauthorized(e.cause));
      expect(refused?.cluster).toBe('locked');
      expect(refused?.message).toMatch(/^cluster "locked": /);
      expect(inf.store.size).toBe(1);
    } finally {
      await locked.close();
    }
  });

  it('a late subscriber and a cluster view get the cache as initial adds; a view sees only its cluster', async () => {
    fleet = await Fleet.start(['a', 'b'], 2);
    const inf = podsOf(fleet);
    collect(inf);
    await inf.whenSynced({ timeout: 10_000 });
    const late = collect(inf);
    expect(late).toHaveLength(4);
    const view = inf.cluster('b');
    const seen: ClusterEvent<V1Pod>[] = [];
    subscriptions.push(view.subscribe((e) => seen.push(e)));
    expect(seen.map((e) => e.key).sort()).toEqual(['b/default/b-p0', 'b/default/b-p1']);
    expect(view.store.getByKey('default/b-p0')?.metadata?.name).toBe('b-p0');
    expect(view.store.keyOf(view.store.getByKey('default/b-p0') as V1Pod)).toBe('default/b-p0');
    expect((await firstValueFrom(view.status$)).synced).toBe(true);
    await fleet.server('a').create('v1/pods', pod('only-a'));
    await fleet.server('b').create('v1/pods', pod('only-b'));
    await waitFor(() => seen.length === 3, 'the view to see b');
    expect(seen.at(-1)?.key).toBe('b/default/only-b');
    // A cluster not present: an empty store, not synced.
    const absent = inf.cluster('nowhere');
    expect(absent.store.list()).toEqual([]);
    expect((await firstValueFrom(absent.status$)).synced).toBe(false);
  });

  it('whenSynced names the clusters still syncing when it gives up, and rejects when not running', async () => {
    fleet = await Fleet.start(['ok'], 1);
    const inf = podsOf(fleet);
    await expect(inf.whenSynced()).rejects.toMatchObject({ reason: 'not-running' });
    const silent = await startApiServer({ port: 0 });
    try {
      silent.faults.inject({ type: 'stall' }, { verb: 'list' });
      fleet.provider.next([...fleet.provider.value, { name: 'slow', kubeConfig: silent.kubeConfig() }]);
      collect(inf);
      // The wait below gives up after 300 ms, which a loaded machine can take to list even the cluster that answers.
      await firstValueFrom(inf.status$.pipe(filter((s) => s.clusters.find((c) => c.name === 'ok')?.state === 'synced')));
      const err = await inf.whenSynced({ timeout: 300 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CacheSyncError);
      expect((err as CacheSyncError).unsynced).toEqual(['slow']);
      expect((err as CacheSyncError).synced).toEqual(['ok']);
    } finally {
      await silent.close();
    }
  });

  it('lives while anything subscribes: the last one leaving ends every cluster, the provider and waits; a later one starts afresh (LT-20, LT-21)', async () => {
    fleet = await Fleet.start(['a', 'b'], 1);
    const silent = await startApiServer({ port: 0 });
    try {
      silent.faults.inject({ type: 'stall' }, { verb: 'list' });
      const inf = podsOf(fleet);
      const all = inf.subscribe();
      const view = inf.cluster('a').subscribe();
      await inf.whenSynced({ timeout: 10_000 });
      const f = fleet;
      await waitFor(() => f.server('a').stats.watchesOpen === 1 && f.server('b').stats.watchesOpen === 1, 'a watch on each cluster');
      // A cluster that never lists: a wait begun now is still pending when the last subscriber leaves.
      f.provider.next([...f.provider.value, { name: 'slow', kubeConfig: silent.kubeConfig() }]);
      const waiting = inf.whenSynced();
      all.unsubscribe();
      // The view alone keeps it running.
      expect((await firstValueFrom(inf.status$)).state).toBe('running');
      expect(inf.store.size).toBe(2);
      view.unsubscribe();
      await expect(waiting).rejects.toMatchObject({ reason: 'stopped' });
      expect(f.provider.observed).toBe(false);
      expect(await firstValueFrom(inf.status$)).toMatchObject({ state: 'idle', synced: false, clusters: [] });
      expect(inf.store.size).toBe(0);
      await waitFor(() => f.server('a').stats.watchesOpen === 0 && f.server('b').stats.watchesOpen === 0, 'every watch to close');

      f.provider.next(f.provider.value.filter((c) => c.name !== 'slow'));
      const started = f.server('a').stats.watchesStarted;
      const events = collect(inf);
      await inf.whenSynced({ timeout: 10_000 });
      expect(events.map((e) => [e.type, e.key, e.type === 'add' && e.isInInitialList]).sort()).toEqual([
        ['add', 'a/default/a-p0', true],
        ['add', 'b/default/b-p0', true],
      ]);
      await waitFor(() => f.server('a').stats.watchesStarted > started, 'a new watch on a');
    } finally {
      await silent.close();
    }
  });

  it('a provider that completes keeps its last set for good: the informer runs on (MC-1)', async () => {
    fleet = await Fleet.start(['a'], 1);
    const inf = multiClusterInformer(of(fleet.provider.value), (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: () => {} });
    let completed = false;
    subscriptions.push(inf.subscribe({ complete: () => (completed = true) }));
    await inf.whenSynced({ timeout: 10_000 });
    await fleet.server('a').create('v1/pods', pod('later'));
    await waitFor(() => inf.store.getByKey('a/default/later'), 'the later pod');
    expect(completed).toBe(false);
    // With no cluster at all, too.
    const none = multiClusterInformer(of([]), (c) => kubeSource(c.kubeConfig, 'v1/pods'));
    subscriptions.push(none.subscribe({ complete: () => (completed = true) }));
    await none.whenSynced();
    expect([completed, (await firstValueFrom(none.status$)).state]).toEqual([false, 'running']);
  });

  it("with fifo: 'ordered' each cluster's relist is applied whole before its events are merged (PF-1, PF-5)", async () => {
    fleet = await Fleet.start(['eu', 'us'], 3);
    const inf = podsOf(fleet, { fifo: 'ordered' });
    // At each initial add, the store already holds that cluster's whole first list.
    const held: number[] = [];
    subscriptions.push(inf.subscribe((e) => held.push(inf.store.byIndex('cluster', e.cluster).length)));
    await inf.whenSynced({ timeout: 10_000 });
    expect(contents(inf)).toEqual(fleet.union());
    expect(held).toEqual([3, 3, 3, 3, 3, 3]);
  });

  it('checks its options up front', () => {
    const f = { subscribe: () => undefined } as never;
    const src = () => undefined as never;
    expect(() => multiClusterInformer(f, src, { whileUnreachable: 'forget' as never })).toThrow(/whileUnreachable.*'keep' or 'drop'.*"forget"/);
    expect(() => multiClusterInformer(f, src, { unreachableAfterMs: -1 })).toThrow(/unreachableAfterMs.*-1/);
    expect(() => multiClusterInformer(f, src, { initialList: 'all' as never })).toThrow(/initialList/);
    expect(() => multiClusterInformer(f, src, { fifo: 'inOrder' as never })).toThrow(/fifo must be 'perKey' or 'ordered', got "inOrder"/);
    expect(() => multiClusterInformer(f, src, { indexers: { cluster: () => [] } })).toThrow(/cluster/);
    expect(() => multiClusterInformer(f, src, { unreachableAfter: 5 } as never)).toThrow(/unknown option "unreachableAfter"/);
    // Resync belongs to handlers, which a multi-cluster informer does not take (LT-24).
    expect(() => multiClusterInformer(f, src, { resyncPeriod: 1_000 } as never)).toThrow(/unknown option "resyncPeriod"/);
    // Index and key functions are checked before any cluster joins, as one cluster's store would check them.
    expect(() => multiClusterInformer(f, src, { keyFunc: 'name' as never })).toThrow(/keyFunc/);
    expect(() => multiClusterInformer(f, src, { indexers: { app: 'label' as never } })).toThrow(/app/);
    expect(() => multiClusterInformer(f, src, { transform: {} as never })).toThrow(/transform must be a function/);
    // The per-cluster informers' lag bound (HI-58) is an informer option like the others.
    expect(() => multiClusterInformer(f, src, { maxLagMs: 0 })).toThrow(/maxLagMs/);
    expect(() => multiClusterInformer(f, src, { maxLagMs: 60_000 })).not.toThrow();
    expect(() => multiClusterInformer({} as never, src)).toThrow(/clusters must be an Observable/);
    expect(() => multiClusterInformer(f, 'v1/pods' as never)).toThrow(/source must be a function/);
  });
});
