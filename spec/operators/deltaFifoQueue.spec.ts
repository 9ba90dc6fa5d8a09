import { describe, expect, it } from 'vitest';
import { DeltaFifoQueue, type DeltaFifoQueueConfig } from '../../src/operators/deltaFifoQueue.js';
import { TransformError } from '../../src/operators/TransformError.js';
import type { Delta, Deltas } from '../../src/operators/types.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import { KeyError } from '../../src/store/errors/KeyError.js';
import type { KeyListerGetter } from '../../src/store/types.js';

// The scenarios of client-go's DeltaFIFO tests, run against the queue directly:
// here several events can be pending at once, which the operator only allows reentrantly.

interface Obj {
  readonly name: string;
  readonly v: number | string;
}
const o = (name: string, v: number | string): Obj => ({ name, v });
const dfsu = (key: string, obj: Obj | undefined): DeletedFinalStateUnknown<Obj> => new DeletedFinalStateUnknown(key, obj);

/** A static lister: popping does not change it (client-go's literalListerGetter). */
function knownObjects(...objs: Obj[]): KeyListerGetter<Obj> {
  return {
    listKeys: () => objs.map((x) => x.name),
    getByKey: (key) => objs.find((x) => x.name === key),
  };
}

function makeQueue(config: Partial<DeltaFifoQueueConfig<Obj>> = {}): { q: DeltaFifoQueue<Obj>; errors: Error[] } {
  const errors: Error[] = [];
  const q = new DeltaFifoQueue<Obj>({
    keyFunc: (x) => x.name,
    knownObjects: undefined,
    emitDeltaTypeReplaced: false,
    transform: undefined,
    report: (err) => errors.push(err),
    ...config,
  });
  return { q, errors };
}

function popAll(q: DeltaFifoQueue<Obj>): Deltas<Obj>[] {
  const out: Deltas<Obj>[] = [];
  for (let d = q.pop(); d !== undefined; d = q.pop()) out.push(d);
  return out;
}

/** A whole list, as the operator queues a `Replace`. */
function replace(q: DeltaFifoQueue<Obj>, list: readonly Obj[]): void {
  q.replacePage(list, true);
  q.replaceEnd();
}

const deltas = (d: Deltas<Obj> | undefined): readonly Delta<Obj>[] | undefined => d?.deltas;

