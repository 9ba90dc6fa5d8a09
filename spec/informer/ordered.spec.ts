// An informer made with fifo: 'ordered' (PF-1…PF-19), over the simulator: events reach listeners in the server's
// order across keys, and a relist reaches the store in one step before anyone hears of it.
import type { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InformerFactory } from '../../src/informer/InformerFactory.js';
import { informer } from '../../src/informer/informer.js';
import type { FifoMode } from '../../src/informer/types.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { ListerWatcher, ListOptions, ObjectList } from '../../src/sources/types.js';
import { unwrapTombstone } from '../../src/store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../../src/store/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

let server: ApiServer;
const running = new Lifetimes();

beforeEach(async () => {
  server = await startApiServer({ port: 0, bookmarkIntervalMs: 200 });
});

afterEach(async () => {
  await running.end();
  await server.close();
});

/** The real source, whose n-th LIST request (pages count one each) can be held until released. */
function heldSource(kc: KubeConfig) {
  const inner = kubeSource(kc, 'v1/pods') as ListerWatcher<KubeObject>;
  let lists = 0;
  const holds = new Map<number, ReturnType<typeof deferred<void>>>();
  const lw: ListerWatcher<KubeObject> = {
    async list(opts: ListOptions, signal: AbortSignal): Promise<ObjectList<KubeObject>> {
      const n = ++lists;
      await holds.get(n)?.promise;
      return inner.list(opts, signal);
    },
    watch: (opts, signal) => inner.watch(opts, signal),
  };
  const hold = (n: number): (() => void) => {
    const d = deferred<void>();
    holds.set(n, d);
    return () => d.resolve();
  };
  return { lw, lists: () => lists, hold };
}

const name = (o: unknown): string => unwrapTombstone(o as KubeObject)?.metadata?.name ?? '';
const rv = (o: KubeObject | undefined): string | undefined => o?.metadata?.resourceVersion;

