import { KubeConfig } from '@kubernetes/client-node';
import { BehaviorSubject, Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ControllerSource } from '../../src/controller/types.js';
import { multiClusterController } from '../../src/multicluster/multiClusterController.js';
import type { Cluster } from '../../src/multicluster/types.js';
import type { KubeObject } from '../../src/store/types.js';
import { memorySource, obj, type MemorySource } from '../controller/memorySource.js';
import { deferred, waitFor } from '../helpers/waitFor.js';

// The fleet's sources in memory: no API server, exact control of sync and of every event.

function kc(user = 'u'): KubeConfig {
  const k = new KubeConfig();
  k.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }], users: [{ name: user }], contexts: [{ name: 'x', cluster: 'c', user }], currentContext: 'x' });
  return k;
}

/** A shared source whose `status$` subscriptions are counted. */
function counted(src: MemorySource<KubeObject>): { source: ControllerSource<KubeObject>; live: () => number } {
  let live = 0;
  const status$ = new Observable<{ synced: boolean }>((s) => {
    live++;
    const sub = src.status$.subscribe(s);
    return () => {
      live--;
      sub.unsubscribe();
    };
  });
  const source = Object.assign(new Observable((s) => src.subscribe(s as never)), { name: 'hub', store: src.store, status$ }) as unknown as ControllerSource<KubeObject>;
  return { source, live: () => live };
}

/** A cold provider of `set`, as one a user writes may be (each subscription reads the clusters again; the built-in ones are shared), counting its subscriptions. */
function countedProvider(set: readonly Cluster[]): { provider: Observable<readonly Cluster[]>; subscribed: () => number; live: () => number } {
  let subscribed = 0;
  let live = 0;
  const provider = new Observable<readonly Cluster[]>((s) => {
    subscribed++;
    live++;
    s.next(set);
    return () => live--;
  });
  return { provider, subscribed: () => subscribed, live: () => live };
}

