// orderedFifo, with client-go's own RealFIFO and atomic-relist tests ported (tools/cache/the_real_fifo_test.go,
// controller_test.go). client-go's queue is read by a blocking Pop; here the queue drains synchronously into a
// consumer that applies each item to a real Indexer the way the informer does (applyOrdered), so "what Pop
// returns" is what the consumer receives and "what the handler sees" is what applyOrdered announces.
import { from, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { applyOrdered } from '../../src/informer/applyOrdered.js';
import type { DeltaTarget } from '../../src/informer/applyDeltas.js';
import { orderedFifo, type OrderedFifoOptions } from '../../src/operators/orderedFifo.js';
import type { OrderedFifoItem } from '../../src/operators/orderedTypes.js';
import { TransformError } from '../../src/operators/TransformError.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import { IndexError } from '../../src/store/errors/IndexError.js';
import { KeyError } from '../../src/store/errors/KeyError.js';
import { createIndexer, type Indexer } from '../../src/store/indexer.js';

interface Pod {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion: string; readonly uid?: string };
  readonly spec?: { readonly n: number };
}
const pod = (name: string, rv: number, uid?: string): Pod => ({ metadata: { name, namespace: 'default', resourceVersion: String(rv), ...(uid !== undefined && { uid }) } });
const key = (name: string) => `default/${name}`;

const added = (obj: Pod): ReflectorEvent<Pod> => ({ type: 'Added', obj, resourceVersion: obj.metadata.resourceVersion });
const modified = (obj: Pod): ReflectorEvent<Pod> => ({ type: 'Modified', obj, resourceVersion: obj.metadata.resourceVersion });
const deleted = (obj: Pod): ReflectorEvent<Pod> => ({ type: 'Deleted', obj, resourceVersion: obj.metadata.resourceVersion });
const replace = (rv: string, ...items: Pod[]): ReflectorEvent<Pod> => ({ type: 'Replace', items, resourceVersion: rv });
const page = (first: boolean, ...items: Pod[]): ReflectorEvent<Pod> => ({ type: 'ReplacePage', items, first });
const end = (rv: string): ReflectorEvent<Pod> => ({ type: 'ReplaceEnd', resourceVersion: rv });
const resync: ReflectorEvent<Pod> = { type: 'Resync' };
const bookmark = (rv: string): ReflectorEvent<Pod> => ({ type: 'Bookmark', resourceVersion: rv });

/** One item as a short string: `Added foo@10`, `ReplacedAll@20[foo@15]`, `SyncAll`. */
function show(item: OrderedFifoItem<Pod>): string {
  if ('deltas' in item) {
    expect(item.deltas).toHaveLength(1);
    const d = item.deltas[0]!;
    const o = d.obj instanceof DeletedFinalStateUnknown ? `~${d.obj.key.slice(8)}@${d.obj.obj?.metadata.resourceVersion}` : `${d.obj.metadata.name}@${d.obj.metadata.resourceVersion}`;
    return `${d.type} ${o}`;
  }
  if (item.type === 'SyncAll') return 'SyncAll';
  return `ReplacedAll@${item.resourceVersion}[${item.items.map((p) => `${p.metadata.name}@${p.metadata.resourceVersion}`).join(',')}]`;
}

/** What a handler hears, with what the store holds for that key at that moment (client-go's eventRecorder). */
interface Heard {
  readonly action: string;
  readonly key: string;
  readonly eventRV: string | undefined;
  readonly storeRV: string | undefined;
  readonly initial?: boolean;
  readonly sync?: boolean;
}