describe('DeltaFifoQueue', () => {
  describe('Add / Update / Delete (D-2, D-4)', () => {
    it('merges every change of one key into one Deltas, oldest first', () => {
      const { q } = makeQueue();
      q.event('Added', o('foo', 10));
      q.event('Updated', o('foo', 12));
      q.event('Deleted', o('foo', 15));
      expect(q.keys()).toEqual(['foo']);
      expect(deltas(q.pop())).toEqual([
        { type: 'Added', obj: o('foo', 10) },
        { type: 'Updated', obj: o('foo', 12) },
        { type: 'Deleted', obj: o('foo', 15) },
      ]);
      expect(q.pop()).toBeUndefined();
      expect(q.size).toBe(0);
    });

    it('without knownObjects ignores a delete of a key that is not pending', () => {
      const { q } = makeQueue();
      q.event('Added', o('foo', 10));
      q.event('Updated', o('bar', 15));
      q.event('Added', o('qux', 17));
      q.event('Deleted', o('qux', 18));
      q.event('Deleted', o('baz', 20));
      expect(popAll(q).map((d) => [d.key, d.deltas.map((x) => x.type)])).toEqual([
        ['foo', ['Added']],
        ['bar', ['Updated']],
        ['qux', ['Added', 'Deleted']],
      ]);
    });

    it('with knownObjects queues a delete of a known key and ignores an unknown one', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5), o('bar', 6), o('baz', 7)) });
      q.event('Added', o('foo', 10));
      q.event('Updated', o('bar', 15));
      q.event('Deleted', o('baz', 20));
      q.event('Deleted', o('nope', 1));
      expect(popAll(q).map((d) => d.deltas.map((x) => x.obj))).toEqual([[o('foo', 10)], [o('bar', 15)], [o('baz', 20)]]);
    });

    it('queues a delete of a pending key that the store does not know yet', () => {
      const { q } = makeQueue({ knownObjects: knownObjects() });
      q.event('Added', o('foo', 5));
      q.event('Deleted', o('foo', 6));
      expect(q.pending('foo')?.map((d) => d.type)).toEqual(['Added', 'Deleted']);
    });

    it('queues the delete (and reports) when knownObjects.getByKey throws: a missed delete is worse', () => {
      const boom = new Error('lister down');
      const { q, errors } = makeQueue({
        knownObjects: {
          listKeys: () => [],
          getByKey: () => {
            throw boom;
          },
        },
      });
      q.event('Deleted', o('foo', 1));
      expect(deltas(q.pop())).toEqual([{ type: 'Deleted', obj: o('foo', 1) }]);
      expect(errors).toEqual([boom]);
    });

    it('keys a tombstone by its own key', () => {
      const { q } = makeQueue();
      q.event('Added', o('a', 1));
      q.event('Deleted', dfsu('a', o('a', 1)) as unknown as Obj);
      expect(q.pending('a')?.map((d) => d.obj)).toEqual([o('a', 1), dfsu('a', o('a', 1))]);
    });
  });

  describe('FIFO order (D-3)', () => {
    it('keeps a key in its original place while it has pending deltas (line jumpers)', () => {
      const { q } = makeQueue();
      q.event('Added', o('foo', 10));
      q.event('Added', o('bar', 1));
      q.event('Added', o('foo', 11));
      q.event('Added', o('foo', 13));
      q.event('Added', o('zab', 30));
      const first = q.pop();
      expect(first?.key).toBe('foo');
      expect(first?.deltas.map((d) => d.obj)).toEqual([o('foo', 10), o('foo', 11), o('foo', 13)]);
      q.event('Added', o('foo', 14));
      expect(popAll(q).map((d) => [d.key, d.deltas.at(-1)?.obj])).toEqual([
        ['bar', o('bar', 1)],
        ['zab', o('zab', 30)],
        ['foo', o('foo', 14)],
      ]);
    });
  });

  describe('consecutive deletes (D-6)', () => {
    it('keeps the real object when a tombstone follows it', () => {
      const { q } = makeQueue();
      q.event('Added', o('a', 1));
      q.event('Deleted', o('a', 2));
      replace(q, []);
      expect(q.pending('a')).toEqual([
        { type: 'Added', obj: o('a', 1) },
        { type: 'Deleted', obj: o('a', 2) },
      ]);
    });

    it('replaces a tombstone by a real object that follows it', () => {
      const { q } = makeQueue();
      q.event('Added', o('a', 1));
      replace(q, []);
      q.event('Deleted', o('a', 3));
      expect(q.pending('a')).toEqual([
        { type: 'Added', obj: o('a', 1) },
        { type: 'Deleted', obj: o('a', 3) },
      ]);
    });

    it('keeps the older of two real deletes and the newer of two tombstones', () => {
      const { q } = makeQueue();
      q.event('Added', o('a', 1));
      q.event('Deleted', o('a', 2));
      q.event('Deleted', o('a', 3));
      expect(q.pending('a')?.map((d) => d.obj)).toEqual([o('a', 1), o('a', 2)]);

      const { q: q2 } = makeQueue();
      q2.event('Added', o('b', 1));
      q2.event('Deleted', dfsu('b', o('b', 1)) as unknown as Obj);
      q2.event('Deleted', dfsu('b', o('b', 9)) as unknown as Obj);
      expect(q2.pending('b')?.map((d) => d.obj)).toEqual([o('b', 1), dfsu('b', o('b', 9))]);
    });

    it('collapses only adjacent deletes and nothing else', () => {
      const { q } = makeQueue();
      q.event('Added', o('a', 1));
      q.event('Deleted', o('a', 2));
      q.event('Added', o('a', 3));
      q.event('Deleted', o('a', 4));
      q.event('Updated', o('a', 5));
      q.event('Updated', o('a', 5));
      expect(q.pending('a')?.map((d) => d.type)).toEqual(['Added', 'Deleted', 'Added', 'Deleted', 'Updated', 'Updated']);
    });
  });

  describe('Replace (D-7)', () => {
    it('merges a listed object into the pending deltas of its key', () => {
      const { q } = makeQueue();
      q.event('Added', o('foo', 10));
      replace(q, [o('foo', 15)]);
      expect(popAll(q).map((d) => d.deltas)).toEqual([
        [
          { type: 'Added', obj: o('foo', 10) },
          { type: 'Sync', obj: o('foo', 15) },
        ],
      ]);
    });

    it('queues the listed object after a pending Deleted of the same key', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 1)) });
      q.event('Deleted', o('foo', 1));
      replace(q, [o('foo', 2)]);
      expect(deltas(q.pop())).toEqual([
        { type: 'Deleted', obj: o('foo', 1) },
        { type: 'Sync', obj: o('foo', 2) },
      ]);
    });

    it('emits Replaced instead of Sync when asked', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5)), emitDeltaTypeReplaced: true });
      replace(q, [o('foo', 5)]);
      expect(popAll(q).map((d) => d.deltas)).toEqual([[{ type: 'Replaced', obj: o('foo', 5) }]]);
    });

    // client-go: TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue, with and without an (empty) lister.
    const obj = o('foo', 2);
    const objV2 = o('foo', 3);
    const onlyInQueue: [string, (q: DeltaFifoQueue<Obj>) => void, Delta<Obj>[], boolean?][] = [
      [
        'an added object is deleted by Replace',
        (q) => {
          q.event('Added', obj);
          replace(q, []);
        },
        [
          { type: 'Added', obj },
          { type: 'Deleted', obj: dfsu('foo', obj) },
        ],
      ],
      [
        'a replaced object gets a single delete',
        (q) => {
          q.event('Added', obj);
          replace(q, [obj]);
          replace(q, []);
        },
        [
          { type: 'Added', obj },
          { type: 'Replaced', obj },
          { type: 'Deleted', obj: dfsu('foo', obj) },
        ],
        true,
      ],
      [
        'a deleted object keeps its single real delete',
        (q) => {
          q.event('Added', obj);
          q.event('Deleted', obj);
          replace(q, []);
        },
        [
          { type: 'Added', obj },
          { type: 'Deleted', obj },
        ],
      ],
      [
        'synced objects get a single delete',
        (q) => {
          q.event('Added', obj);
          replace(q, [obj]);
          replace(q, [obj]);
          replace(q, []);
        },
        [
          { type: 'Added', obj },
          { type: 'Sync', obj },
          { type: 'Sync', obj },
          { type: 'Deleted', obj: dfsu('foo', obj) },
        ],
      ],
      [
        'an added object gets a single delete over several Replaces',
        (q) => {
          q.event('Added', obj);
          replace(q, []);
          replace(q, []);
        },
        [
          { type: 'Added', obj },
          { type: 'Deleted', obj: dfsu('foo', obj) },
        ],
      ],
      [
        'an added, deleted and re-added object is deleted with its newest state',
        (q) => {
          q.event('Added', obj);
          q.event('Deleted', obj);
          q.event('Added', objV2);
          replace(q, []);
        },
        [
          { type: 'Added', obj },
          { type: 'Deleted', obj },
          { type: 'Added', obj: objV2 },
          { type: 'Deleted', obj: dfsu('foo', objV2) },
        ],
      ],
    ];
    for (const [name, ops, expected, replaced] of onlyInQueue) {
      for (const withLister of [true, false]) {
        it(`${name} (${withLister ? 'with' : 'without'} knownObjects)`, () => {
          const { q } = makeQueue({
            knownObjects: withLister ? knownObjects() : undefined,
            emitDeltaTypeReplaced: replaced === true,
          });
          ops(q);
          expect(deltas(q.pop())).toEqual(expected);
          expect(q.size).toBe(0);
        });
      }
    }

    it('tombstones a known key absent from the list with the stored object, after the listed keys', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5), o('bar', 6), o('baz', 7)) });
      q.event('Deleted', o('baz', 10));
      replace(q, [o('foo', 5)]);
      expect(popAll(q).map((d) => d.deltas)).toEqual([
        [{ type: 'Deleted', obj: o('baz', 10) }],
        [{ type: 'Sync', obj: o('foo', 5) }],
        [{ type: 'Deleted', obj: dfsu('bar', o('bar', 6)) }],
      ]);
    });

    it('tombstones a pending key with its newest pending object, not the stored one', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5), o('bar', 6), o('baz', 7)) });
      q.event('Added', o('baz', 10));
      replace(q, [o('foo', 5)]);
      expect(popAll(q).map((d) => d.deltas)).toEqual([
        [
          { type: 'Added', obj: o('baz', 10) },
          { type: 'Deleted', obj: dfsu('baz', o('baz', 10)) },
        ],
        [{ type: 'Sync', obj: o('foo', 5) }],
        [{ type: 'Deleted', obj: dfsu('bar', o('bar', 6)) }],
      ]);
    });

    it('tombstones a deleted-and-recreated pending key with the recreated object', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5), o('bar', 6), o('baz', 7)) });
      q.event('Deleted', o('bar', 6));
      q.event('Added', o('bar', 100));
      replace(q, [o('foo', 5)]);
      expect(popAll(q).map((d) => d.deltas)).toEqual([
        [
          { type: 'Deleted', obj: o('bar', 6) },
          { type: 'Added', obj: o('bar', 100) },
          { type: 'Deleted', obj: dfsu('bar', o('bar', 100)) },
        ],
        [{ type: 'Sync', obj: o('foo', 5) }],
        [{ type: 'Deleted', obj: dfsu('baz', o('baz', 7)) }],
      ]);
    });

    it('uses the newest listed state for a key that a later Replace drops', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5), o('bar', 6), o('baz', 7)) });
      replace(q, [o('bar', 100), o('foo', 5)]);
      replace(q, [o('foo', 5)]);
      expect(popAll(q).map((d) => d.deltas)).toEqual([
        [
          { type: 'Sync', obj: o('bar', 100) },
          { type: 'Deleted', obj: dfsu('bar', o('bar', 100)) },
        ],
        [
          { type: 'Sync', obj: o('foo', 5) },
          { type: 'Sync', obj: o('foo', 5) },
        ],
        [{ type: 'Deleted', obj: dfsu('baz', o('baz', 7)) }],
      ]);
    });

    it('without knownObjects only tombstones pending keys', () => {
      const { q } = makeQueue();
      q.event('Added', o('baz', 10));
      replace(q, [o('foo', 5)]);
      expect(popAll(q).map((d) => d.deltas)).toEqual([
        [
          { type: 'Added', obj: o('baz', 10) },
          { type: 'Deleted', obj: dfsu('baz', o('baz', 10)) },
        ],
        [{ type: 'Sync', obj: o('foo', 5) }],
      ]);
    });

    it('never nests a tombstone inside a tombstone', () => {
      const { q } = makeQueue();
      q.event('Added', o('a', 1));
      replace(q, []);
      replace(q, []);
      const last = q.pending('a')?.at(-1)?.obj;
      expect(last).toEqual(dfsu('a', o('a', 1)));
      expect((last as DeletedFinalStateUnknown<Obj>).obj).not.toBeInstanceOf(DeletedFinalStateUnknown);
    });

    it('appends tombstones for known keys in listKeys() order, with an empty tombstone when the object is gone', () => {
      const { q } = makeQueue({
        knownObjects: { listKeys: () => ['z', 'ghost', 'a'], getByKey: (k) => (k === 'ghost' ? undefined : o(k, 0)) },
      });
      replace(q, []);
      expect(popAll(q).map((d) => d.deltas[0]?.obj)).toEqual([dfsu('z', o('z', 0)), dfsu('ghost', undefined), dfsu('a', o('a', 0))]);
    });

    it('keeps duplicate listed keys as separate deltas of one key', () => {
      const { q } = makeQueue();
      replace(q, [o('a', 1), o('a', 2)]);
      expect(q.keys()).toEqual(['a']);
      expect(q.pending('a')?.map((d) => d.obj)).toEqual([o('a', 1), o('a', 2)]);
    });

    it('reports a listKeys() failure and still queues the listed items', () => {
      const boom = new Error('no keys');
      const { q, errors } = makeQueue({
        knownObjects: {
          listKeys: () => {
            throw boom;
          },
          getByKey: () => undefined,
        },
      });
      replace(q, [o('a', 1)]);
      expect(errors).toEqual([boom]);
      expect(q.keys()).toEqual(['a']);
    });
  });

  describe('Resync (D-8)', () => {
    it('queues Sync with the stored object for known keys', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5)) });
      q.resync();
      expect(q.pending('foo')).toEqual([{ type: 'Sync', obj: o('foo', 5) }]);
    });

    it('skips a key that has pending deltas (update/resync race)', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5)) });
      q.event('Updated', o('foo', 6));
      q.resync();
      expect(popAll(q).map((d) => d.deltas)).toEqual([[{ type: 'Updated', obj: o('foo', 6) }]]);
    });

    it('does not queue Sync after a pending delete of the key', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5)) });
      q.event('Deleted', o('foo', 10));
      q.resync();
      expect(q.pending('foo')?.map((d) => d.type)).toEqual(['Deleted']);
    });

    it('is a no-op without knownObjects, and skips keys the store no longer has', () => {
      const { q } = makeQueue();
      q.resync();
      expect(q.size).toBe(0);
      const { q: q2 } = makeQueue({ knownObjects: { listKeys: () => ['gone'], getByKey: () => undefined } });
      q2.resync();
      expect(q2.size).toBe(0);
    });

    it('does not transform the stored objects and does not count as populating', () => {
      let calls = 0;
      const { q } = makeQueue({
        knownObjects: knownObjects(o('foo', 5)),
        transform: (x) => {
          calls++;
          return { ...x, v: 'T' };
        },
      });
      q.resync();
      expect(calls).toBe(0);
      expect(q.pending('foo')).toEqual([{ type: 'Sync', obj: o('foo', 5) }]);
      expect(q.hasSynced).toBe(false);
    });
  });

  describe('transform (D-5)', () => {
    const tag = (x: Obj): Obj => ({ ...x, v: `t${x.v}` });

    it('runs once on objects from Add, Update, Delete and Replace, and never on tombstones', () => {
      const seen: Obj[] = [];
      const { q } = makeQueue({
        transform: (x) => {
          seen.push(x);
          return tag(x);
        },
      });
      q.event('Added', o('a', 1));
      q.event('Updated', o('a', 2));
      q.event('Deleted', o('a', 3));
      replace(q, [o('b', 4)]);
      expect(seen).toEqual([o('a', 1), o('a', 2), o('a', 3), o('b', 4)]);
      expect(popAll(q).map((d) => d.deltas)).toEqual([
        [
          { type: 'Added', obj: o('a', 't1') },
          { type: 'Updated', obj: o('a', 't2') },
          { type: 'Deleted', obj: o('a', 't3') },
        ],
        [{ type: 'Sync', obj: o('b', 't4') }],
      ]);
      q.event('Added', o('c', 5));
      replace(q, []);
      expect(seen).toHaveLength(5);
      expect(q.pending('c')?.at(-1)?.obj).toEqual(dfsu('c', o('c', 't5')));
    });

    it('reports a throwing transform as a TransformError naming the object and does not queue it', () => {
      const boom = new Error('bad object');
      const { q, errors } = makeQueue({
        transform: (x) => {
          if (x.v === 'bad') throw boom;
          return x;
        },
      });
      q.event('Added', o('a', 'bad'));
      q.event('Added', o('b', 1));
      expect(q.keys()).toEqual(['b']);
      expect(errors).toHaveLength(1);
      const err = errors[0];
      expect(err).toBeInstanceOf(TransformError);
      expect((err as TransformError).key).toBe('a');
      expect((err as TransformError).obj).toEqual(o('a', 'bad'));
      expect(err?.cause).toBe(boom);
      expect(err?.message).toContain('"a"');
    });

    it('does not tombstone a listed object whose transform failed', () => {
      const { q, errors } = makeQueue({
        knownObjects: knownObjects(o('a', 1), o('b', 1)),
        transform: (x) => {
          if (x.v === 'bad') throw new Error('nope');
          return x;
        },
      });
      replace(q, [o('a', 'bad')]);
      expect(errors).toHaveLength(1);
      expect(popAll(q).map((d) => [d.key, d.deltas.map((x) => x.type)])).toEqual([['b', ['Deleted']]]);
    });
  });

  describe('key errors', () => {
    it('reports a throwing key function and queues nothing for that object', () => {
      const { q, errors } = makeQueue({
        keyFunc: (x) => {
          if (x.name === '') throw new Error('no name');
          return x.name;
        },
      });
      q.event('Added', o('', 1));
      replace(q, [o('', 2), o('b', 3)]);
      q.event('Deleted', o('', 4));
      expect(q.keys()).toEqual(['b']);
      expect(errors).toHaveLength(3);
      expect(errors.every((e) => e instanceof KeyError)).toBe(true);
      expect((errors[1] as KeyError).obj).toEqual(o('', 2));
    });

    it('treats a key function returning a non-string as a failure', () => {
      const { q, errors } = makeQueue({ keyFunc: () => 42 as unknown as string });
      q.event('Added', o('a', 1));
      expect(q.size).toBe(0);
      expect(errors[0]).toBeInstanceOf(KeyError);
    });
  });

  describe('hasSynced and isInInitialList (D-9, D-13, D-16)', () => {
    const cases: [string, (q: DeltaFifoQueue<Obj>) => void, boolean][] = [
      ['nothing happened', () => {}, false],
      ['an Add before any Replace', (q) => q.event('Added', o('a', 1)), true],
      ['an Update before any Replace', (q) => q.event('Updated', o('a', 1)), true],
      ['an ignored Delete before any Replace', (q) => q.event('Deleted', o('a', 1)), true],
      ['a first Replace([])', (q) => replace(q, []), true],
      ['a first Replace of two items', (q) => replace(q, [o('a', 1), o('b', 2)]), false],
      [
        'a first Replace of two items, one popped',
        (q) => {
          replace(q, [o('a', 1), o('b', 2)]);
          q.pop();
        },
        false,
      ],
      [
        'a first Replace of two items, both popped',
        (q) => {
          replace(q, [o('a', 1), o('b', 2)]);
          q.pop();
          q.pop();
        },
        true,
      ],
      [
        'a first Replace with a duplicate key, popped once',
        (q) => {
          replace(q, [o('a', 1), o('a', 2)]);
          q.pop();
        },
        true,
      ],
      ['a Resync only', (q) => q.resync(), false],
    ];
    for (const [name, ops, expected] of cases) {
      it(`is ${expected} after ${name}`, () => {
        const { q } = makeQueue();
        ops(q);
        expect(q.hasSynced).toBe(expected);
      });
    }

    it('counts tombstones of the first Replace and flags every initial Deltas', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('foo', 5), o('bar', 6), o('baz', 7)) });
      replace(q, [o('foo', 5)]);
      const flags: [string, boolean, boolean][] = [];
      for (let d = q.pop(); d !== undefined; d = q.pop()) flags.push([d.key, d.isInInitialList, q.hasSynced]);
      expect(flags).toEqual([
        ['foo', true, false],
        ['bar', true, false],
        ['baz', true, true],
      ]);
      q.event('Added', o('new', 1));
      expect(q.pop()?.isInInitialList).toBe(false);
    });

    it('does not flag as initial what follows an Add that came before the list', () => {
      const { q } = makeQueue();
      q.event('Added', o('a', 1));
      replace(q, [o('b', 1), o('c', 1)]);
      expect(popAll(q).map((d) => d.isInInitialList)).toEqual([false, false, false]);
    });

    it('counts a key that a Resync queued before the first Replace', () => {
      const { q } = makeQueue({ knownObjects: knownObjects(o('k', 1)) });
      q.resync();
      replace(q, [o('a', 1)]);
      expect(q.keys()).toEqual(['k', 'a']);
      q.pop();
      expect(q.hasSynced).toBe(false);
      q.pop();
      expect(q.hasSynced).toBe(true);
    });

    it('does not count a listed object the transform rejected, so sync still happens', () => {
      const { q } = makeQueue({
        transform: (x) => {
          if (x.v === 'bad') throw new Error('nope');
          return x;
        },
      });
      replace(q, [o('a', 'bad'), o('b', 1)]);
      expect(q.hasSynced).toBe(false);
      q.pop();
      expect(q.hasSynced).toBe(true);
    });

    it('is sticky: a later Replace does not unsync', () => {
      const { q } = makeQueue();
      replace(q, []);
      replace(q, [o('a', 1)]);
      expect(q.hasSynced).toBe(true);
      expect(q.pop()?.isInInitialList).toBe(false);
    });
  });

  describe('pop and clear', () => {
    it('hands out frozen Deltas', () => {
      const { q } = makeQueue();
      q.event('Added', o('a', 1));
      const d = q.pop();
      expect(Object.isFrozen(d)).toBe(true);
      expect(Object.isFrozen(d?.deltas)).toBe(true);
      expect(Object.isFrozen(d?.deltas[0])).toBe(true);
    });

    it('keeps FIFO order across many pops, re-adds and the internal cut of the popped prefix', () => {
      const { q } = makeQueue();
      const n = 3000;
      for (let i = 0; i < n; i++) q.event('Added', o(`k${i}`, i));
      const popped: string[] = [];
      for (let i = 0; i < 2000; i++) popped.push(q.pop()?.key ?? 'none');
      // A popped key goes to the back; a pending one keeps its place.
      q.event('Added', o('k0', 'again'));
      q.event('Added', o('k2500', 'again'));
      for (let d = q.pop(); d !== undefined; d = q.pop()) popped.push(d.key);
      const expected = [...Array.from({ length: n }, (_, i) => `k${i}`), 'k0'];
      expect(popped).toEqual(expected);
      expect(q.keys()).toEqual([]);
    });

    it('clear drops every pending key', () => {
      const { q } = makeQueue();
      q.event('Added', o('a', 1));
      q.event('Added', o('b', 1));
      q.clear();
      expect(q.size).toBe(0);
      expect(q.pop()).toBeUndefined();
    });
  });
});
