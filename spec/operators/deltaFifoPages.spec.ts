import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { deltaFifo } from '../../src/operators/deltaFifo.js';
import type { Deltas } from '../../src/operators/types.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import { createIndexer, type Indexer } from '../../src/store/index.js';

// A list delivered page by page (ReplacePage…, ReplaceEnd) must leave the store exactly as one Replace of the
// final list would, while each page is applied as it comes (D-21).

interface Pod {
  readonly metadata: { readonly name: string; readonly resourceVersion: string };
}

const pod = (name: string, rv: number): Pod => ({ metadata: { name, resourceVersion: String(rv) } });

/** A store fed the way the informer feeds it, recording every delete it applies. */
function harness(initial: readonly Pod[] = []) {
  const store: Indexer<Pod> = createIndexer<Pod>({ freeze: false });
  for (const p of initial) store.add(p);
  const input = new Subject<ReflectorEvent<Pod>>();
  const emitted: Deltas<Pod>[] = [];
  const deleted: string[] = [];
  let synced = 0;
  input.pipe(deltaFifo<Pod>({ knownObjects: store, onSynced: () => synced++ })).subscribe((d) => {
    emitted.push(d);
    for (const delta of d.deltas) {
      if (delta.type === 'Deleted') {
        deleted.push(d.key);
        store.delete(delta.obj);
      } else if (store.getByKey(d.key) === undefined) store.add(delta.obj as Pod);
      else store.update(delta.obj as Pod);
    }
  });
  return {
    store,
    emitted,
    deleted,
    synced: () => synced,
    send: (e: ReflectorEvent<Pod>) => input.next(e),
    contents: () => new Map(store.listKeys().sort().map((k) => [k, store.getByKey(k)?.metadata.resourceVersion])),
  };
}

/** Cuts `items` into pages at the given fractions. */
function paginate<X>(items: readonly X[], cuts: readonly number[]): X[][] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * (items.length + 1))))].sort((a, b) => a - b);
  const pages: X[][] = [];
  let from = 0;
  for (const c of at) {
    if (c <= from || c >= items.length) continue;
    pages.push(items.slice(from, c));
    from = c;
  }
  pages.push(items.slice(from));
  return pages;
}

const NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
const podSet = fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: NAMES.length }).map((names) => names.map((n, i) => pod(n, i + 1)));
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 });

describe('deltaFifo: a list delivered page by page', () => {
  it('property: pages, with abandoned attempts before them, give the store and the deletions one Replace gives', () => {
    fc.assert(
      fc.property(podSet, podSet, cuts, fc.array(fc.tuple(podSet, cuts), { maxLength: 2 }), (before, list, listCuts, abandoned) => {
        const whole = harness(before);
        whole.send({ type: 'Replace', items: list, resourceVersion: '9' });

        const paged = harness(before);
        // Attempts that failed part-way: some of their pages went out, and no ReplaceEnd.
        const sentBefore: Pod[] = [];
        for (const [attempt, attemptCuts] of abandoned) {
          const pages = paginate(attempt, attemptCuts);
          pages.slice(0, Math.max(1, pages.length - 1)).forEach((items, i) => {
            sentBefore.push(...items);
            paged.send({ type: 'ReplacePage', items, first: i === 0 });
          });
        }
        const pages = paginate(list, listCuts);
        pages.forEach((items, i) => {
          paged.send({ type: 'ReplacePage', items, first: i === 0 });
          // Applied as it came: nothing of this page is waiting in the queue.
          for (const p of items) expect(paged.store.getByKey(p.metadata.name)).toBe(p);
        });
        paged.send({ type: 'ReplaceEnd', resourceVersion: '9' });

        expect(paged.contents()).toEqual(whole.contents());
        const unlisted = (names: readonly string[]) => names.filter((k) => !list.some((p) => p.metadata.name === k));
        expect(new Set(whole.deleted)).toEqual(new Set(unlisted(before.map((p) => p.metadata.name))));
        // Paged, what the abandoned attempts stored (the pages they sent, not the one they never got) and the
        // final list lacks is deleted too.
        expect(new Set(paged.deleted)).toEqual(new Set(unlisted([...before, ...sentBefore].map((p) => p.metadata.name))));
      }),
      { numRuns: 300 },
    );
  });

  it('the first list is initial until its end: every page is isInInitialList, and onSynced waits for ReplaceEnd', () => {
    const h = harness();
    h.send({ type: 'ReplacePage', items: [pod('a', 1), pod('b', 2)], first: true });
    h.send({ type: 'ReplacePage', items: [pod('c', 3)], first: false });
    expect(h.emitted.map((d) => [d.key, d.isInInitialList])).toEqual([
      ['a', true],
      ['b', true],
      ['c', true],
    ]);
    expect(h.synced()).toBe(0);
    h.send({ type: 'ReplaceEnd', resourceVersion: '3' });
    expect(h.synced()).toBe(1);
    h.send({ type: 'Modified', obj: pod('a', 4), resourceVersion: '4' });
    expect(h.emitted.at(-1)).toMatchObject({ key: 'a', isInInitialList: false });
  });

  it('a first page starts the list over: keys only the abandoned attempt listed are deleted at the end', () => {
    const h = harness([pod('old', 1)]);
    h.send({ type: 'ReplacePage', items: [pod('a', 2), pod('gone', 3)], first: true });
    h.send({ type: 'ReplacePage', items: [pod('a', 4)], first: true });
    h.send({ type: 'ReplacePage', items: [pod('b', 5)], first: false });
    expect(h.deleted).toEqual([]);
    h.send({ type: 'ReplaceEnd', resourceVersion: '5' });
    expect(h.deleted.sort()).toEqual(['gone', 'old']);
    expect(h.contents()).toEqual(new Map([['a', '4'], ['b', '5']]));
    const tombstone = h.emitted.find((d) => d.key === 'old')?.deltas[0]?.obj;
    expect(tombstone).toBeInstanceOf(DeletedFinalStateUnknown);
  });

  it('an event between pages abandons the list they began: the end counts only the pages after it', () => {
    const h = harness([pod('kept', 1)]);
    h.send({ type: 'ReplacePage', items: [pod('a', 2)], first: true });
    h.send({ type: 'Added', obj: pod('b', 3), resourceVersion: '3' });
    h.send({ type: 'ReplacePage', items: [pod('c', 4)], first: false });
    h.send({ type: 'ReplaceEnd', resourceVersion: '4' });
    // Only the list the last pages belong to counts: it listed 'c' alone.
    expect(h.deleted.sort()).toEqual(['a', 'b', 'kept']);
  });
});
