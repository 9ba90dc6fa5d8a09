import { from, Subject, take, tap } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setErrorReporter } from '../../src/errors/reportError.js';
import { deltaFifo, type DeltaFifoOptions } from '../../src/operators/deltaFifo.js';
import { TransformError } from '../../src/operators/TransformError.js';
import type { Deltas } from '../../src/operators/types.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import { KeyError } from '../../src/store/errors/KeyError.js';
import type { KeyListerGetter } from '../../src/store/types.js';

interface Pod {
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly resourceVersion?: string };
  readonly spec?: string;
}
const pod = (key: string, rv: string, spec?: string): Pod => {
  const [a, b] = key.split('/');
  const meta = b === undefined ? { name: a, resourceVersion: rv } : { namespace: a, name: b, resourceVersion: rv };
  return spec === undefined ? { metadata: meta } : { metadata: meta, spec };
};
const dfsu = (key: string, obj: Pod | undefined): DeletedFinalStateUnknown<Pod> => new DeletedFinalStateUnknown(key, obj);

const replace = (...items: Pod[]): ReflectorEvent<Pod> => ({ type: 'Replace', items, resourceVersion: '1' });
const added = (obj: Pod): ReflectorEvent<Pod> => ({ type: 'Added', obj, resourceVersion: obj.metadata.resourceVersion ?? '' });
const modified = (obj: Pod): ReflectorEvent<Pod> => ({ type: 'Modified', obj, resourceVersion: obj.metadata.resourceVersion ?? '' });
const deleted = (obj: Pod): ReflectorEvent<Pod> => ({ type: 'Deleted', obj, resourceVersion: obj.metadata.resourceVersion ?? '' });
const resync: ReflectorEvent<Pod> = { type: 'Resync' };
const bookmark: ReflectorEvent<Pod> = { type: 'Bookmark', resourceVersion: '9' };

const keyOf = (obj: Pod | DeletedFinalStateUnknown<Pod>): string => {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  const { namespace, name } = obj.metadata;
  return namespace === undefined ? `${name}` : `${namespace}/${name}`;
};

/** The informer's side (C-4) over a Map: the store that knownObjects reads. */
class MapStore implements KeyListerGetter<Pod> {
  readonly map = new Map<string, Pod>();
  constructor(...pods: Pod[]) {
    for (const p of pods) this.map.set(keyOf(p), p);
  }
  listKeys(): string[] {
    return [...this.map.keys()];
  }
  getByKey(key: string): Pod | undefined {
    return this.map.get(key);
  }
  apply = (d: Deltas<Pod>): void => {
    for (const delta of d.deltas) {
      if (delta.type === 'Deleted') this.map.delete(keyOf(delta.obj));
      else this.map.set(d.key, delta.obj as Pod);
    }
  };
}

/** Runs events through deltaFifo + a consumer applying to `store`, collecting everything. */
function run(events: ReflectorEvent<Pod>[], opts: DeltaFifoOptions<Pod> = {}, store?: MapStore) {
  const out: Deltas<Pod>[] = [];
  const errors: Error[] = [];
  const log: string[] = [];
  let completed = false;
  const subject = new Subject<ReflectorEvent<Pod>>();
  const sub = subject
    .pipe(
      deltaFifo<Pod>({
        onError: (e) => errors.push(e),
        onSynced: () => log.push('synced'),
        ...(store === undefined ? {} : { knownObjects: store }),
        ...opts,
      }),
    )
    .subscribe({
      next: (d) => {
        store?.apply(d);
        out.push(d);
        log.push(`next ${d.key}`);
      },
      complete: () => {
        completed = true;
      },
    });
  for (const e of events) subject.next(e);
  return { out, errors, log, subject, sub, completed: () => completed };
}

const summary = (out: Deltas<Pod>[]) => out.map((d) => [d.key, d.deltas.map((x) => x.type).join(',')]);

