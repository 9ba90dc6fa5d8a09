import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { deltaFifo } from '../../src/operators/deltaFifo.js';
import type { Deltas } from '../../src/operators/types.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import { deletionHandlingMetaNamespaceKey } from '../../src/store/keys.js';
import { createIndexer, type Indexer, type KeyListerGetter } from '../../src/store/index.js';

// For any server history seen through a watch that may drop events until the
// next relist, applying the emitted Deltas the way an informer does (C-4)
// must leave the store equal to the state the events describe, after every event.

interface Pod {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion: string };
  readonly transformed?: true;
}

// Few keys, so that histories revisit the same key often.
const KEYS = ['a', 'b', 'ns/c'] as const;

type Command =
  | { readonly op: 'create' | 'update' | 'delete'; readonly key: string }
  | { readonly op: 'relist'; readonly order: readonly number[] }
  | { readonly op: 'dropWatch' | 'resync' | 'bookmark' };

const key = fc.constantFrom(...KEYS);
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('create' as const), key }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('update' as const), key }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), key }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('relist' as const), order: fc.array(fc.nat(), { maxLength: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('dropWatch' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('resync' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('bookmark' as const) }) },
);

function makePod(k: string, rv: number): Pod {
  const slash = k.indexOf('/');
  const metadata = slash === -1 ? { name: k, resourceVersion: String(rv) } : { namespace: k.slice(0, slash), name: k.slice(slash + 1), resourceVersion: String(rv) };
  return { metadata };
}

/** A server plus a watch that can lose events until the next relist; yields the reflector's events. */
function reflectorEvents(commands: readonly Command[], startWithList: boolean): ReflectorEvent<Pod>[] {
  const server = new Map<string, Pod>();
  let rv = 1;
  let watching = !startWithList;
  const events: ReflectorEvent<Pod>[] = [];
  const relist = (order: readonly number[]): void => {
    // A deterministic shuffle from the generated numbers: lists need not come in key order.
    const items = [...server.values()];
    for (let i = items.length - 1; i > 0; i--) {
      const j = (order[i % Math.max(order.length, 1)] ?? 0) % (i + 1);
      [items[i], items[j]] = [items[j] as Pod, items[i] as Pod];
    }
    events.push({ type: 'Replace', items, resourceVersion: String(rv) });
    watching = true;
  };
  if (startWithList) relist([]);
  for (const c of commands) {
    switch (c.op) {
      case 'create':
      case 'update': {
        const existed = server.has(c.key);
        if (c.op === 'update' && !existed) break;
        const obj = makePod(c.key, ++rv);
        server.set(c.key, obj);
        if (watching) events.push({ type: existed ? 'Modified' : 'Added', obj, resourceVersion: String(rv) });
        break;
      }
      case 'delete': {
        const old = server.get(c.key);
        if (old === undefined) break;
        server.delete(c.key);
        const obj = makePod(c.key, ++rv);
        if (watching) events.push({ type: 'Deleted', obj, resourceVersion: String(rv) });
        break;
      }
      case 'relist':
        relist(c.order);
        break;
      case 'dropWatch':
        watching = false;
        break;
      case 'resync':
        events.push({ type: 'Resync' });
        break;
      case 'bookmark':
        events.push({ type: 'Bookmark', resourceVersion: String(rv) });
        break;
    }
  }
  return events;
}

/** What the events say the client should hold: a relist replaces everything, watch events patch it. */
function describedState(events: readonly ReflectorEvent<Pod>[], transform: (p: Pod) => Pod): Map<string, Pod> {
  const state = new Map<string, Pod>();
  for (const e of events) {
    if (e.type === 'Replace') {
      state.clear();
      for (const item of e.items) state.set(deletionHandlingMetaNamespaceKey(item), transform(item));
    } else if (e.type === 'Added' || e.type === 'Modified') {
      state.set(deletionHandlingMetaNamespaceKey(e.obj), transform(e.obj));
    } else if (e.type === 'Deleted') {
      state.delete(deletionHandlingMetaNamespaceKey(e.obj));
    }
  }
  return state;
}

