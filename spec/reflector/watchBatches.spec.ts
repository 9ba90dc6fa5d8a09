/**
 * LW-8: a source that offers `watchBatches` is watched through it, with the same events reflect()
 * would get from `watch`; a source without it is watched through `watch`.
 */
import { describe, expect, it } from 'vitest';
import { reflect } from '../../src/reflector/index.js';
import type { ReflectorEvent } from '../../src/reflector/index.js';
import type { ListerWatcher, ObjectList, WatchEvent } from '../../src/sources/types.js';
import { waitFor } from '../helpers/waitFor.js';

interface Pod {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion: string };
}
const pod = (name: string, rv: number): Pod => ({ metadata: { name, namespace: 'default', resourceVersion: String(rv) } });

const arrivals: readonly (readonly WatchEvent<Pod>[])[] = [
  [
    { type: 'ADDED', object: pod('a', 2) },
    { type: 'ADDED', object: pod('b', 3) },
  ],
  [{ type: 'MODIFIED', object: pod('a', 4) }],
];

/** Yields the arrivals, then holds the watch open until it is aborted. */
async function* open<E>(items: readonly E[], signal: AbortSignal): AsyncGenerator<E> {
  for (const item of items) yield item;
  await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
}

function source(withBatches: boolean): ListerWatcher<Pod> & { readonly calls: string[] } {
  const calls: string[] = [];
  const list = (): Promise<ObjectList<Pod>> => Promise.resolve({ metadata: { resourceVersion: '1' }, items: [] });
  const watch = (_: unknown, signal: AbortSignal): AsyncIterable<WatchEvent<Pod>> => {
    calls.push('watch');
    return open(arrivals.flat(), signal);
  };
  if (!withBatches) return { calls, supportsWatchList: false, list, watch };
  return {
    calls,
    supportsWatchList: false,
    list,
    watch,
    watchBatches: (_, signal) => {
      calls.push('watchBatches');
      return open(arrivals, signal);
    },
  };
}

async function watched(lw: ListerWatcher<Pod>): Promise<ReflectorEvent<Pod>[]> {
  const events: ReflectorEvent<Pod>[] = [];
  const sub = reflect(lw, { initialList: 'paged' }).subscribe((e) => events.push(e));
  try {
    await waitFor(() => events.length >= 4, 'the list and three watch events');
  } finally {
    sub.unsubscribe();
  }
  return events;
}

describe('ListerWatcher.watchBatches (LW-8)', () => {
  it('is what reflect() watches through when a source has it, with the events watch() would give', async () => {
    const batched = source(true);
    const plain = source(false);
    const viaBatches = await watched(batched);
    const viaWatch = await watched(plain);
    expect(batched.calls).toEqual(['watchBatches']);
    expect(plain.calls).toEqual(['watch']);
    expect(viaBatches).toEqual(viaWatch);
    expect(viaBatches.map((e) => e.type)).toEqual(['Replace', 'Added', 'Added', 'Modified']);
  });
});