/** Runs `events` through orderedFifo into a consumer applying each item to `store`. */
function run(events: ReflectorEvent<Pod>[], opts: OrderedFifoOptions<Pod> = {}, store: Indexer<Pod> = createIndexer<Pod>({ freeze: false })) {
  const items: string[] = [];
  const heard: Heard[] = [];
  const errors: Error[] = [];
  const target: DeltaTarget<Pod> = {
    store,
    freezeDeleted: false,
    current: () => true,
    report: (e) => errors.push(e),
    audience: () => target.notify,
    notify: (event, k, isSync) => {
      const obj = event.type === 'delete' ? (event.obj instanceof DeletedFinalStateUnknown ? event.obj.obj : event.obj) : event.obj;
      heard.push({
        action: event.type,
        key: k,
        eventRV: obj?.metadata.resourceVersion,
        storeRV: store.getByKey(k)?.metadata.resourceVersion,
        ...(event.type === 'add' && { initial: event.isInInitialList }),
        ...(isSync && { sync: true }),
      });
    },
  };
  from(events)
    .pipe(orderedFifo<Pod>({ knownObjects: store, onError: (e) => errors.push(e), ...opts }))
    .subscribe((item) => {
      items.push(show(item));
      applyOrdered(item, target);
    });
  return { items, heard, errors, store };
}

const storeWith = (...pods: Pod[]) => {
  const s = createIndexer<Pod>({ freeze: false });
  for (const p of pods) s.add(p);
  return s;
};

