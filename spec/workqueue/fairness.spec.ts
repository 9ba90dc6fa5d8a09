import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { workQueue } from '../../src/workqueue/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { virtualClock } from './virtualTime.js';

// Real timers: these specs are about the event loop itself. A flood ends on its own after this
// long, so a queue that starves the loop fails the assertions below instead of hanging the run.
const FLOOD_GUARD_MS = 5_000;

describe('workQueue: the event loop keeps turning (Q-10)', () => {
  it('lets a timer run while a worker that never awaits I/O re-adds its items, and shutDown ends the flood', async () => {
    const q = workQueue<string>();
    const started = Date.now();
    let runs = 0;
    let floodEnded = false;
    const finished = lastValueFrom(
      q.process((item) => {
        runs++;
        if (Date.now() - started < FLOOD_GUARD_MS) q.add(item);
        else floodEnded = true;
      }),
      { defaultValue: undefined },
    );
    q.add('a');
    q.add('b');
    const fired = await new Promise<{ runs: number; floodEnded: boolean }>((resolve) => {
      setTimeout(() => resolve({ runs, floodEnded }), 10);
    });
    // The timer fired while the flood went on: had the queue starved the loop, it would fire only once the guard ended the flood.
    expect(fired.floodEnded).toBe(false);
    expect(fired.runs).toBeGreaterThan(0);
    // The flood goes on beside the timers (waitFor itself polls on a timer).
    await waitFor(() => runs > fired.runs + 2_000, 'the flood to go on after the timer');
    const runsAtStop = runs;
    q.shutDown();
    await finished;
    // shutDown ended the flood, not the guard: the two items went round at most once more, and the re-adds were refused.
    expect(floodEnded).toBe(false);
    expect(runs - runsAtStop).toBeLessThanOrEqual(2);
  });

  it('lets a get() loop on a virtual clock go on past its budget without the clock moving', async () => {
    // Nothing flushes this clock: the deferred hand-outs must come from real turns of the loop.
    const q = workQueue<number>({ scheduler: virtualClock().scheduler });
    for (let i = 0; i < 5_000; i++) q.add(i);
    let taken = 0;
    while (q.len() > 0) {
      const got = await q.get();
      if (got.shutdown) break;
      q.done(got.item);
      taken++;
    }
    expect(taken).toBe(5_000);
  });

  it('under virtual time hands out at most 1000 items per flush of the clock, so a flood is driven by the spec', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    let runs = 0;
    const sub = q
      .process((item) => {
        // Bounded, so a queue that never yields fails the count below instead of looping for ever.
        if (++runs < 100_000) q.add(item);
      })
      .subscribe();
    q.add('a');
    for (let i = 0; i < 3_000; i++) await Promise.resolve();
    const first = runs;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(1_000);
    for (let i = 0; i < 3_000; i++) await Promise.resolve();
    expect(runs).toBe(first); // no microtask loop: it waits for the next flush (or a real turn)
    clock.advance(0);
    for (let i = 0; i < 3_000; i++) await Promise.resolve();
    expect(runs).toBeGreaterThan(first);
    sub.unsubscribe();
    q.shutDown();
  });
});