describe('deltaFifo', () => {
  describe('options', () => {
    const bad: [string, unknown, RegExp][] = [
      ['keyFunc', 'name', /"keyFunc" must be a function, got "name"/],
      ['transform', 1, /"transform" must be a function, got 1/],
      ['onError', {}, /"onError" must be a function, got \{\}/],
      ['onSynced', true, /"onSynced" must be a function, got true/],
      ['emitDeltaTypeReplaced', 'yes', /"emitDeltaTypeReplaced" must be a boolean, got "yes"/],
      ['knownObjects', { listKeys: () => [] }, /"knownObjects" must have listKeys\(\) and getByKey\(key\)/],
      ['knownObjects', null, /"knownObjects" must have listKeys\(\) and getByKey\(key\), got null/],
    ];
    for (const [name, value, message] of bad) {
      it(`rejects ${name} = ${String(value)} when called, before any subscription`, () => {
        expect(() => deltaFifo({ [name]: value } as DeltaFifoOptions<Pod>)).toThrow(TypeError);
        expect(() => deltaFifo({ [name]: value } as DeltaFifoOptions<Pod>)).toThrow(message);
      });
    }

    it('rejects an unknown option name', () => {
      expect(() => deltaFifo({ knowObjects: new MapStore() } as unknown as DeltaFifoOptions<Pod>)).toThrow(/unknown option "knowObjects"/);
    });

    it('rejects a non-object options argument', () => {
      expect(() => deltaFifo(42 as unknown as DeltaFifoOptions<Pod>)).toThrow(/options must be an object, got 42/);
    });

    it('accepts no options at all and keys by namespace/name', () => {
      const out: Deltas<Pod>[] = [];
      const s = new Subject<ReflectorEvent<Pod>>();
      s.pipe(deltaFifo()).subscribe((d) => out.push(d));
      s.next(added(pod('ns/a', '1')));
      s.next(added(pod('b', '1')));
      expect(out.map((d) => d.key)).toEqual(['ns/a', 'b']);
    });
  });

  describe('marble behaviour', () => {
    let scheduler: TestScheduler;
    beforeEach(() => {
      scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    });

    const a1 = pod('a', '1');
    const b1 = pod('b', '1');
    const a2 = pod('a', '2');
    const ev = { r: replace(a1, b1), m: modified(a2), d: deleted(b1), k: bookmark, s: resync };
    const one = (key: string, type: string, obj: Pod | DeletedFinalStateUnknown<Pod>, isInInitialList: boolean): Deltas<Pod> => ({
      key,
      deltas: [{ type: type as 'Added', obj }],
      isInInitialList,
    });

    it('emits in the frame of the input, one Deltas per key in list order; Bookmark emits nothing', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const store = new MapStore();
        const source = cold('r---m-k-d-s|', ev);
        const result = source.pipe(deltaFifo<Pod>({ knownObjects: store }), tap(store.apply));
        expectObservable(result).toBe('(AB)C---D-E|', {
          A: one('a', 'Replaced', a1, true),
          B: one('b', 'Replaced', b1, true),
          C: one('a', 'Updated', a2, false),
          D: one('b', 'Deleted', b1, false),
          E: one('a', 'Sync', a2, false),
        });
        expectSubscriptions(source.subscriptions).toBe('^----------!');
      });
    });

    it('forwards a source error at once', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const store = new MapStore();
        const source = cold('r---#', ev, new Error('list failed'));
        expectObservable(source.pipe(deltaFifo<Pod>({ knownObjects: store }), tap(store.apply))).toBe(
          '(AB)#',
          { A: one('a', 'Replaced', a1, true), B: one('b', 'Replaced', b1, true) },
          new Error('list failed'),
        );
        expectSubscriptions(source.subscriptions).toBe('^---!');
      });
    });

    it('unsubscribes from the source when the consumer leaves early', () => {
      scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const store = new MapStore();
        const source = hot('r---m-d-s|', ev);
        expectObservable(source.pipe(deltaFifo<Pod>({ knownObjects: store }), tap(store.apply)), '^----!').toBe('(AB)C', {
          A: one('a', 'Replaced', a1, true),
          B: one('b', 'Replaced', b1, true),
          C: one('a', 'Updated', a2, false),
        });
        expectSubscriptions(source.subscriptions).toBe('^----!');
      });
    });

    it('emits Sync for a relist when emitDeltaTypeReplaced is false', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('r---|', ev).pipe(deltaFifo<Pod>({ emitDeltaTypeReplaced: false }))).toBe('(AB)|', {
          A: one('a', 'Sync', a1, true),
          B: one('b', 'Sync', b1, true),
        });
      });
    });
  });

  describe('rules over a consumer-maintained store', () => {
    it('tombstones known keys missing from a relist with their stored state (D-7)', () => {
      const store = new MapStore();
      const { out } = run([replace(pod('a', '1'), pod('b', '1'), pod('c', '1')), replace(pod('b', '2'))], {}, store);
      expect(out.slice(3)).toEqual([
        { key: 'b', deltas: [{ type: 'Replaced', obj: pod('b', '2') }], isInInitialList: false },
        { key: 'a', deltas: [{ type: 'Deleted', obj: dfsu('a', pod('a', '1')) }], isInInitialList: false },
        { key: 'c', deltas: [{ type: 'Deleted', obj: dfsu('c', pod('c', '1')) }], isInInitialList: false },
      ]);
      expect([...store.map.keys()]).toEqual(['b']);
    });

    it('merges a key listed twice into one Deltas that counts once towards sync', () => {
      const store = new MapStore();
      const { out, log } = run([replace(pod('a', '1'), pod('b', '1'), pod('a', '2'))], {}, store);
      expect(out).toEqual([
        {
          key: 'a',
          deltas: [
            { type: 'Replaced', obj: pod('a', '1') },
            { type: 'Replaced', obj: pod('a', '2') },
          ],
          isInInitialList: true,
        },
        { key: 'b', deltas: [{ type: 'Replaced', obj: pod('b', '1') }], isInInitialList: true },
      ]);
      expect(log).toEqual(['next a', 'next b', 'synced']);
      expect(store.map.get('a')).toEqual(pod('a', '2'));
    });

    it('ignores a delete of a key neither pending nor known (D-4)', () => {
      const store = new MapStore(pod('a', '1'));
      const { out } = run([deleted(pod('zzz', '5')), deleted(pod('a', '2'))], {}, store);
      expect(summary(out)).toEqual([['a', 'Deleted']]);
    });

    it('without knownObjects drops a delete of an already emitted key (nothing tells it the key exists)', () => {
      const { out } = run([added(pod('a', '1')), deleted(pod('a', '2'))]);
      expect(summary(out)).toEqual([['a', 'Added']]);
    });

    it('resyncs every stored object as Sync, untransformed (D-8)', () => {
      const store = new MapStore();
      const transform = vi.fn((p: Pod): Pod => ({ ...p, spec: 'T' }));
      const { out } = run([replace(pod('a', '1'), pod('b', '1')), resync], { transform }, store);
      expect(transform).toHaveBeenCalledTimes(2);
      expect(out.slice(2)).toEqual([
        { key: 'a', deltas: [{ type: 'Sync', obj: pod('a', '1', 'T') }], isInInitialList: false },
        { key: 'b', deltas: [{ type: 'Sync', obj: pod('b', '1', 'T') }], isInInitialList: false },
      ]);
    });

    it('reports a throwing transform as TransformError, skips that object and keeps running', () => {
      const store = new MapStore();
      const { out, errors } = run(
        [added(pod('a', '1', 'bad')), added(pod('b', '1')), modified(pod('b', '2'))],
        {
          transform: (p) => {
            if (p.spec === 'bad') throw new Error('cannot strip');
            return p;
          },
        },
        store,
      );
      expect(summary(out)).toEqual([
        ['b', 'Added'],
        ['b', 'Updated'],
      ]);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(TransformError);
      expect((errors[0] as TransformError).key).toBe('a');
    });

    it('reports an object without a name as KeyError from the default key function and keeps running', () => {
      const { out, errors } = run([added({ metadata: {} }), added(pod('b', '1'))], {}, new MapStore());
      expect(summary(out)).toEqual([['b', 'Added']]);
      expect(errors[0]).toBeInstanceOf(KeyError);
      expect((errors[0] as KeyError).obj).toEqual({ metadata: {} });
    });

    it('reports what knownObjects throws and keeps running', () => {
      const boom = new Error('store broken');
      const known: KeyListerGetter<Pod> = {
        listKeys: () => {
          throw boom;
        },
        getByKey: () => undefined,
      };
      const { out, errors } = run([resync, added(pod('a', '1'))], { knownObjects: known });
      expect(errors).toEqual([boom]);
      expect(summary(out)).toEqual([['a', 'Added']]);
    });

    it('sends errors to the error reporter when no onError is given, and survives a throwing onError', () => {
      const reported: unknown[] = [];
      setErrorReporter((err) => reported.push(err));
      try {
        const out: string[] = [];
        const s = new Subject<ReflectorEvent<Pod>>();
        s.pipe(deltaFifo()).subscribe((d) => out.push(d.key));
        s.next(added({ metadata: {} }));
        expect(reported).toHaveLength(1);
        expect(reported[0]).toBeInstanceOf(KeyError);

        const t = new Subject<ReflectorEvent<Pod>>();
        t.pipe(
          deltaFifo<Pod>({
            onError: () => {
              throw new Error('handler bug');
            },
          }),
        ).subscribe((d) => out.push(d.key));
        t.next(added({ metadata: {} }));
        t.next(added(pod('ok', '1')));
        // The throwing onError is reported, and so is the error it could not take.
        expect(reported.map((e) => (e as Error).message)).toEqual([expect.stringContaining('no metadata.name'), 'handler bug', expect.stringContaining('no metadata.name')]);
        expect(out).toEqual(['ok']);
      } finally {
        setErrorReporter(undefined);
      }
    });

    it('errors the stream on an event type it does not know', () => {
      const errors: unknown[] = [];
      const s = new Subject<ReflectorEvent<Pod>>();
      s.pipe(deltaFifo<Pod>()).subscribe({ error: (e) => errors.push(e) });
      s.next({ type: 'Bogus' } as unknown as ReflectorEvent<Pod>);
      expect(errors).toHaveLength(1);
      expect(String(errors[0])).toMatch(/unknown ReflectorEvent type "Bogus"/);
      expect(s.observed).toBe(false);
    });
  });

  describe('sync (D-13, D-14, D-16)', () => {
    it('flags the first list as initial and calls onSynced once, after the last initial Deltas was processed', () => {
      const store = new MapStore(pod('gone', '1'));
      const { out, log } = run([replace(pod('a', '1'), pod('b', '1')), added(pod('c', '1')), replace(pod('c', '2'))], {}, store);
      expect(out.map((d) => [d.key, d.isInInitialList])).toEqual([
        ['a', true],
        ['b', true],
        ['gone', true],
        ['c', false],
        ['c', false],
        ['a', false],
        ['b', false],
      ]);
      expect(log.slice(0, 5)).toEqual(['next a', 'next b', 'next gone', 'synced', 'next c']);
      expect(log.filter((x) => x === 'synced')).toHaveLength(1);
    });

    it('syncs at once on a first empty list with nothing to delete', () => {
      const { out, log } = run([replace()], {}, new MapStore());
      expect(out).toEqual([]);
      expect(log).toEqual(['synced']);
    });

    it('syncs before the first emission when a watch event comes before any list', () => {
      const { out, log } = run([added(pod('a', '1')), replace(pod('a', '1'), pod('b', '1'))], {}, new MapStore());
      expect(log).toEqual(['synced', 'next a', 'next a', 'next b']);
      expect(out.every((d) => !d.isInInitialList)).toBe(true);
    });

    it('does not sync on Resync or Bookmark alone', () => {
      const { log } = run([resync, bookmark], {}, new MapStore(pod('a', '1')));
      expect(log).toEqual(['next a']);
    });

    it('reports a throwing onSynced and keeps emitting', () => {
      const { out, errors } = run(
        [replace(pod('a', '1')), added(pod('b', '1'))],
        {
          onSynced: () => {
            throw new Error('callback bug');
          },
        },
        new MapStore(),
      );
      expect(errors.map((e) => e.message)).toEqual(['callback bug']);
      expect(summary(out)).toEqual([
        ['a', 'Replaced'],
        ['b', 'Added'],
      ]);
    });

    it('keeps separate state per subscription', () => {
      let synced = 0;
      const op = deltaFifo<Pod>({ onSynced: () => synced++ });
      const s = new Subject<ReflectorEvent<Pod>>();
      const first: boolean[] = [];
      s.pipe(op).subscribe((d) => first.push(d.isInInitialList));
      s.next(replace(pod('a', '1')));
      const second: boolean[] = [];
      s.pipe(op).subscribe((d) => second.push(d.isInInitialList));
      s.next(replace(pod('b', '1')));
      expect(first).toEqual([true, false]);
      expect(second).toEqual([true]);
      expect(synced).toBe(2);
    });
  });

  describe('reentrancy, completion and teardown', () => {
    it('queues input pushed from inside next behind the current work, merged per key', () => {
      const store = new MapStore();
      const out: Deltas<Pod>[] = [];
      const s = new Subject<ReflectorEvent<Pod>>();
      s.pipe(deltaFifo<Pod>({ knownObjects: store })).subscribe((d) => {
        store.apply(d);
        out.push(d);
        if (d.key === 'a' && out.length === 1) {
          // b and c are still pending: these must join their deltas, not jump ahead or split.
          s.next(modified(pod('c', '2')));
          s.next(added(pod('d', '1')));
          s.next(modified(pod('b', '2')));
          s.next(deleted(pod('c', '2')));
        }
      });
      s.next(replace(pod('a', '1'), pod('b', '1'), pod('c', '1')));
      expect(out.map((d) => [d.key, d.deltas.map((x) => `${x.type}:${(x.obj as Pod).metadata.resourceVersion}`)])).toEqual([
        ['a', ['Replaced:1']],
        ['b', ['Replaced:1', 'Updated:2']],
        ['c', ['Replaced:1', 'Updated:2', 'Deleted:2']],
        ['d', ['Added:1']],
      ]);
      expect([...store.map.keys()]).toEqual(['a', 'b', 'd']);
    });

    it('tombstones pending keys when a relist arrives while they wait (D-7 step 2)', () => {
      const store = new MapStore();
      const out: Deltas<Pod>[] = [];
      const s = new Subject<ReflectorEvent<Pod>>();
      s.pipe(deltaFifo<Pod>({ knownObjects: store })).subscribe((d) => {
        store.apply(d);
        out.push(d);
        if (out.length === 1) s.next(replace(pod('a', '9')));
      });
      s.next(replace(pod('a', '1'), pod('b', '1')));
      expect(out.map((d) => [d.key, d.deltas])).toEqual([
        ['a', [{ type: 'Replaced', obj: pod('a', '1') }]],
        [
          'b',
          [
            { type: 'Replaced', obj: pod('b', '1') },
            { type: 'Deleted', obj: dfsu('b', pod('b', '1')) },
          ],
        ],
        ['a', [{ type: 'Replaced', obj: pod('a', '9') }]],
      ]);
      expect([...store.map.entries()]).toEqual([['a', pod('a', '9')]]);
    });

    it('on complete, drains what is pending before completing', () => {
      const store = new MapStore();
      const log: string[] = [];
      const s = new Subject<ReflectorEvent<Pod>>();
      s.pipe(deltaFifo<Pod>({ knownObjects: store })).subscribe({
        next: (d) => {
          store.apply(d);
          log.push(d.key);
          if (d.key === 'a') s.complete();
        },
        complete: () => log.push('complete'),
      });
      s.next(replace(pod('a', '1'), pod('b', '1')));
      expect(log).toEqual(['a', 'b', 'complete']);
    });

    it('on error, drops what is pending and errors at once', () => {
      const keys: string[] = [];
      const errors: unknown[] = [];
      const s = new Subject<ReflectorEvent<Pod>>();
      s.pipe(deltaFifo<Pod>()).subscribe({
        next: (d) => {
          keys.push(d.key);
          if (d.key === 'a') s.error(new Error('gone'));
        },
        error: (e) => errors.push(e),
      });
      s.next(replace(pod('a', '1'), pod('b', '1')));
      expect(keys).toEqual(['a']);
      expect(errors).toHaveLength(1);
    });

    it('stops emitting and releases the source when the consumer unsubscribes mid-drain', () => {
      const s = new Subject<ReflectorEvent<Pod>>();
      const keys: string[] = [];
      let synced = false;
      s.pipe(
        deltaFifo<Pod>({ onSynced: () => (synced = true) }),
        take(1),
      ).subscribe((d) => keys.push(d.key));
      s.next(replace(pod('a', '1'), pod('b', '1'), pod('c', '1')));
      expect(keys).toEqual(['a']);
      expect(s.observed).toBe(false);
      expect(synced).toBe(false);
    });

    it('ignores events a synchronous source still pushes after the consumer left', () => {
      // from() emits everything inside subscribe(), before the teardown can unsubscribe it.
      const transform = vi.fn((p: Pod) => p);
      const keys: string[] = [];
      from([added(pod('a', '1')), added(pod('b', '1')), added(pod('c', '1'))])
        .pipe(deltaFifo<Pod>({ transform }), take(1))
        .subscribe((d) => keys.push(d.key));
      expect(keys).toEqual(['a']);
      expect(transform).toHaveBeenCalledTimes(1);
    });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });
});
