import { Subscription, type SchedulerLike } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { InformerStatus } from '../../src/informer/informer.js';
import type { ReflectorState } from '../../src/reflector/types.js';
import { ANSWERED_WATCH_MS, Reachability } from '../../src/multicluster/reachability.js';
import { zeroCounters } from '../../src/reflector/counters.js';

const counters = (events = 0) => ({ ...zeroCounters(), lists: 1, watches: 1, events });
const status = (state: ReflectorState | undefined, synced = true, events = 0): InformerStatus => ({
  state: 'running',
  synced,
  reflector: state === undefined ? undefined : { ...state, counters: counters(events) },
  handlers: [],
  errors: 0,
  lastError: undefined,
  currentAt: undefined,
  behindSince: undefined,
  lagging: false,
  objects: 0,
  counters: counters(events),
  lastSyncResourceVersion: '',
});
const failed: ReflectorState = { state: 'error', error: new Error('ECONNREFUSED'), terminal: false };
const backoff: ReflectorState = { state: 'backoff', error: new Error('ECONNREFUSED'), delayMs: 800, kind: 'server' };
const watching: ReflectorState = { state: 'watching', resourceVersion: '5' };
const listing: ReflectorState = { state: 'listing', mode: 'paged' };

/** A clock moved by hand: timers due by the time it is moved to run, in order, and no others. */
class ManualScheduler {
  #now = 0;
  #timers: { at: number; run: () => void; sub: Subscription }[] = [];
  now(): number {
    return this.#now;
  }
  schedule(work: () => void, delay = 0): Subscription {
    const sub = new Subscription(() => (this.#timers = this.#timers.filter((t) => t.sub !== sub)));
    this.#timers.push({ at: this.#now + delay, run: work, sub });
    return sub;
  }
  advance(to: number): void {
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= to).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = due.at;
      due.run();
    }
    this.#now = to;
  }
}

function clock(afterMs = 1_000) {
  const scheduler = new ManualScheduler();
  let declared = 0;
  let answered = 0;
  const r = new Reachability(scheduler as unknown as SchedulerLike, afterMs, () => declared++, () => answered++);
  const at = (ms: number, s: InformerStatus): boolean => {
    scheduler.advance(ms);
    return r.observe(s);
  };
  return { r, at, until: (ms: number) => scheduler.advance(ms), declared: () => declared, answered: () => answered };
}

describe('Reachability', () => {
  it('declares a cluster unreachable once every attempt has failed for the whole window', () => {
    const c = clock(1_000);
    c.at(0, status(watching));
    c.at(10, status(failed));
    c.at(11, status(backoff));
    c.at(500, status(watching));
    c.at(510, status(failed));
    c.at(511, status(backoff));
    c.until(999);
    expect(c.declared()).toBe(0);
    c.until(1_010);
    expect(c.declared()).toBe(1);
    expect(c.r.unreachable).toBe(true);
  });

  it("a watch that opens is not an answer: the reflector says 'watching' before the server has said anything", () => {
    const c = clock(1_000);
    c.at(0, status(watching));
    expect(c.at(10, status(failed))).toBe(false);
    expect(c.at(20, status(backoff))).toBe(false);
    expect(c.at(300, status(watching))).toBe(false);
  });

  it('a completed list, arriving events, a watch that ended cleanly or stayed open are answers: the clock stops', () => {
    const c = clock(1_000);
    c.at(0, status(failed));
    c.at(1, status(listing, false));
    expect(c.at(50, status(watching, true))).toBe(true);
    c.at(100, status(failed));
    expect(c.at(200, status(watching, true, 0))).toBe(false);
    expect(c.at(250, status(watching, true, 3))).toBe(true);
    c.at(300, status(failed));
    c.at(310, status(watching, true, 3));
    // Open for longer than a watch needs to have been answered, then cut.
    expect(c.at(310 + ANSWERED_WATCH_MS, status(failed, true, 3))).toBe(true);
    c.until(310 + ANSWERED_WATCH_MS + 999);
    expect(c.declared()).toBe(0);
  });

  it('when the window ends during an attempt, that attempt decides: a quiet watch keeps the cluster reachable, a failure declares it at once', () => {
    const c = clock(1_000);
    c.at(0, status(failed));
    c.at(900, status(watching));
    c.until(5_000);
    expect(c.declared()).toBe(0);
    c.at(5_001, status(failed));
    expect(c.declared()).toBe(1);
    // Declared once, however many failures follow; an answer clears it.
    c.at(5_002, status(backoff));
    c.at(6_000, status(failed));
    expect(c.declared()).toBe(1);
    c.at(6_100, status(listing, false));
    expect(c.at(6_200, status(watching, true))).toBe(true);
    expect(c.r.unreachable).toBe(false);
  });

  it('an event heard, or a watch still open after a while, clears the clock without any status', () => {
    const c = clock(1_000);
    c.at(0, status(failed));
    c.at(10, status(backoff));
    c.at(900, status(watching));
    c.until(5_000);
    c.at(5_001, status(failed));
    expect(c.declared()).toBe(1);
    // The server came back: an event of the informer is an answer.
    c.r.heard();
    expect([c.r.unreachable, c.answered()]).toEqual([false, 1]);
    c.r.heard();
    expect(c.answered()).toBe(1);
    // Failing again, then a watch that stays open, quiet, past the time a watch needs to have been answered.
    c.at(6_000, status(failed));
    c.at(6_010, status(backoff));
    c.at(6_500, status(watching));
    c.until(6_500 + ANSWERED_WATCH_MS);
    expect([c.r.unreachable, c.answered(), c.declared()]).toEqual([false, 2, 1]);
  });
});