describe('orderedFifo: client-go RealFIFO tests, ported', () => {
  it('TestRealFIFO_basic: events of many keys come out in the order they went in', () => {
    const events: ReflectorEvent<Pod>[] = [];
    for (let i = 0; i < 50; i++) events.push(added(pod(`a${i % 3}`, i + 1)), added(pod(`b${i % 5}`, 1000 + i)));
    const { items } = run(events);
    expect(items).toEqual(events.map((e) => `Added ${(e as { obj: Pod }).obj.metadata.name}@${(e as { obj: Pod }).obj.metadata.resourceVersion}`));
  });

  it('TestRealFIFO_addUpdate: add, update and delete of one key are three items, none merged', () => {
    const { items, heard } = run([added(pod('foo', 10)), modified(pod('foo', 12)), deleted(pod('foo', 15))]);
    expect(items).toEqual(['Added foo@10', 'Updated foo@12', 'Deleted foo@15']);
    expect(heard.map((h) => `${h.action} ${h.eventRV}`)).toEqual(['add 10', 'update 12', 'delete 15']);
  });

  it('TestRealFIFO_enqueueingNoLister: without knownObjects every event is handed on, a delete of an unseen key too', () => {
    const store = createIndexer<Pod>({ freeze: false });
    const items: string[] = [];
    from([added(pod('foo', 10)), modified(pod('bar', 15)), added(pod('qux', 17)), deleted(pod('qux', 18)), deleted(pod('baz', 20))])
      .pipe(orderedFifo<Pod>())
      .subscribe((item) => items.push(show(item)));
    expect(items).toEqual(['Added foo@10', 'Updated bar@15', 'Added qux@17', 'Deleted qux@18', 'Deleted baz@20']);
    expect(store.size).toBe(0);
  });

  it('TestRealFIFO_enqueueingWithLister: a delete of a known key is handed on; one the store never held is dropped (rxkube)', () => {
    const store = storeWith(pod('foo', 5), pod('bar', 6), pod('baz', 7));
    const { items } = run([added(pod('foo', 10)), modified(pod('bar', 15)), deleted(pod('baz', 20)), deleted(pod('nope', 21))], {}, store);
    expect(items).toEqual(['Added foo@10', 'Updated bar@15', 'Deleted baz@20']);
  });

  it('TestRealFIFO_addReplace / TestRealFIFO_ReplaceAtomicPop: an add then a list are two items, the list whole', () => {
    const { items, heard } = run([added(pod('foo', 10)), replace('20', pod('foo', 15))]);
    expect(items).toEqual(['Added foo@10', 'ReplacedAll@20[foo@15]']);
    expect(heard.map((h) => `${h.action} ${h.eventRV}`)).toEqual(['add 10', 'update 15']);
  });

  it('TestRealFIFO_detectLineJumpers: a key queued again while others wait goes to the back of the line', () => {
    const batch = [added(pod('foo', 10)), added(pod('bar', 1)), added(pod('foo', 11)), added(pod('foo', 13)), added(pod('zab', 30))];
    const queued = new Subject<ReflectorEvent<Pod>>();
    const out: string[] = [];
    let again = false;
    queued.pipe(orderedFifo<Pod>()).subscribe((item) => {
      out.push(show(item));
      if (!again) {
        again = true;
        for (const e of batch.slice(1)) queued.next(e);
        queued.next(added(pod('foo', 14)));
      }
    });
    // foo@10 is being handled when the other four arrive, and then foo@14, as in client-go's test after its first Pop.
    queued.next(batch[0]!);
    expect(out).toEqual(['Added foo@10', 'Added bar@1', 'Added foo@11', 'Added foo@13', 'Added zab@30', 'Added foo@14']);
  });

  it('TestRealFIFO_transformer: the transform runs once per object as it enters, never on tombstones', () => {
    const calls: string[] = [];
    const transform = (p: Pod): Pod => {
      calls.push(`${p.metadata.name}@${p.metadata.resourceVersion}`);
      return { ...p, spec: { n: (p.spec?.n ?? 0) + 1 } };
    };
    const seen: Pod[] = [];
    const store = createIndexer<Pod>({ freeze: false });
    const target: DeltaTarget<Pod> = {
      store,
      freezeDeleted: false,
      current: () => true,
      report: () => {},
      audience: () => target.notify,
      notify: (e) => void (e.type !== 'delete' && seen.push(e.obj)),
    };
    from([added(pod('foo', 10)), added(pod('bar', 11)), modified(pod('foo', 12)), deleted(pod('foo', 15)), replace('16'), added(pod('bar', 16)), replace('17')])
      .pipe(orderedFifo<Pod>({ knownObjects: store, transform }))
      .subscribe((item) => applyOrdered(item, target));
    expect(calls).toEqual(['foo@10', 'bar@11', 'foo@12', 'foo@15', 'bar@16']);
    // Every object handed out was transformed exactly once.
    expect(seen.every((p) => p.spec?.n === 1)).toBe(true);
    expect(store.size).toBe(0);
  });

  it('TestRealFIFO_HasSynced: synced after an early watch event, or once the first list has been processed', () => {
    const cases: [ReflectorEvent<Pod>[], boolean][] = [
      [[], false],
      [[added(pod('a', 1))], true],
      [[replace('0')], true],
      [[page(true, pod('a', 1), pod('b', 2))], false],
      [[replace('0', pod('a', 1), pod('b', 2))], true],
    ];
    for (const [events, expected] of cases) {
      let synced = false;
      run(events, { onSynced: () => (synced = true) });
      expect(synced).toBe(expected);
    }
    // The whole first list is one item: not synced while it is being processed, initial throughout.
    let synced = false;
    const during: boolean[] = [];
    from([replace('1', pod('a', 1), pod('b', 2))])
      .pipe(orderedFifo<Pod>({ onSynced: () => (synced = true) }))
      .subscribe((item) => {
        during.push(synced, 'deltas' in item ? item.isInInitialList : item.type === 'ReplacedAll' && item.isInInitialList);
      });
    expect(during).toEqual([false, true]);
    expect(synced).toBe(true);
  });

  it('TestRealFIFO_HasSyncedCorrectOnDeletion: the first list deletes what it lacks, all of it initial, synced after', () => {
    const store = storeWith(pod('foo', 5), pod('bar', 6), pod('baz', 7));
    const { heard } = run([replace('0', pod('foo', 5))], {}, store);
    expect(heard).toEqual([
      { action: 'delete', key: key('bar'), eventRV: '6', storeRV: undefined },
      { action: 'delete', key: key('baz'), eventRV: '7', storeRV: undefined },
      { action: 'update', key: key('foo'), eventRV: '5', storeRV: '5', sync: true },
    ]);
  });

  it('TestRealFIFO_ReplaceMakesDeletions: a queued delete comes first; the list deletes the rest with their stored state', () => {
    const store = storeWith(pod('foo', 5), pod('bar', 6), pod('baz', 7));
    const { items, heard } = run([deleted(pod('baz', 10)), replace('0', pod('foo', 5))], {}, store);
    expect(items).toEqual(['Deleted baz@10', 'ReplacedAll@0[foo@5]']);
    expect(heard.map((h) => `${h.action} ${h.key.slice(8)}@${h.eventRV}`)).toEqual(['delete baz@10', 'delete bar@6', 'update foo@5']);

    // Deleted then re-added before the list: the list's tombstone carries the newest state, the re-added one.
    const s2 = storeWith(pod('foo', 5), pod('bar', 6), pod('baz', 7));
    const r2 = run([deleted(pod('bar', 6)), added(pod('bar', 100)), replace('0', pod('foo', 5))], {}, s2);
    // client-go promises no order among a list's deletions; here they follow the store's order, where bar came back last.
    expect(r2.heard.map((h) => `${h.action} ${h.key.slice(8)}@${h.eventRV}`)).toEqual(['delete bar@6', 'add bar@100', 'delete baz@7', 'delete bar@100', 'update foo@5']);
  });

  it('TestRealFIFO_UpdateResyncRace: a resync after an update delivers the updated object, never the stale one', () => {
    const store = storeWith(pod('foo', 5));
    const { items, heard } = run([modified(pod('foo', 6)), resync], {}, store);
    expect(items).toEqual(['Updated foo@6', 'SyncAll']);
    expect(heard).toEqual([
      { action: 'update', key: key('foo'), eventRV: '6', storeRV: '6' },
      { action: 'update', key: key('foo'), eventRV: '6', storeRV: '6', sync: true },
    ]);
  });

  it('TestRealFIFO_ReplaceAtomic: each list is one item in order; a bookmark queues nothing (rxkube moves the resourceVersion itself)', () => {
    expect(run([replace('123')]).items).toEqual(['ReplacedAll@123[]']);
    expect(run([added(pod('foo', 2)), replace('123')]).items).toEqual(['Added foo@2', 'ReplacedAll@123[]']);
    expect(run([added(pod('foo', 2)), replace('10', pod('foo', 2)), replace('20', pod('foo', 2)), replace('56')]).items).toEqual([
      'Added foo@2',
      'ReplacedAll@10[foo@2]',
      'ReplacedAll@20[foo@2]',
      'ReplacedAll@56[]',
    ]);
    expect(run([bookmark('123'), replace('1234')]).items).toEqual(['ReplacedAll@1234[]']);
  });

  it('TestRealFIFO_ResyncAtomic: a resync is one item, behind what came before it', () => {
    expect(run([resync]).items).toEqual(['SyncAll']);
    expect(run([added(pod('foo', 2)), resync]).items).toEqual(['Added foo@2', 'SyncAll']);
  });
});