describe('the fleet sources of a multi-cluster controller', () => {
  it('let go of a cluster that never synced when it leaves, and of every cluster when a run ends (LT-10)', async () => {
    const hub = memorySource<KubeObject>('hub'); // never syncs
    const { source, live } = counted(hub);
    const provider = new BehaviorSubject<readonly Cluster[]>([{ name: 'a', kubeConfig: kc() }]);
    const c = multiClusterController({ clusters: provider, for: source, reconcile: () => undefined });
    const sub = c.subscribe();
    const perRun = live();
    expect(perRun).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) {
      provider.next([]);
      provider.next([{ name: 'a', kubeConfig: kc() }]);
    }
    expect(live()).toBe(perRun);
    sub.unsubscribe();
    await c.shutdown();
    await waitFor(() => live() === 0, 'no status$ subscription left');
  });

  it('leave no status$ subscription behind across runs of a controller whose clusters never sync (LT-10)', async () => {
    const hub = memorySource<KubeObject>('hub');
    const { source, live } = counted(hub);
    const provider = new BehaviorSubject<readonly Cluster[]>([{ name: 'a', kubeConfig: kc() }, { name: 'b', kubeConfig: kc() }]);
    const c = multiClusterController({ clusters: provider, for: source, reconcile: () => undefined });
    for (let i = 0; i < 10; i++) {
      const sub = c.subscribe();
      expect(live()).toBeGreaterThan(0);
      sub.unsubscribe();
      await waitFor(() => c.status().state === 'idle' || c.status().state === 'stopped', 'the run to end', 10_000, { describe: () => c.status().state });
    }
    await c.shutdown();
    await waitFor(() => live() === 0, 'no status$ subscription left');
  });

  it('reconcile what a shared source without store.list() held before it synced (LT-11)', async () => {
    const hub = memorySource<KubeObject>('hub');
    const noList = Object.assign(new Observable((s) => hub.subscribe(s as never)), {
      name: 'hub',
      store: {
        getByKey: (k: string) => hub.store.getByKey(k),
        keyOf: (o: KubeObject) => {
          if (o.metadata?.name === 'keyless') throw new Error('no key here');
          return hub.store.keyOf(o);
        },
      },
      status$: hub.status$,
    }) as unknown as ControllerSource<KubeObject>;
    const provider = new BehaviorSubject<readonly Cluster[]>([{ name: 'a', kubeConfig: kc() }]);
    const seen: string[] = [];
    const errors: Error[] = [];
    const c = multiClusterController({
      clusters: provider,
      for: noList,
      reconcile: (_o, ctx) => void seen.push(`${ctx.cluster.name}/${ctx.key}`),
      onError: (err) => errors.push(err),
    });
    const sub = c.subscribe();
    hub.upsert(obj('keyless'));
    hub.upsert(obj('early'));
    hub.upsert(obj('gone-early'));
    hub.remove('default/gone-early');
    hub.sync();
    hub.upsert(obj('late'));
    await waitFor(() => seen.includes('a/default/late') && seen.includes('a/default/early'), 'early and late reconciled', 10_000, { describe: () => seen.join(', ') });
    expect(seen).not.toContain('a/default/gone-early');
    // An object whose key cannot be read is reported, naming its cluster, and waits for its next change.
    expect(errors.map((e) => e.message)).toContainEqual(expect.stringMatching(/cluster "a": its hub gave an object with no key/));
    expect(seen.filter((k) => k.includes('keyless'))).toEqual([]);
    sub.unsubscribe();
    await c.shutdown();
  });

  it('reconcile once what a synced shared source without store.list() gives as it is subscribed (LT-11)', async () => {
    const hub = memorySource<KubeObject>('hub');
    hub.upsert(obj('there'));
    hub.sync();
    const noList = Object.assign(new Observable((s) => hub.subscribe(s as never)), {
      name: 'hub',
      store: { getByKey: (k: string) => hub.store.getByKey(k), keyOf: (o: KubeObject) => hub.store.keyOf(o) },
      status$: hub.status$,
    }) as unknown as ControllerSource<KubeObject>;
    const provider = new BehaviorSubject<readonly Cluster[]>([{ name: 'a', kubeConfig: kc() }]);
    const seen: string[] = [];
    const c = multiClusterController({ clusters: provider, for: noList, reconcile: (_o, ctx) => void seen.push(`${ctx.cluster.name}/${ctx.key}`) });
    const sub = c.subscribe();
    await waitFor(() => seen.length > 0 && c.status().inFlight === 0 && c.status().queueDepth === 0, 'there reconciled');
    expect(seen).toEqual(['a/default/there']);
    sub.unsubscribe();
    await c.shutdown();
  });

  it('reconcile a synced shared source\'s objects once in a cluster that joins, not once per replay (LT-5)', async () => {
    const hub = memorySource<KubeObject>('hub');
    hub.upsert(obj('x'));
    hub.sync();
    const provider = new BehaviorSubject<readonly Cluster[]>([{ name: 'a', kubeConfig: kc() }]);
    const seen: string[] = [];
    const c = multiClusterController({ clusters: provider, for: hub, reconcile: (_o, ctx) => void seen.push(`${ctx.cluster.name}/${ctx.key}`) });
    const sub = c.subscribe();
    await waitFor(() => seen.length === 1, 'a reconciled');
    provider.next([{ name: 'a', kubeConfig: kc() }, { name: 'b', kubeConfig: kc() }]);
    await waitFor(() => seen.length > 1 && c.status().inFlight === 0 && c.status().queueDepth === 0, 'b reconciled', 10_000, { describe: () => seen.join(', ') });
    expect(seen).toEqual(['a/default/x', 'b/default/x']);
    sub.unsubscribe();
    await c.shutdown();
  });

  it('run again with the new KubeConfig a reconcile in flight at the change that ignored the abort and returned (MC-13, LT-12)', async () => {
    const hub = memorySource<KubeObject>('hub');
    hub.upsert(obj('x'));
    hub.sync();
    const provider = new BehaviorSubject<readonly Cluster[]>([{ name: 'a', kubeConfig: kc('old') }]);
    const users: string[] = [];
    const release = deferred();
    const c = multiClusterController({
      clusters: provider,
      for: hub,
      reconcile: async (_o, ctx) => {
        users.push(ctx.cluster.kubeConfig.getCurrentUser()?.name ?? '');
        if (users.length === 1) await release.promise; // ends normally, whatever the signal says
      },
    });
    const outcomes: string[] = [];
    const sub = c.subscribe((o) => outcomes.push(`${o.type}:${o.key}`));
    await waitFor(() => users.length === 1, 'the first reconcile running');
    provider.next([{ name: 'a', kubeConfig: kc('new') }]);
    release.resolve();
    await waitFor(() => users.length === 2, 'the key run again', 10_000, { describe: () => users.join(', ') });
    expect(users).toEqual(['old', 'new']);
    await waitFor(() => outcomes.length === 1, 'the outcome of the second run');
    // The attempt made with the old KubeConfig is withdrawn: only the new one's outcome is emitted.
    expect(outcomes).toEqual(['reconciled:a/default/x']);
    sub.unsubscribe();
    await c.shutdown();
  });

  it('do not report an owns entry as matching nothing when the first owned object seen has another owner (LT-13)', async () => {
    const parents = memorySource<KubeObject>('parents');
    parents.upsert(obj('p'));
    const children = memorySource<KubeObject>('children');
    children.upsert(obj('c-other', { owner: { kind: 'ReplicaSet', name: 'rs', apiVersion: 'apps/v1' } }));
    children.upsert(obj('c-mine', { owner: { kind: 'Parent', name: 'p' } }));
    parents.sync();
    children.sync();
    const errors: string[] = [];
    const provider = new BehaviorSubject<readonly Cluster[]>([]);
    const c = multiClusterController({
      clusters: provider,
      for: parents,
      owns: [{ source: children, kind: 'Parent' }],
      reconcile: () => undefined,
      onError: (e) => errors.push(e.message),
    });
    const sub = c.subscribe(() => {});
    provider.next([{ name: 'a', kubeConfig: kc() }]);
    await waitFor(() => c.status().succeeded.success >= 1, 'p reconciled');
    children.upsert(obj('c-later', { owner: { kind: 'ReplicaSet', name: 'rs', apiVersion: 'apps/v1' } }));
    sub.unsubscribe();
    await c.shutdown();
    expect(errors).toEqual([]);
  });
});

