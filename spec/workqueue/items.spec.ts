import { getEventListeners } from 'node:events';
import { take } from 'ix/asynciterable/operators';
import { describe, expect, it } from 'vitest';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { workQueue, type WorkQueue } from '../../src/workqueue/index.js';
import { virtualClock } from './virtualTime.js';

/** A queue on virtual time, and a way to tell whether anything is still being processed. */
function setup(): { q: WorkQueue<string>; processing: () => boolean; errors: Error[] } {
  const clock = virtualClock();
  const errors: Error[] = [];
  const q = workQueue<string>({ scheduler: clock.scheduler, onError: (err) => errors.push(err) });
  return {
    q,
    errors,
    // An item still being processed has a non-zero age once the clock moved.
    processing: () => {
      clock.advance(1_000);
      return q.metrics().longestRunningProcessorSeconds > 0;
    },
  };
}

describe('WorkQueue.items(): for await', () => {
  it('marks each item done when the loop body finishes with it', async () => {
    const { q, processing, errors } = setup();
    q.add('a');
    q.add('b');
    const seen: string[] = [];
    for await (const key of q.items()) {
      seen.push(key);
      if (key === 'a' && seen.length === 1) {
        q.add('a'); // being processed: queued again only after this body
        expect(q.len()).toBe(1);
        expect(processing()).toBe(true);
      }
      if (seen.length === 3) break;
    }
    expect(seen).toEqual(['a', 'b', 'a']);
    expect(processing()).toBe(false);
    expect(q.metrics().workDuration.count).toBe(3);
    expect(errors).toEqual([]);
  });

  it('marks the item done when the loop body throws, and lets the error out', async () => {
    const { q, processing } = setup();
    q.add('a');
    const loop = async (): Promise<void> => {
      for await (const key of q.items()) throw new Error(`failed on ${key}`);
    };
    await expect(loop()).rejects.toThrow('failed on a');
    expect(processing()).toBe(false);
    q.add('a');
    expect(q.len()).toBe(1);
  });

  it('ends normally when its signal aborts while it waits for work', async () => {
    const { q } = setup();
    const ac = new AbortController();
    const seen: string[] = [];
    const loop = (async () => {
      for await (const key of q.items({ signal: ac.signal })) seen.push(key);
      return 'ended';
    })();
    q.add('a');
    await waitFor(() => seen.length === 1, 'the first item');
    ac.abort();
    expect(await loop).toBe('ended');
    // The abandoned wait took nothing: the next item stays for someone else.
    q.add('b');
    expect(q.len()).toBe(1);
  });

  it("follows the caller's signal by a listener of its own, removed when the iterator ends", async () => {
    // Not by AbortSignal.any: Node (nodejs/node#64476) can keep such a composite alive for as long as a long-lived caller signal.
    const { q } = setup();
    const life = new AbortController();
    const iter = q.items({ signal: life.signal })[Symbol.asyncIterator]();
    const pending = iter.next(); // waits: the queue is empty
    expect(getEventListeners(life.signal, 'abort')).toHaveLength(1);
    await iter.return?.();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(getEventListeners(life.signal, 'abort')).toHaveLength(0);
  });

  it('ends after the body that was running when the signal aborted, with that item done', async () => {
    const { q, processing } = setup();
    const ac = new AbortController();
    q.add('a');
    q.add('b');
    const seen: string[] = [];
    for await (const key of q.items({ signal: ac.signal })) {
      seen.push(key);
      ac.abort();
    }
    expect(seen).toEqual(['a']);
    expect(processing()).toBe(false);
    expect(q.len()).toBe(1);
  });

  it('ends at once for a signal aborted before the loop', async () => {
    const { q } = setup();
    q.add('a');
    const seen: string[] = [];
    for await (const key of q.items({ signal: AbortSignal.abort() })) seen.push(key);
    expect(seen).toEqual([]);
    expect(q.len()).toBe(1);
  });

  it('ends when the queue has shut down, after the items queued before', async () => {
    const { q } = setup();
    q.add('a');
    q.add('b');
    const seen: string[] = [];
    const loop = (async () => {
      for await (const key of q) seen.push(key);
    })();
    await waitFor(() => seen.length === 2, 'both items');
    q.shutDown();
    await loop;
    expect(seen).toEqual(['a', 'b']);
  });

  it('lets several loops share the work, never the same item at once', async () => {
    const { q } = setup();
    const inFlight = new Set<string>();
    const overlaps: string[] = [];
    const gate = deferred();
    const worker = async (name: string, seen: string[]): Promise<void> => {
      for await (const key of q.items()) {
        if (inFlight.has(key)) overlaps.push(key);
        inFlight.add(key);
        seen.push(`${name}:${key}`);
        await gate.promise;
        inFlight.delete(key);
      }
    };
    const seenA: string[] = [];
    const seenB: string[] = [];
    const loops = Promise.all([worker('A', seenA), worker('B', seenB)]);
    q.add('x');
    q.add('y');
    await waitFor(() => seenA.length + seenB.length === 2, 'two items in flight');
    q.add('x'); // while x is in flight: must wait for it
    expect(q.len()).toBe(0);
    gate.resolve();
    await waitFor(() => seenA.length + seenB.length === 3, 'x a second time');
    q.shutDown();
    await loops;
    expect(overlaps).toEqual([]);
    expect([...seenA, ...seenB].map((s) => s.slice(2)).sort()).toEqual(['x', 'x', 'y']);
  });

  it('composes with ix operators: take(2) ends the iteration with the second item done', async () => {
    const { q, processing } = setup();
    q.add('a');
    q.add('b');
    q.add('c');
    const seen: string[] = [];
    for await (const key of q.items().pipe(take(2))) seen.push(key);
    expect(seen).toEqual(['a', 'b']);
    expect(processing()).toBe(false);
    expect(q.len()).toBe(1);
  });

  it('serialises overlapping next() calls: one iterator never holds two items', async () => {
    const { q } = setup();
    const it = q.items()[Symbol.asyncIterator]();
    const first = it.next();
    const second = it.next();
    q.add('a');
    q.add('b');
    expect(await first).toEqual({ done: false, value: 'a' });
    expect(await second).toEqual({ done: false, value: 'b' });
    // The second call gave 'a' back before taking 'b'.
    expect(q.metrics().workDuration.count).toBe(1);
    await it.return?.();
    expect(q.metrics().workDuration.count).toBe(2);
  });

  it('rejects bad options with a TypeError naming them', () => {
    const { q } = setup();
    expect(() => q.items({ signal: 'stop' as never })).toThrow(/option "signal" must be an AbortSignal, got "stop"/);
    expect(() => q.items({ sgnal: undefined } as never)).toThrow(/unknown option "sgnal"/);
  });
});