describe('orderedFifo: client-go atomic relist tests (controller_test.go), ported', () => {
  // testReplaceEvents: the store holds the whole new list before any handler hears of it, deletions come first.
  const cases: { name: string; initial: Pod[]; listed: Pod[]; heard: Heard[] }[] = [
    {
      name: 'Create with no initial objects',
      initial: [],
      listed: [pod('pod-1', 1)],
      heard: [{ action: 'add', key: key('pod-1'), eventRV: '1', storeRV: '1', initial: false }],
    },
    {
      name: 'Delete all objects',
      initial: [pod('pod-1', 1), pod('pod-3', 2)],
      listed: [],
      heard: [
        { action: 'delete', key: key('pod-1'), eventRV: '1', storeRV: undefined },
        { action: 'delete', key: key('pod-3'), eventRV: '2', storeRV: undefined },
      ],
    },
    {
      name: 'Create, update, delete',
      initial: [pod('pod-1', 1), pod('pod-2', 2), pod('pod-3', 3)],
      listed: [pod('pod-1', 4), pod('pod-2', 5), pod('pod-4', 6)],
      heard: [
        { action: 'delete', key: key('pod-3'), eventRV: '3', storeRV: undefined },
        { action: 'update', key: key('pod-1'), eventRV: '4', storeRV: '4' },
        { action: 'update', key: key('pod-2'), eventRV: '5', storeRV: '5' },
        { action: 'add', key: key('pod-4'), eventRV: '6', storeRV: '6', initial: false },
      ],
    },
  ];
  for (const c of cases) {
    it(`TestReplaceEvents (atomic): ${c.name}`, () => {
      const store = createIndexer<Pod>({ freeze: false });
      // The controller has synced on an empty first list before the objects are added, as in client-go's test.
      const setup = run([replace('0'), ...c.initial.map(added), replace(String(c.listed.length + 10), ...c.listed)], {}, store);
      const sorted = (h: Heard[]) => [...h].sort((a, b) => (a.action === 'delete' && b.action === 'delete' ? a.key.localeCompare(b.key) : 0));
      expect(sorted(setup.heard.slice(c.initial.length))).toEqual(c.heard);
      expect(store.list().map((p) => p.metadata.resourceVersion).sort()).toEqual(c.listed.map((p) => p.metadata.resourceVersion).sort());
    });
  }

  it('TestReplaceEvents (atomic): every handler call of a relist reads the complete new list from the store', () => {
    const store = storeWith(pod('a', 1), pod('b', 2), pod('c', 3));
    const snapshots: string[] = [];
    const target: DeltaTarget<Pod> = {
      store,
      freezeDeleted: false,
      current: () => true,
      report: () => {},
      audience: () => target.notify,
      notify: () => void snapshots.push(store.listKeys().sort().join(',') + ' ' + store.list().map((p) => p.metadata.resourceVersion).sort().join(',')),
    };
    from([page(true, pod('a', 11), pod('d', 14)), page(false, pod('b', 12)), end('20')])
      .pipe(orderedFifo<Pod>({ knownObjects: store }))
      .subscribe((item) => {
        // Nothing of the list reached the store before its end.
        expect(store.getByKey(key('a'))?.metadata.resourceVersion).toBe('1');
        applyOrdered(item, target);
      });
    expect(snapshots).toHaveLength(4);
    expect(new Set(snapshots)).toEqual(new Set(['default/a,default/b,default/d 11,12,14']));
  });

  it('TestResetWatch (atomic): a relist after a dropped watch updates the known object and adds the new one, neither initial', () => {
    const store = createIndexer<Pod>({ freeze: false });
    const { heard } = run([replace('1', pod('pod-1', 1)), replace('3', pod('pod-1', 2), pod('pod-2', 3))], {}, store);
    expect(heard).toEqual([
      { action: 'add', key: key('pod-1'), eventRV: '1', storeRV: '1', initial: true },
      { action: 'update', key: key('pod-1'), eventRV: '2', storeRV: '2' },
      { action: 'add', key: key('pod-2'), eventRV: '3', storeRV: '3', initial: false },
    ]);
  });
});