describe("a multi-cluster controller's provider", () => {
  it('is read once for every entry of a run, each entry still hears of every cluster, and is let go of when the run ends', async () => {
    const parents = memorySource<KubeObject>('parents');
    parents.upsert(obj('p'));
    const children = memorySource<KubeObject>('children');
    children.upsert(obj('c', { owner: { kind: 'Parent', name: 'p' } }));
    const hub = memorySource<KubeObject>('hub');
    for (const src of [parents, children, hub]) src.sync();
    const { provider, subscribed, live } = countedProvider([{ name: 'a', kubeConfig: kc() }]);
    const seen: string[] = [];
    const c = multiClusterController({
      clusters: provider,
      for: parents,
      owns: [{ source: children, kind: 'Parent' }],
      watches: [{ source: hub, map: () => 'default/p' }],
      reconcile: (_o, ctx) => void seen.push(`${ctx.cluster.name}/${ctx.key}`),
    });
    const idle = (): boolean => seen.length > 0 && c.status().inFlight === 0 && c.status().queueDepth === 0;
    const sub = c.subscribe();
    await waitFor(idle, 'p reconciled');
    expect(subscribed()).toBe(1);
    // The owns and watches entries, which joined the reading after the `for` entry, know of cluster a too.
    const before = seen.length;
    children.upsert(obj('c', { owner: { kind: 'Parent', name: 'p' }, labels: { changed: 'yes' } }));
    await waitFor(() => seen.length > before && idle(), 'p reconciled for its owned object');
    const owned = seen.length;
    hub.upsert(obj('h'));
    await waitFor(() => seen.length > owned && idle(), 'p reconciled for the watched object');
    expect(new Set(seen)).toEqual(new Set(['a/default/p']));
    sub.unsubscribe();
    await c.shutdown();
    expect([subscribed(), live()]).toEqual([1, 0]);
  });

  it('is shared by a run subscribed while the last one drains, which keeps reading it when the last one lets go (MC-15)', async () => {
    const parents = memorySource<KubeObject>('parents');
    parents.upsert(obj('p'));
    const children = memorySource<KubeObject>('children');
    for (const src of [parents, children]) src.sync();
    const { provider, subscribed, live } = countedProvider([{ name: 'a', kubeConfig: kc() }]);
    const release = deferred();
    const seen: string[] = [];
    const c = multiClusterController({
      clusters: provider,
      for: parents,
      owns: [{ source: children, kind: 'Parent' }],
      reconcile: async (_o, ctx) => {
        seen.push(`${ctx.cluster.name}/${ctx.key}`);
        if (seen.length === 1) await release.promise;
      },
    });
    const first = c.subscribe();
    await waitFor(() => seen.length === 1, 'the first run reconciling');
    first.unsubscribe(); // it drains, waiting for its reconcile, and holds its sources meanwhile
    const second = c.subscribe();
    // The reading the first run still holds is the provider's one reading: the second is given its latest set.
    expect([subscribed(), live()]).toEqual([1, 1]);
    release.resolve();
    await waitFor(() => c.status().inFlight === 0 && seen.length === 2, 'the first run ended and the second reconciled p');
    expect(seen).toEqual(['a/default/p', 'a/default/p']);
    expect(live()).toBe(1);
    second.unsubscribe();
    await c.shutdown();
    expect([subscribed(), live()]).toEqual([1, 0]);
  });
});

