import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { from as asyncFrom } from 'ix/asynciterable';
import type { V1Pod } from '@kubernetes/client-node';
import { informer, type Informer } from '../../src/informer/informer.js';
import { BufferOverflowError } from '../../src/informer/BufferOverflowError.js';
import { HandlerError } from '../../src/informer/HandlerError.js';
import { CacheSyncError } from '../../src/informer/CacheSyncError.js';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import { kubeSource, type ListerWatcher } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

const fastBackoff = { backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } };

let server: ApiServer;
const lifetimes = new Lifetimes();

function podInformer(opts: Parameters<typeof informer<V1Pod>>[1] = {}): Informer<V1Pod> {
  return lifetimes.track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods'), { reflector: fastBackoff, ...opts }));
}

function names(inf: Informer<V1Pod>): string[] {
  return inf.store.listKeys().slice().sort();
}

function serverKeys(): string[] {
  return server
    .list('v1/pods')
    .map((p: V1Pod) => `${p.metadata?.namespace}/${p.metadata?.name}`)
    .sort();
}

beforeEach(async () => {
  server = await startApiServer({ port: 0, bookmarkIntervalMs: 200 });
});

afterEach(async () => {
  await lifetimes.end();
  await server.close();
});

describe('informer', () => {
  it('syncs the initial list into the store and announces each object as an initial add', async () => {
    for (let i = 0; i < 30; i++) await server.create('v1/pods', pod(`p${i}`));
    const inf = podInformer();
    const seen: InformerEvent<V1Pod>[] = [];
    inf.subscribe((e) => seen.push(e));
    expect(inf.status().synced).toBe(false);
    await inf.whenSynced({ timeout: 10_000 });
    expect(inf.status().synced).toBe(true);
    expect(names(inf)).toEqual(serverKeys());
    expect(seen).toHaveLength(30);
    expect(seen.every((e) => e.type === 'add' && e.isInInitialList)).toBe(true);
    expect(Object.isFrozen(inf.store.getByKey('default/p0'))).toBe(true);
  });

  it('caches listed objects with their apiVersion and kind, as watched ones come, though the server lists them without (P-15)', async () => {
    for (let i = 0; i < 3; i++) await server.create('v1/pods', pod(`t${i}`));
    const listed = (await (await fetch(`${server.url}/api/v1/pods`)).json()) as { items: Record<string, unknown>[] };
    expect(listed.items.map((o) => [o['apiVersion'], o['kind']])).toEqual([[undefined, undefined], [undefined, undefined], [undefined, undefined]]);
    const inf = podInformer();
    const added: V1Pod[] = [];
    inf.subscribe((e) => {
      if (e.type === 'add' && !e.isInInitialList) added.push(e.obj);
    });
    await inf.whenSynced({ timeout: 10_000 });
    await server.create('v1/pods', pod('watched'));
    await waitFor(() => added.length === 1, 'the watched add');
    const typeOf = (o: V1Pod | undefined) => [o?.apiVersion, o?.kind];
    expect(['default/t0', 'default/t1', 'default/t2', 'default/watched'].map((k) => typeOf(inf.store.getByKey(k)))).toEqual(Array(4).fill(['v1', 'Pod']));
    expect(Object.keys(inf.store.getByKey('default/t0') ?? {}).slice(0, 2)).toEqual(['apiVersion', 'kind']);
  });

  it('syncs from a streaming list (sendInitialEvents) and carries on watching on the same stream', async () => {
    for (let i = 0; i < 10; i++) await server.create('v1/pods', pod(`s${i}`));
    const inf = podInformer({ initialList: 'stream' });
    const seen: InformerEvent<V1Pod>[] = [];
    inf.subscribe((e) => seen.push(e));
    const modes = new Set<string>();
    let counters = { lists: 0, watches: 0 };
    inf.status$.subscribe((s) => {
      if (s.reflector?.state === 'listing') modes.add(s.reflector.mode);
      if (s.reflector) counters = s.reflector.counters;
    });
    inf.subscribe();
    await inf.whenSynced();
    expect(names(inf)).toEqual(serverKeys());
    expect(seen.every((e) => e.type === 'add' && e.isInInitialList)).toBe(true);
    await server.create('v1/pods', pod('after'));
    await waitFor(() => inf.store.getByKey('default/after'), 'a live event after the initial stream');
    expect([...modes]).toEqual(['stream']);
    expect(counters).toMatchObject({ lists: 1, watches: 1 });
    expect(server.stats.watchesStarted).toBe(1);
    expect(seen.at(-1)).toMatchObject({ type: 'add', isInInitialList: false });
  });

  it('applies each event to the store before emitting it, with the old object on updates', async () => {
    const inf = podInformer();
    const checks: string[] = [];
    inf.subscribe((e) => {
      const key = e.type === 'delete' ? 'default/a' : `${e.obj.metadata?.namespace}/${e.obj.metadata?.name}`;
      const cached = inf.store.getByKey(key);
      checks.push(`${e.type}:${e.type === 'delete' ? cached === undefined : cached === e.obj}`);
    });
    inf.subscribe();
    await inf.whenSynced();
    await server.create('v1/pods', pod('a', { labels: { v: '1' } }));
    await waitFor(() => inf.store.getByKey('default/a'), 'add');
    const updates: [string | undefined, string | undefined][] = [];
    inf.subscribe((e) => e.type === 'update' && updates.push([e.oldObj.metadata?.labels?.v, e.obj.metadata?.labels?.v]));
    await server.patch('v1/pods', 'default', 'a', { metadata: { labels: { v: '2' } } });
    await waitFor(() => updates.length === 1, 'update');
    await server.delete('v1/pods', 'default', 'a');
    await waitFor(() => checks.length === 3, 'delete');
    expect(checks).toEqual(['add:true', 'update:true', 'delete:true']);
    expect(updates).toEqual([['1', '2']]);
  });

  it('strips managedFields by default and runs the user transform once per object', async () => {
    await server.create('v1/pods', { ...pod('m'), metadata: { name: 'm', namespace: 'default', managedFields: [{ manager: 'x' }] } });
    let calls = 0;
    const inf = podInformer({
      transform: (p) => {
        calls++;
        return p;
      },
    });
    inf.subscribe();
    await inf.whenSynced();
    const cached = inf.store.getByKey('default/m') as V1Pod;
    expect(cached.metadata?.managedFields).toBeUndefined();
    expect(calls).toBe(1);
  });

  it('reports a throwing transform and skips only that object', async () => {
    await server.create('v1/pods', pod('good'));
    await server.create('v1/pods', pod('bad'));
    const inf = podInformer({
      transform: (p) => {
        if (p.metadata?.name === 'bad') throw new Error('nope');
        return p;
      },
    });
    const errors: Error[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    inf.subscribe();
    await inf.whenSynced();
    expect(names(inf)).toEqual(['default/good']);
    expect(errors.some((e) => /nope/.test(String(e.message) + String((e as { cause?: Error }).cause?.message)))).toBe(true);
  });

  it('reports bad watch input as DecodeErrors and loses nothing: garbage resumes the watch, an unusable event is skipped', async () => {
    const inf = podInformer();
    const errors: Error[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    let watches = 0;
    inf.status$.subscribe((s) => (watches = s.reflector?.counters.watches ?? watches));
    inf.subscribe();
    await inf.whenSynced();
    // A line that is not JSON: the stream cannot be trusted, so the watch resumes from the last good resourceVersion.
    server.faults.inject({ type: 'malformedLine', line: '{"type":"ADDED","obj' }, { verb: 'watch' });
    await server.create('v1/pods', pod('one'));
    await waitFor(() => inf.store.getByKey('default/one'), 'the event after the garbage line');
    expect(watches).toBe(2);
    // A well-formed event with no name would be replayed on every resume: it is reported and skipped instead.
    server.faults.inject({ type: 'malformedLine', line: '{"type":"ADDED","object":{"kind":"Pod","metadata":{"namespace":"default"}}}' }, { verb: 'watch' });
    await server.create('v1/pods', pod('two'));
    await waitFor(() => inf.store.getByKey('default/two'), 'the event after the unusable one');
    expect(watches).toBe(2);
    expect(errors.map((e) => e.name)).toEqual(['DecodeError', 'DecodeError']);
    expect(names(inf)).toEqual(serverKeys());
  });

  it('syncs a list that holds an object without a name, reporting that object as a KeyError', async () => {
    await server.create('v1/pods', pod('fine'));
    const real = kubeSource(server.kubeConfig(), 'v1/pods');
    // The simulator refuses nameless objects, so the bad item is added to what it answered.
    const withBadItem: ListerWatcher<V1Pod> = {
      list: async (o, signal) => {
        const page = await real.list(o, signal);
        return { ...page, items: [...page.items, { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default' } }] };
      },
      watch: (o, signal) => real.watch(o, signal),
    };
    const inf = lifetimes.track(informer<V1Pod>(withBadItem, { reflector: fastBackoff }));
    const errors: Error[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    inf.subscribe();
    await inf.whenSynced();
    expect(names(inf)).toEqual(['default/fine']);
    expect(errors.map((e) => e.name)).toEqual(['KeyError']);
  });

  it('whenSynced rejects when the last subscriber leaves first, and when nobody subscribed (LT-81)', async () => {
    server.stop(); // unreachable: the informer can never sync
    const inf = podInformer();
    const sub = inf.subscribe();
    const waiting = inf.whenSynced();
    sub.unsubscribe();
    await expect(waiting).rejects.toMatchObject({ name: 'CacheSyncError', reason: 'stopped' });
    await expect(inf.whenSynced()).rejects.toMatchObject({ name: 'CacheSyncError', reason: 'not-running' });
    await expect(inf.whenSynced()).rejects.toBeInstanceOf(CacheSyncError);
    await server.restart();
    // A new subscriber starts a new lifetime that syncs.
    inf.subscribe();
    await inf.whenSynced();
    expect(inf.status().state).toBe('running');
  });

  it('unsubscribing the last subscriber ends every watch on the server (LT-80)', async () => {
    const inf = podInformer();
    const sub = inf.subscribe();
    await inf.whenSynced();
    await waitFor(() => server.stats.watchesOpen === 1, 'the watch to open');
    sub.unsubscribe();
    await waitFor(() => server.stats.watchesOpen === 0, 'the watch to close');
    sub.unsubscribe(); // idempotent
    expect(inf.status().state).toBe('idle');
  });

  it('treats a same-name object with a new UID as a delete then an add, even when learned by relist', async () => {
    await server.create('v1/pods', pod('r'));
    const inf = podInformer();
    const seen: string[] = [];
    inf.subscribe((e) => {
      if (e.type === 'delete') seen.push(`delete:${e.obj instanceof DeletedFinalStateUnknown ? 'tombstone' : 'obj'}`);
      else seen.push(`${e.type}:${e.obj.metadata?.uid}`);
    });
    inf.subscribe();
    await inf.whenSynced();
    const oldUid = inf.store.getByKey('default/r')?.metadata?.uid;
    // Replace the pod while the informer cannot see it, and drop the history so it must relist.
    server.stop();
    await server.delete('v1/pods', 'default', 'r');
    const created = (await server.create('v1/pods', pod('r'))) as V1Pod;
    server.compact();
    await server.restart();
    await waitFor(() => inf.store.getByKey('default/r')?.metadata?.uid === created.metadata?.uid, 'the new pod after relist');
    expect(seen).toEqual([`add:${oldUid}`, 'delete:tombstone', `add:${created.metadata?.uid}`]);
  });
});

describe('handlers', () => {
  it('gives a late handler an add for every cached object, then live events, and tracks its own sync', async () => {
    for (let i = 0; i < 5; i++) await server.create('v1/pods', pod(`p${i}`));
    const inf = podInformer();
    inf.subscribe();
    await inf.whenSynced();
    const gate = deferred();
    const got: string[] = [];
    const reg = inf.addHandler({
      add: async (p, initial) => {
        got.push(`add:${p.metadata?.name}:${initial}`);
        await gate.promise;
      },
    });
    expect(reg.hasSynced()).toBe(false);
    await server.create('v1/pods', pod('late'));
    await waitFor(() => reg.depth === 5, 'late add buffered behind the initial adds');
    expect(reg.hasSynced()).toBe(false);
    gate.resolve();
    await waitFor(() => got.length === 6, 'all adds');
    expect(reg.hasSynced()).toBe(true);
    expect(got.slice(0, 5).sort()).toEqual(['add:p0:true', 'add:p1:true', 'add:p2:true', 'add:p3:true', 'add:p4:true']);
    expect(got[5]).toBe('add:late:false');
  });

  it('reports a throwing or rejecting handler with the failed event and keeps delivering', async () => {
    const inf = podInformer();
    const errors: Error[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    const added: string[] = [];
    inf.addHandler({
      add: (p) => {
        added.push(p.metadata?.name ?? '');
        if (p.metadata?.name === 'boom') throw new Error('sync boom');
        if (p.metadata?.name === 'reject') return Promise.reject(new Error('async boom'));
        return undefined;
      },
    });
    inf.subscribe();
    await inf.whenSynced();
    for (const n of ['boom', 'reject', 'fine']) await server.create('v1/pods', pod(n));
    await waitFor(() => added.length === 3, 'three adds');
    await waitFor(() => errors.length === 2, 'two handler errors');
    expect(errors.every((e) => e instanceof HandlerError)).toBe(true);
    let status: { errors: number; lastError: Error | undefined } | undefined;
    inf.status$.subscribe((s) => (status = s)).unsubscribe();
    expect(status?.errors).toBe(2);
    expect(status?.lastError).toBe(errors[1]);
    const failed = errors.map((e) => ((e as HandlerError<V1Pod>).event as { obj: V1Pod }).obj.metadata?.name);
    expect(failed).toEqual(['boom', 'reject']);
  });

  it('pauses a handler 10, 20, 40 ms after failures in a row, and not after a success (S-36)', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    for (const n of ['a', 'b', 'c']) await server.create('v1/pods', pod(n));
    const inf = podInformer({ scheduler, onError: () => {} });
    let failing = true;
    let calls = 0;
    inf.addHandler({
      add: () => {
        calls++;
        if (failing) throw new Error('boom');
      },
    });
    await inf.whenSynced();
    const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    const advanceTo = async (frame: number): Promise<number> => {
      scheduler.maxFrames = frame;
      scheduler.flush();
      await settle();
      return calls;
    };
    await waitFor(() => calls === 1, 'the first call');
    const t0 = scheduler.now();
    expect(await advanceTo(t0 + 9)).toBe(1);
    expect(await advanceTo(t0 + 10)).toBe(2);
    expect(await advanceTo(t0 + 29)).toBe(2);
    expect(await advanceTo(t0 + 30)).toBe(3);
    failing = false;
    await server.create('v1/pods', pod('d'));
    await waitFor(() => inf.store.getByKey('default/d'), 'd in the store');
    expect(await advanceTo(t0 + 69)).toBe(3);
    expect(await advanceTo(t0 + 70)).toBe(4);
    // That call succeeded: the next notification goes out without waiting on the clock.
    await server.create('v1/pods', pod('e'));
    await waitFor(() => calls === 5, 'the call after a success, with the virtual clock standing still');
  });

  it('never lets a slow handler delay the store or another handler', async () => {
    const inf = podInformer();
    const gate = deferred();
    const slow = inf.addHandler({ add: () => gate.promise, update: () => gate.promise });
    let fastCount = 0;
    inf.addHandler({ add: () => void fastCount++ });
    inf.subscribe();
    await inf.whenSynced();
    for (let i = 0; i < 20; i++) await server.create('v1/pods', pod(`s${i}`));
    await waitFor(() => fastCount === 20 && inf.store.listKeys().length === 20, 'fast handler and store');
    expect(slow.processed).toBe(0);
    expect(slow.depth).toBe(19); // one in the handler, the rest buffered
    gate.resolve();
    await waitFor(() => slow.processed === 20, 'slow handler catches up');
  });

  describe('buffer policies under a stuck handler', () => {
    async function churnOneKeySet(inf: Informer<V1Pod>, keys: number, rounds: number): Promise<void> {
      for (let k = 0; k < keys; k++) await server.create('v1/pods', pod(`k${k}`, { labels: { round: '0' } }));
      for (let r = 1; r <= rounds; r++) {
        for (let k = 0; k < keys; k++) await server.patch('v1/pods', 'default', `k${k}`, { metadata: { labels: { round: String(r) } } });
      }
      await waitFor(() => inf.store.getByKey(`default/k${keys - 1}`)?.metadata?.labels?.round === String(rounds), 'last update cached');
    }

    it('shows a growing backlog on status$', async () => {
      const inf = podInformer();
      const gate = deferred();
      const depths: number[] = [];
      inf.status$.subscribe((s) => depths.push(s.handlers[0]?.depth ?? 0));
      inf.addHandler({ add: () => gate.promise });
      for (let i = 0; i < 70; i++) await server.create('v1/pods', pod(`b${i}`));
      inf.subscribe();
      await inf.whenSynced();
      expect(depths).toContain(64);
      gate.resolve();
    });

    it('unbounded keeps every notification', async () => {
      const inf = podInformer();
      const gate = deferred();
      const reg = inf.addHandler({ add: () => gate.promise, update: () => gate.promise }, { buffer: 'unbounded' });
      inf.subscribe();
      await inf.whenSynced();
      await churnOneKeySet(inf, 5, 4);
      await waitFor(() => reg.depth === 5 + 5 * 4 - 1, 'all but the in-flight one buffered');
      gate.resolve();
    });

    it('coalesce byKey holds at most one entry per key and merges updates', async () => {
      const inf = podInformer();
      const gate = deferred();
      const updates: [string | undefined, string | undefined][] = [];
      const adds: string[] = [];
      const reg = inf.addHandler(
        {
          add: async (p) => {
            adds.push(`${p.metadata?.name}@${p.metadata?.labels?.round}`);
            await gate.promise;
          },
          update: (o, n) => void updates.push([o.metadata?.labels?.round, n.metadata?.labels?.round]),
        },
        { buffer: { coalesce: 'byKey' } },
      );
      inf.subscribe();
      await inf.whenSynced();
      await churnOneKeySet(inf, 5, 4);
      // k0's add is in flight; its updates merged into one; k1..k4 each merged add+updates into one add.
      expect(reg.depth).toBe(5);
      gate.resolve();
      await waitFor(() => reg.depth === 0 && reg.processed === 6, 'drained');
      expect(adds).toEqual(['k0@0', 'k1@4', 'k2@4', 'k3@4', 'k4@4']);
      expect(updates).toEqual([['0', '4']]);
    });

    it('coalesce byKey drops an add that was deleted while pending', async () => {
      const inf = podInformer();
      const gate = deferred();
      const seen: string[] = [];
      const reg = inf.addHandler(
        { add: async (p) => { seen.push(`add:${p.metadata?.name}`); await gate.promise; }, delete: () => void seen.push('delete') },
        { buffer: { coalesce: 'byKey' } },
      );
      inf.subscribe();
      await inf.whenSynced();
      await server.create('v1/pods', pod('first'));
      await server.create('v1/pods', pod('gone'));
      await server.delete('v1/pods', 'default', 'gone');
      await waitFor(() => inf.store.getByKey('default/gone') === undefined && inf.store.getByKey('default/first'), 'store');
      expect(reg.depth).toBe(0);
      gate.resolve();
      await waitFor(() => reg.processed === 1, 'drained');
      expect(seen).toEqual(['add:first']);
    });

    it('limit with dropOldest stays within the limit and reports each drop', async () => {
      const inf = podInformer();
      const gate = deferred();
      const errors: Error[] = [];
      inf.errors$.subscribe((e) => errors.push(e));
      const reg = inf.addHandler({ add: () => gate.promise, update: () => gate.promise }, { buffer: { limit: 3, overflow: 'dropOldest' } });
      inf.subscribe();
      await inf.whenSynced();
      await churnOneKeySet(inf, 5, 1);
      expect(reg.depth).toBe(3);
      const drops = errors.filter((e) => e instanceof BufferOverflowError);
      expect(drops).toHaveLength(10 - 1 - 3);
      expect((drops[0] as BufferOverflowError).droppedKey).toBe('default/k1');
      gate.resolve();
    });

    it("limit with overflow 'error' ends the registration", async () => {
      const inf = podInformer();
      const gate = deferred();
      const errors: Error[] = [];
      inf.errors$.subscribe((e) => errors.push(e));
      const reg = inf.addHandler({ add: () => gate.promise }, { buffer: { limit: 2, overflow: 'error' } });
      inf.subscribe();
      await inf.whenSynced();
      for (let i = 0; i < 4; i++) await server.create('v1/pods', pod(`e${i}`));
      await waitFor(() => reg.closed, 'registration ended');
      expect(reg.depth).toBe(0);
      expect(errors.filter((e) => e instanceof BufferOverflowError)).toHaveLength(1);
      gate.resolve(); // done waits for the call in progress
      await reg.done;
    });

    it('rejects a bad buffer policy up front', () => {
      const inf = podInformer();
      expect(() => inf.addHandler({}, { buffer: { limit: 0, overflow: 'error' } })).toThrow(TypeError);
      expect(() => inf.addHandler({}, { buffer: { coalesce: 'byName' } as never })).toThrow(/coalesce/);
      expect(() => inf.addHandler({}, { resyncPeriod: -1 })).toThrow(/resyncPeriod/);
    });
  });

  it('unsubscribe() stops deliveries and drops what was pending; done waits for the call in progress (LT-82)', async () => {
    const inf = podInformer();
    const gate = deferred();
    let calls = 0;
    const reg = inf.addHandler({ add: () => { calls++; return gate.promise; } });
    inf.subscribe();
    await inf.whenSynced();
    for (let i = 0; i < 3; i++) await server.create('v1/pods', pod(`x${i}`));
    await waitFor(() => reg.depth === 2, 'buffered');
    let done = false;
    void reg.done.then(() => (done = true));
    reg.unsubscribe();
    reg.unsubscribe();
    expect(reg.closed).toBe(true);
    expect(reg.depth).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false); // the first add is still running
    gate.resolve();
    await reg.done;
    await server.create('v1/pods', pod('after'));
    await waitFor(() => inf.store.getByKey('default/after'), 'store');
    expect(calls).toBe(1);
  });

  it('is an async iterable through ix from(); breaking out of the loop unsubscribes (LT-83)', async () => {
    await server.create('v1/pods', pod('n0'));
    const inf = podInformer();
    const got: string[] = [];
    const consumer = (async () => {
      for await (const e of asyncFrom(inf)) {
        got.push(`${e.type}:${e.type === 'delete' ? '' : e.obj.metadata?.name}`);
        if (got.length === 1) await server.create('v1/pods', pod('n1'));
        if (got.length === 2) break;
      }
    })();
    await consumer;
    expect(got).toEqual(['add:n0', 'add:n1']);
    // The loop was the only subscriber: the informer is idle again and its watch closed.
    expect(inf.status().state).toBe('idle');
    await waitFor(() => server.stats.watchesOpen === 0, 'the watch to close');
  });
});