describe("informer({ fifo: 'ordered' })", () => {
  it('hands events to listeners in the order the server sent them, across keys', async () => {
    for (const n of ['a', 'b', 'c']) await server.create('v1/pods', pod(n));
    const inf = informer(kubeSource(server.kubeConfig(), 'v1/pods') as ListerWatcher<KubeObject>, { fifo: 'ordered' });
    running.track(inf);
    const seen: string[] = [];
    inf.subscribe((e) => {
      if (e.type === 'update') seen.push(`${name(e.obj)}@${rv(e.obj)}`);
    });
    await inf.whenSynced({ timeout: 10_000 });
    const written: string[] = [];
    for (let i = 0; i < 12; i++) {
      const n = ['a', 'b', 'a', 'c'][i % 4] as string;
      const after = (await server.patch('v1/pods', 'default', n, { metadata: { labels: { i: String(i) } } })) as KubeObject;
      written.push(`${n}@${rv(after)}`);
    }
    await waitFor(() => seen.length === written.length, 'every update');
    expect(seen).toEqual(written);
  });

  // The same relist, seen by a listener that reads the store at each notification, in both modes: the per-key
  // queue applies pages as they arrive, the ordered one applies the whole list in one step first.
  for (const fifo of ['perKey', 'ordered'] as const satisfies readonly FifoMode[]) {
    it(`a relist ${fifo === 'ordered' ? 'is atomic' : 'is applied page by page'} to a listener reading the store (fifo: '${fifo}')`, async () => {
      for (let i = 0; i < 30; i++) await server.create('v1/pods', pod(`p${String(i).padStart(2, '0')}`));
      const source = heldSource(server.kubeConfig());
      const inf = informer(source.lw, { fifo, reflector: { pageSize: 10, backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } } });
      running.track(inf);
      // What the store held at each relist notification: the three changed pods' versions, and whether p29 was there.
      const reads: { event: string; p00: string | undefined; p15: string | undefined; p25: string | undefined; p29: boolean }[] = [];
      let recording = false;
      inf.subscribe((e) => {
        if (!recording) return;
        const at = (n: string) => rv(inf.store.getByKey(`default/${n}`));
        reads.push({ event: `${e.type} ${name(e.obj)}`, p00: at('p00'), p15: at('p15'), p25: at('p25'), p29: inf.store.getByKey('default/p29') !== undefined });
      });
      await inf.whenSynced({ timeout: 10_000 });
      await waitFor(() => server.stats.watchesOpen === 1, 'the watch');
      const before = rv(inf.store.getByKey('default/p25'));
      const before15 = rv(inf.store.getByKey('default/p15'));

      // The watch ends with 410 as p29 goes away unseen; the relist waits at the gate while three pods change
      // unseen; then its first try is refused as expired, and the fresh list's third page is held back.
      const lists = source.lists();
      const releaseFirst = source.hold(lists + 1);
      const releaseThird = source.hold(lists + 4);
      server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch', times: 1 });
      await server.delete('v1/pods', 'default', 'p29');
      await waitFor(() => source.lists() === lists + 1, 'the relist to start');
      const changed: Record<string, string | undefined> = {};
      for (const n of ['p00', 'p15', 'p25']) changed[n] = rv((await server.patch('v1/pods', 'default', n, { metadata: { labels: { v: '2' } } })) as KubeObject);
      server.faults.inject({ type: 'status', status: 410 }, { verb: 'list', times: 1 });
      recording = true;
      releaseFirst();
      await waitFor(() => source.lists() === lists + 4, 'the fresh list to reach its third page');

      if (fifo === 'perKey') {
        // Two pages are in: p00 and p15 changed and announced while p25 is old and p29 still there.
        await waitFor(() => reads.length === 2, 'the first two pages announced');
        expect(reads).toEqual([
          { event: 'update p00', p00: changed.p00, p15: before15, p25: before, p29: true },
          { event: 'update p15', p00: changed.p00, p15: changed.p15, p25: before, p29: true },
        ]);
      } else {
        // Nothing of the list is in the store, and nobody heard of it.
        expect(reads).toEqual([]);
        expect(rv(inf.store.getByKey('default/p00'))).not.toBe(changed.p00);
      }
      releaseThird();
      await waitFor(() => reads.some((r) => r.event === 'delete p29') && reads.some((r) => r.event === 'update p25'), 'the rest of the relist');
      if (fifo === 'ordered') {
        // Every notification, the first included, read the whole new list; the inferred delete came first.
        const whole = { p00: changed.p00, p15: changed.p15, p25: changed.p25, p29: false };
        expect(reads).toEqual([
          { event: 'delete p29', ...whole },
          { event: 'update p00', ...whole },
          { event: 'update p15', ...whole },
          { event: 'update p25', ...whole },
        ]);
      }
      expect(inf.store.size).toBe(29);
    });
  }

  // A listener joining from inside a list's notifications (an observer switching onto the informer) is given the
  // store as it is then; it must not hear again, or hear of, what that store already reflects (PF-16).
  for (const fifo of ['perKey', 'ordered'] as const satisfies readonly FifoMode[]) {
    it(`a handler added during the first list's notifications hears each object once (fifo: '${fifo}')`, async () => {
      for (const n of ['a', 'b', 'c']) await server.create('v1/pods', pod(n));
      const inf = informer(kubeSource(server.kubeConfig(), 'v1/pods') as ListerWatcher<KubeObject>, { fifo });
      running.track(inf);
      const heard: string[] = [];
      let joined = false;
      inf.subscribe(() => {
        if (joined) return;
        joined = true;
        inf.addHandler({
          add: (o, initial) => void heard.push(`add ${name(o)} ${initial}`),
          update: (_old, o) => void heard.push(`update ${name(o)}`),
          delete: (o) => void heard.push(`delete ${name(o)}`),
        });
      });
      await inf.whenSynced({ timeout: 10_000 });
      await server.create('v1/pods', pod('d'));
      await waitFor(() => heard.includes('add d false'), 'the handler to hear of d');
      expect(heard).toEqual(['add a true', 'add b true', 'add c true', 'add d false']);
    });
  }

  it("a handler added during a relist's deletions hears neither deletes of what it never had nor the list again", async () => {
    for (const n of ['a', 'b', 'c', 'x', 'y']) await server.create('v1/pods', pod(n));
    const source = heldSource(server.kubeConfig());
    const inf = informer(source.lw, { fifo: 'ordered' });
    running.track(inf);
    const heard: string[] = [];
    let joined = false;
    inf.subscribe((e) => {
      if (joined || e.type !== 'delete') return;
      joined = true;
      inf.addHandler({
        add: (o, initial) => void heard.push(`add ${name(o)} ${initial}`),
        update: (_old, o) => void heard.push(`update ${name(o)}`),
        delete: (o) => void heard.push(`delete ${name(o)}`),
      });
    });
    await inf.whenSynced({ timeout: 10_000 });
    await waitFor(() => server.stats.watchesOpen === 1, 'the watch');

    // The watch ends with 410 in place of x's delete; while the relist is held, y goes and b changes, unseen.
    const lists = source.lists();
    const release = source.hold(lists + 1);
    server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch', times: 1 });
    await server.delete('v1/pods', 'default', 'x');
    await waitFor(() => source.lists() === lists + 1, 'the relist to start');
    await server.delete('v1/pods', 'default', 'y');
    await server.patch('v1/pods', 'default', 'b', { metadata: { labels: { v: '2' } } });
    release();
    await waitFor(() => joined && inf.store.size === 3, 'the relist');
    await server.create('v1/pods', pod('d'));
    await waitFor(() => heard.includes('add d false'), 'the handler to hear of d');
    expect(heard).toEqual(['add a true', 'add b true', 'add c true', 'add d false']);
  });

  it('keeps handlers, their buffers, resync, status and whenSynced working', async () => {
    for (const n of ['a', 'b']) await server.create('v1/pods', pod(n));
    const inf = informer(kubeSource(server.kubeConfig(), 'v1/pods') as ListerWatcher<KubeObject>, { fifo: 'ordered' });
    running.track(inf);
    const plain: string[] = [];
    const coalesced: string[] = [];
    let resyncs = 0;
    inf.addHandler({
      add: (o, initial) => void plain.push(`add ${name(o)} ${initial}`),
      update: (_old, o) => void plain.push(`update ${name(o)}`),
      delete: (o) => void plain.push(`delete ${name(o)}`),
    });
    inf.addHandler({ add: (o) => void coalesced.push(`add ${name(o)}`), delete: (o) => void coalesced.push(`delete ${name(o)}`) }, { buffer: { coalesce: 'byKey' } });
    inf.addHandler({ update: (old, o) => void (old === o && resyncs++) }, { resyncPeriod: 50 });
    await inf.whenSynced({ timeout: 10_000 });
    await server.create('v1/pods', pod('c'));
    await server.delete('v1/pods', 'default', 'a');
    await waitFor(() => plain.length === 4 && coalesced.length === 4, 'both handlers');
    expect(plain).toEqual(['add a true', 'add b true', 'add c false', 'delete a']);
    expect(coalesced).toEqual(['add a', 'add b', 'add c', 'delete a']);
    await waitFor(() => resyncs >= 2, 'a resync of the two cached pods');
    const status = inf.status();
    expect(status.synced).toBe(true);
    expect(status.handlers).toHaveLength(3);
    expect(inf.store.listKeys().sort()).toEqual(['default/b', 'default/c']);
  });

  it('a streamed initial list (sendInitialEvents) is applied whole too, every add marked initial', async () => {
    for (let i = 0; i < 25; i++) await server.create('v1/pods', pod(`s${i}`));
    const inf = informer(kubeSource(server.kubeConfig(), 'v1/pods') as ListerWatcher<KubeObject>, { fifo: 'ordered', initialList: 'stream' });
    running.track(inf);
    const held: number[] = [];
    inf.subscribe((e) => {
      if (e.type === 'add') held.push(e.isInInitialList ? inf.store.size : -1);
    });
    await inf.whenSynced({ timeout: 10_000 });
    expect(held).toEqual(Array.from({ length: 25 }, () => 25));
  });

  it("checks the option up front, naming it and the value", () => {
    const source = kubeSource(server.kubeConfig(), 'v1/pods');
    expect(() => informer(source, { fifo: 'inOrder' as never })).toThrow(new TypeError(`fifo must be 'perKey' or 'ordered', got "inOrder"`));
    expect(() => informer(source, { fifo: 'perKey' })).not.toThrow();
  });

  it('the factory hands out an ordered informer apart from the per-key one of the same resource', () => {
    const factory = new InformerFactory(server.kubeConfig());
    const perKey = factory.informerFor('v1/pods');
    const ordered = factory.informerFor('v1/pods', { fifo: 'ordered' });
    expect(ordered).not.toBe(perKey);
    expect(factory.informerFor('v1/pods', { fifo: 'ordered' })).toBe(ordered);
    expect(factory.informerFor('v1/pods', { fifo: 'perKey' })).toBe(perKey);
  });

  it('the factory checks fifo before it looks for a shared informer, so a bad value never gets one (PF-1)', () => {
    const factory = new InformerFactory(server.kubeConfig());
    factory.informerFor('v1/pods');
    expect(() => factory.informerFor('v1/pods', { fifo: 'Ordered' as never })).toThrow(new TypeError(`fifo must be 'perKey' or 'ordered', got "Ordered"`));
    expect(() => factory.informerFor('v1/pods', { resyncPeriod: -1 })).toThrow(/resyncPeriod/);
  });
});