describe('the per-cluster metrics of a multi-cluster controller', () => {
  it('drop a cluster\'s group when it leaves, keep the others\', and start afresh when it comes back (LT-14)', async () => {
    const hub = memorySource<KubeObject>('hub');
    hub.upsert(obj('x'));
    hub.sync();
    const provider = new BehaviorSubject<readonly Cluster[]>([{ name: 'a', kubeConfig: kc() }, { name: 'b', kubeConfig: kc() }]);
    const c = multiClusterController({ clusters: provider, for: hub, reconcile: () => undefined });
    const sub = c.subscribe();
    const groups = () => c.status().groups ?? {};
    await waitFor(() => groups()['a']?.reconciles === 1 && groups()['b']?.reconciles === 1, 'both clusters counted');
    provider.next([{ name: 'b', kubeConfig: kc() }]);
    expect(Object.keys(groups())).toEqual(['b']);
    expect(groups()['b']).toEqual({ depth: 0, inFlight: 0, reconciles: 1, errors: 0 });
    // The controller's own counters are the fleet's and keep what a departed cluster did.
    expect(c.status().succeeded.success).toBe(2);
    provider.next([{ name: 'a', kubeConfig: kc() }, { name: 'b', kubeConfig: kc() }]);
    await waitFor(() => (groups()['a']?.reconciles ?? 0) > 0 && c.status().inFlight === 0 && c.status().queueDepth === 0, 'a reconciled again');
    // a's count holds only what it did since it came back: one reconcile of its one object.
    expect(groups()['a']?.reconciles).toBe(1);
    expect(c.status().succeeded.success).toBe(3);
    expect(groups()['b']?.reconciles).toBe(1);
    sub.unsubscribe();
    await c.shutdown();
  });

  it('withdraw a reconcile that returns after its cluster left: no outcome, no count (LT-12, LT-14)', async () => {
    const hub = memorySource<KubeObject>('hub');
    hub.upsert(obj('x'));
    hub.sync();
    const provider = new BehaviorSubject<readonly Cluster[]>([{ name: 'a', kubeConfig: kc() }]);
    const release = deferred();
    let started = 0;
    const c = multiClusterController({
      clusters: provider,
      for: hub,
      reconcile: async () => {
        started++;
        await release.promise; // ends normally, whatever the signal says
      },
    });
    const outcomes: string[] = [];
    const sub = c.subscribe((o) => outcomes.push(`${o.type}:${o.key}`));
    await waitFor(() => started === 1, 'the reconcile running');
    provider.next([]);
    release.resolve();
    await waitFor(() => c.status().inFlight === 0 && c.status().queueDepth === 0, 'the reconcile to end');
    expect(outcomes).toEqual([]);
    expect(c.status().succeeded.success).toBe(0);
    expect(c.status().groups).toEqual({});
    expect(started).toBe(1);
    sub.unsubscribe();
    await c.shutdown();
  });
});