describe('orderedFifo: lists page by page, failures, lifetime', () => {
  it('a first page starts the list over; the pages before it are forgotten', () => {
    const { items } = run([page(true, pod('a', 1)), page(false, pod('b', 2)), page(true, pod('c', 3)), end('9')]);
    expect(items).toEqual(['ReplacedAll@9[c@3]']);
  });

  it('a watch event before the end abandons the list: none of its pages reach the store', () => {
    const store = storeWith(pod('a', 1));
    const { items } = run([page(true, pod('a', 5), pod('b', 6)), added(pod('c', 7))], {}, store);
    expect(items).toEqual(['Added c@7']);
    expect(store.getByKey(key('a'))?.metadata.resourceVersion).toBe('1');
    expect(store.getByKey(key('b'))).toBeUndefined();
  });

  it('a page not marked first after an abandoned list starts a new one (PF-9; the reflector never sends this)', () => {
    const { items } = run([page(true, pod('a', 1)), added(pod('x', 2)), page(false, pod('b', 3)), end('9')]);
    expect(items).toEqual(['Added x@2', 'ReplacedAll@9[b@3]']);
  });

  it('a source that errors mid-list forwards the error and drops the pages; the store keeps the old list', () => {
    const store = storeWith(pod('a', 1));
    const input = new Subject<ReflectorEvent<Pod>>();
    const items: string[] = [];
    let failed: unknown;
    input.pipe(orderedFifo<Pod>({ knownObjects: store })).subscribe({ next: (i) => items.push(show(i)), error: (e) => (failed = e) });
    input.next(page(true, pod('a', 5)));
    const boom = new Error('boom');
    input.error(boom);
    expect(failed).toBe(boom);
    expect(items).toEqual([]);
    expect(store.getByKey(key('a'))?.metadata.resourceVersion).toBe('1');
  });

  it('a source that completes mid-list completes without applying it', () => {
    const { items } = run([added(pod('x', 1)), page(true, pod('a', 5))]);
    expect(items).toEqual(['Added x@1']);
  });

  it('a listed object whose transform throws is reported and kept as stored, not deleted', () => {
    const store = storeWith(pod('a', 1), pod('b', 2));
    const transform = (p: Pod): Pod => {
      if (p.metadata.name === 'b') throw new Error('no b');
      return p;
    };
    const { heard, errors } = run([replace('9', pod('a', 3), pod('b', 4))], { transform }, store);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TransformError);
    expect(heard.map((h) => `${h.action} ${h.key.slice(8)}@${h.eventRV}`)).toEqual(['update a@3']);
    expect(store.getByKey(key('b'))?.metadata.resourceVersion).toBe('2');
  });

  it('an object whose key cannot be computed is reported and skipped; the rest is applied', () => {
    const keyFunc = (p: Pod): string => {
      if (p.metadata.name === 'bad') throw new Error('no key');
      return `default/${p.metadata.name}`;
    };
    const { items, errors } = run([added(pod('bad', 1)), replace('2', pod('bad', 2), pod('ok', 2))], { keyFunc });
    expect(items).toEqual(['ReplacedAll@2[ok@2]']);
    expect(errors.map((e) => e.constructor)).toEqual([KeyError, KeyError]);
  });

  it('an index function that throws for one listed object leaves that object out, not the whole list', () => {
    const store = createIndexer<Pod>({ freeze: false, indexers: { n: (p) => (p.metadata.name === 'bad' ? (null as unknown as string[]) : [p.metadata.name]) } });
    const { heard, errors } = run([replace('2', pod('bad', 1), pod('ok', 2))], {}, store);
    expect(errors).toHaveLength(1);
    expect(store.listKeys()).toEqual([key('ok')]);
    expect(heard.map((h) => h.key)).toEqual([key('ok')]);
  });

  it('an index function that throws for a relisted object keeps the stored copy, tells nobody, and later events find it (PF-10)', () => {
    const indexers = { n: (p: Pod) => (p.metadata.name === 'bad' && p.metadata.resourceVersion === '2' ? (null as unknown as string[]) : [p.metadata.name]) };
    const store = createIndexer<Pod>({ freeze: false, indexers });
    const { heard, errors } = run([replace('1', pod('bad', 1), pod('ok', 1)), replace('2', pod('bad', 2), pod('ok', 2)), modified(pod('bad', 3)), deleted(pod('bad', 4))], {}, store);
    expect(errors.map((e) => e.constructor)).toEqual([IndexError]);
    expect(heard.slice(2).map((h) => `${h.action} ${h.key.slice(8)}@${h.eventRV} store@${h.storeRV}`)).toEqual([
      'update ok@2 store@2',
      // The store kept bad@1 through the relist, so the watch's Modified is an update and its Deleted reaches the handler.
      'update bad@3 store@3',
      'delete bad@4 store@undefined',
    ]);
    expect(store.byIndex('n', 'ok').map((p) => p.metadata.resourceVersion)).toEqual(['2']);
  });

  it('a relist indexes each object once, however many an index function refuses (no retry per failure)', () => {
    const calls = new Map<string, number>();
    const n = (p: Pod): string[] => {
      calls.set(p.metadata.name, (calls.get(p.metadata.name) ?? 0) + 1);
      if (p.metadata.name.startsWith('bad')) throw new Error('no index');
      return [p.metadata.name];
    };
    const store = createIndexer<Pod>({ freeze: false, indexers: { n } });
    const listed = Array.from({ length: 12 }, (_, i) => pod(i % 3 === 0 ? `bad${i}` : `ok${i}`, i + 1));
    const { heard, errors } = run([replace('20', ...listed)], {}, store);
    expect(errors).toHaveLength(4);
    expect([...calls.values()]).toEqual(listed.map(() => 1));
    expect(heard.map((h) => h.key.slice(8))).toEqual(listed.filter((p) => p.metadata.name.startsWith('ok')).map((p) => p.metadata.name));
    expect(store.listKeys().sort()).toEqual(heard.map((h) => h.key).sort());
  });

  it('a relist files each object under the key the queue worked out, even when the transform changed the object (PF-43)', () => {
    const store = storeWith(pod('a', 1), pod('c', 1));
    // The transform drops the name: keyed again, the object would have no key at all.
    const transform = (p: Pod): Pod => (p.metadata.name === 'a' ? { ...p, metadata: { ...p.metadata, name: '' } } : p);
    const { heard, errors } = run([replace('2', pod('a', 2), pod('b', 2))], { transform }, store);
    expect(errors).toEqual([]);
    expect(heard.map((h) => `${h.action} ${h.key.slice(8)}@${h.eventRV} store@${h.storeRV}`)).toEqual(['delete c@1 store@undefined', 'update a@2 store@2', 'add b@2 store@2']);
    expect(store.listKeys().sort()).toEqual([key('a'), key('b')]);
  });

  it('a swap that fails leaves the old list and announces nothing of the new one', () => {
    const inner = storeWith(pod('a', 1), pod('c', 1));
    const boom = new Error('cannot swap');
    // A store not made by createIndexer (the reads this path makes, and a replace that fails): the keyed swap falls back to replace.
    const store = {
      getByKey: (k: string) => inner.getByKey(k),
      listKeys: () => inner.listKeys(),
      replace: () => {
        throw boom;
      },
    } as unknown as Indexer<Pod>;
    const { heard, errors } = run([replace('2', pod('a', 2), pod('b', 2))], {}, store);
    expect(errors).toEqual([boom]);
    expect(heard).toEqual([]);
    expect(inner.listKeys().sort()).toEqual([key('a'), key('c')]);
  });

  it('an object re-created under the same name with a new UID is a delete then an add, as with single events (S-32)', () => {
    const store = storeWith(pod('a', 1, 'u1'));
    const { heard } = run([replace('5', pod('a', 5, 'u2'))], {}, store);
    expect(heard.map((h) => `${h.action} ${h.eventRV}`)).toEqual(['delete 1', 'add 5']);
  });

  it('unsubscribing drops what is queued; an unknown event type errors the stream', () => {
    const input = new Subject<ReflectorEvent<Pod>>();
    const items: string[] = [];
    const sub = input.pipe(orderedFifo<Pod>()).subscribe((i) => {
      items.push(show(i));
      input.next(added(pod('later', 2)));
      sub.unsubscribe();
    });
    input.next(added(pod('first', 1)));
    expect(items).toEqual(['Added first@1']);
    let failed: unknown;
    from([{ type: 'Nope' } as unknown as ReflectorEvent<Pod>]).pipe(orderedFifo<Pod>()).subscribe({ error: (e) => (failed = e) });
    expect(failed).toBeInstanceOf(TypeError);
  });

  it('options are checked up front with a TypeError naming the option', () => {
    expect(() => orderedFifo({ transfrom: () => {} } as never)).toThrow(/transfrom/);
    expect(() => orderedFifo({ knownObjects: {} } as never)).toThrow(/knownObjects/);
    expect(() => orderedFifo({ onSynced: 1 } as never)).toThrow(TypeError);
  });
});