/** The informer's Indexer, driven as C-4 says: presence, not the delta type, picks add or update. */
class Store implements KeyListerGetter<Pod> {
  readonly indexer: Indexer<Pod> = createIndexer<Pod>();
  // Collected, not thrown: an exception inside a subscriber's next is reported asynchronously by rxjs.
  readonly problems: string[] = [];
  get items(): Map<string, Pod> {
    return new Map(this.indexer.listKeys().map((k) => [k, this.indexer.getByKey(k) as Pod]));
  }
  listKeys(): string[] {
    return this.indexer.listKeys();
  }
  getByKey(k: string): Pod | undefined {
    return this.indexer.getByKey(k);
  }
  apply(d: Deltas<Pod>): void {
    for (const delta of d.deltas) {
      const k = this.indexer.keyOf(delta.obj);
      if (k !== d.key) this.problems.push(`delta keyed ${k} inside Deltas for ${d.key}`);
      if (delta.type === 'Deleted') this.indexer.delete(delta.obj);
      else {
        if (delta.obj instanceof DeletedFinalStateUnknown) this.problems.push(`${delta.type} carries a tombstone for ${d.key}`);
        if (this.indexer.getByKey(d.key) === undefined) this.indexer.add(delta.obj as Pod);
        else this.indexer.update(delta.obj as Pod);
      }
    }
  }
}

const markTransformed = (p: Pod): Pod => (p.transformed === true ? p : { ...p, transformed: true });
const identity = (p: Pod): Pod => p;

describe('deltaFifo property', () => {
  it('keeps a consumer store equal to the state the events describe, with no key lost or emitted twice', () => {
    fc.assert(
      fc.property(
        fc.array(command, { maxLength: 40, size: 'max' }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (commands, startWithList, emitDeltaTypeReplaced, useTransform) => {
          const events = reflectorEvents(commands, startWithList);
          const transform = useTransform ? markTransformed : identity;
          const store = new Store();
          const input = new Subject<ReflectorEvent<Pod>>();
          let emittedThisEvent: string[] = [];
          const initialFlags: boolean[] = [];
          let syncedCalls = 0;
          const errors: Error[] = [];
          input
            .pipe(
              deltaFifo<Pod>({
                knownObjects: store,
                emitDeltaTypeReplaced,
                ...(useTransform && { transform: markTransformed }),
                onError: (e) => errors.push(e),
                onSynced: () => syncedCalls++,
              }),
            )
            .subscribe((d) => {
              if (d.deltas.length === 0) store.problems.push(`empty Deltas for ${d.key}`);
              if (emittedThisEvent.includes(d.key)) store.problems.push(`${d.key} emitted twice for one event`);
              emittedThisEvent.push(d.key);
              initialFlags.push(d.isInInitialList);
              store.apply(d);
            });

          for (let i = 0; i < events.length; i++) {
            emittedThisEvent = [];
            input.next(events[i] as ReflectorEvent<Pod>);
            const expected = describedState(events.slice(0, i + 1), transform);
            expect(new Map([...store.items].sort())).toEqual(new Map([...expected].sort()));
            expect(store.problems).toEqual([]);
          }

          expect(errors).toEqual([]);
          const populatedAt = events.findIndex((e) => e.type !== 'Resync' && e.type !== 'Bookmark');
          expect(syncedCalls).toBe(populatedAt === -1 ? 0 : 1);
          // Only a first relist (one before any watch event) produces initial Deltas, and they come first.
          const firstInitial = initialFlags.indexOf(false);
          const initialCount = firstInitial === -1 ? initialFlags.length : firstInitial;
          expect(initialFlags.slice(initialCount).every((f) => !f)).toBe(true);
          const first = events[populatedAt];
          expect(initialCount).toBe(first?.type === 'Replace' ? first.items.length : 0);
        },
      ),
      {
        numRuns: 500,
        examples: [
          // The missed delete: only the relist can reveal it, as a tombstone for the stored key.
          [[{ op: 'create', key: 'a' }, { op: 'dropWatch' }, { op: 'delete', key: 'a' }, { op: 'relist', order: [] }], true, true, false],
        ],
      },
    );
  });

  it('converges to the described state when the consumer feeds further events from inside next', () => {
    fc.assert(
      fc.property(
        fc.array(command, { maxLength: 40, size: 'max' }),
        fc.boolean(),
        fc.array(fc.nat(3), { minLength: 1, maxLength: 16 }),
        (commands, startWithList, reenter) => {
          // reenter[i]: how many further events the consumer feeds from inside its i-th next.
          const events = reflectorEvents(commands, startWithList);
          const store = new Store();
          const input = new Subject<ReflectorEvent<Pod>>();
          let next = 0;
          let emitted = 0;
          const feed = (): void => {
            const e = events[next++];
            if (e !== undefined) input.next(e);
          };
          input.pipe(deltaFifo<Pod>({ knownObjects: store })).subscribe((d) => {
            // As the informer does: the store is updated before anything else can happen.
            store.apply(d);
            const more = reenter[emitted++ % reenter.length] ?? 0;
            for (let i = 0; i < more; i++) feed();
          });
          while (next < events.length) feed();
          const expected = describedState(events, identity);
          expect(new Map([...store.items].sort())).toEqual(new Map([...expected].sort()));
          expect(store.problems).toEqual([]);
        },
      ),
      { numRuns: 500 },
    );
  });
});
