import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { informer } from '../../src/informer/index.js';
import { VeryShortWatchError } from '../../src/reflector/errors.js';
import { DecodeError, KubeApiError } from '../../src/errors/api/index.js';
import type { ListerWatcher, ObjectList, WatchEvent } from '../../src/sources/types.js';
import { IndexError, KeyError, type KubeObject } from '../../src/store/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { params, wildMetadata, wildObject } from './fuzzKit.js';
import { Lifetimes } from '../helpers/lifetimes.js';

type Obj = KubeObject & { spec?: unknown };

/**
 * An in-memory ListerWatcher playing a broken server: one list of `items`,
 * one watch of `events`, then watches that stay open until aborted. `watches` counts the
 * watch calls: a second one means every scripted event was consumed.
 */
function scripted(items: readonly unknown[], events: readonly unknown[]): ListerWatcher<Obj> & { watches: number; versions: unknown[] } {
  const lw = {
    watches: 0,
    versions: [] as unknown[],
    async list(): Promise<ObjectList<Obj>> {
      return { metadata: { resourceVersion: '1' }, items: items as Obj[] };
    },
    watch(opts: { resourceVersion?: unknown }, signal: AbortSignal): AsyncIterable<WatchEvent<Obj>> {
      lw.watches++;
      lw.versions.push(opts.resourceVersion);
      const first = lw.watches === 1;
      return (async function* () {
        if (first) {
          yield* events as WatchEvent<Obj>[];
          // A watch that ends with nothing in it is retried only after a backoff; a bookmark keeps the run fast.
          if (events.length === 0) yield { type: 'BOOKMARK', object: { metadata: { resourceVersion: '999' } } } as WatchEvent<Obj>;
          return;
        }
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      })();
    },
  };
  return lw;
}

/**
 * The key an informer can file an object under, or undefined when it must
 * skip (and report) it: list items and watch objects must be named objects,
 * and a watch object's resourceVersion, the next resume point, a string.
 */
function keyOf(obj: unknown, watched = false): string | undefined {
  const meta = (obj as { metadata?: unknown } | null)?.metadata;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return undefined;
  const { name, namespace, resourceVersion } = meta as { name?: unknown; namespace?: unknown; resourceVersion?: unknown };
  if (typeof name !== 'string' || name === '' || name.includes('/')) return undefined;
  if (watched && resourceVersion !== undefined && resourceVersion !== null && typeof resourceVersion !== 'string') return undefined;
  if (typeof namespace !== 'string' || namespace === '') return name;
  return namespace.includes('/') ? undefined : `${namespace}/${name}`;
}

/** What the cache must hold after the list and the events: usable ones applied in order, the rest skipped. */
function model(items: readonly unknown[], events: readonly { type?: unknown; object?: unknown }[]): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const item of items) {
    const key = keyOf(item);
    if (key !== undefined) m.set(key, item);
  }
  for (const ev of events) {
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') continue;
    const key = keyOf(ev.object, true);
    if (key === undefined) continue;
    if (ev.type === 'DELETED') m.delete(key);
    else m.set(key, ev.object);
  }
  return m;
}

// Objects that are keyable often enough for the cache to fill, with odd ones mixed in.
const obj = fc.oneof(
  { weight: 3, arbitrary: fc.record({ metadata: fc.record({ name: fc.constantFrom('a', 'b', 'c'), namespace: fc.constantFrom('x', 'y'), resourceVersion: fc.nat().map(String) }), spec: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ metadata: wildMetadata, spec: fc.nat() }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: wildObject },
);

const event = fc.oneof(
  { weight: 8, arbitrary: fc.record({ type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), object: obj }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('BOOKMARK'), object: fc.oneof(fc.record({ metadata: fc.record({ resourceVersion: fc.oneof(fc.nat().map(String), fc.integer(), fc.constant(null)) }) }), wildObject) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.oneof(fc.constantFrom('SYNC', 'added', '', 'ERROR'), fc.integer(), fc.constant(null)), object: obj }, { requiredKeys: [] }) },
);

// A watch whose only events were skipped counts as one that closed without any event.
const EXPECTED_ERRORS = [DecodeError, KeyError, IndexError, KubeApiError, VeryShortWatchError];

describe('an informer fed a broken server', () => {
  it('property: unusable list items and watch events are reported as typed errors and skipped; the cache holds exactly the usable ones', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(obj, { maxLength: 6 }), fc.array(event, { maxLength: 12 }), async (items, events) => {
        const lw = scripted(items, events);
        const life = new Lifetimes();
        const inf = life.track(informer<Obj>(lw));
        const errors: Error[] = [];
        const sub = inf.errors$.subscribe((e) => errors.push(e));
        try {
          inf.subscribe();
          await waitFor(() => lw.watches >= 2, 'every scripted event to be consumed', 5_000);
          const want = model(items, events);
          expect(inf.store.listKeys().sort()).toEqual([...want.keys()].sort());
          for (const [key, o] of want) expect(inf.store.getByKey(key)).toEqual(o);
          for (const err of errors) expect(EXPECTED_ERRORS.some((cls) => err instanceof cls), `${err.name}: ${err.message}`).toBe(true);
          // A resourceVersion of the wrong type in an event must not become the one a watch resumes from.
          for (const rv of lw.versions) expect(rv === undefined || typeof rv === 'string', `watch resumed from ${String(rv)}`).toBe(true);
          const skipped = items.filter((i) => keyOf(i) === undefined).length;
          expect(errors.length).toBeGreaterThanOrEqual(skipped);
        } finally {
          await life.end();
          sub.unsubscribe();
        }
      }),
      params(100),
    );
  });
});
