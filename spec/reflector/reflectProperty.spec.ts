import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { reflect, type ReflectorStatus } from '../../src/reflector/index.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import {
  ConnectionError,
  DecodeError,
  KubeApiError,
} from '../../src/errors/api/index.js';
import type { ListerWatcher, ListOptions, ObjectList, WatchEvent, WatchOptions } from '../../src/sources/types.js';
import { pod, type Pod } from './reflectScripted.js';

/** What the next request (list or watch) meets. */
type Step =
  | { kind: 'ok' }
  | { kind: 'events'; n: number }
  | { kind: 'short' }
  | { kind: 'error'; make: () => Error };

const errors: [string, () => Error][] = [
  ['500', () => new KubeApiError(500, 'boom')],
  ['conn', () => new ConnectionError('reset', { code: 'ECONNRESET' })],
  ['idle', () => new ConnectionError('idle', { code: 'IDLE_TIMEOUT' })],
  ['410', () => new KubeApiError(410, 'old')],
  ['429', () => new KubeApiError(429, 'slow', { retryAfterSeconds: 2 })],
  ['decode', () => new DecodeError('bad', '{', 0)],
  ['403', () => new KubeApiError(403, 'no')],
];

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ kind: 'ok' }),
  fc.integer({ min: 1, max: 3 }).map<Step>((n) => ({ kind: 'events', n })),
  fc.constant<Step>({ kind: 'short' }),
  fc.constantFrom(...errors).map<Step>(([, make]) => ({ kind: 'error', make })),
);

/** A ListerWatcher whose every request meets the next scripted step; afterwards everything works. */
class StepLW implements ListerWatcher<Pod> {
  rv = 10;
  listed = 0;
  readonly watchRvs: (string | undefined)[] = [];
  readonly steps: Step[];
  constructor(steps: Step[]) {
    this.steps = [...steps];
  }
  list(_opts: ListOptions, _signal: AbortSignal): Promise<ObjectList<Pod>> {
    const s = this.steps.shift() ?? { kind: 'ok' };
    if (s.kind === 'error') return Promise.reject(s.make());
    this.rv += 1;
    this.listed += 1;
    return Promise.resolve({ metadata: { resourceVersion: String(this.rv) }, items: [pod('a', this.rv)] });
  }
  async *watch(opts: WatchOptions, signal: AbortSignal): AsyncGenerator<WatchEvent<Pod>> {
    this.watchRvs.push(opts.resourceVersion);
    const s = this.steps.shift();
    if (s?.kind === 'error') throw s.make();
    if (s?.kind === 'short') return;
    if (s?.kind === 'events') {
      for (let i = 0; i < s.n; i++) {
        this.rv += 1;
        yield { type: 'MODIFIED', object: pod('a', this.rv) };
      }
      // Stay open long enough not to count as a very short watch, then end normally.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      return;
    }
    await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
  }
}

function rvOf(e: ReflectorEvent<Pod>): string | undefined {
  return e.type === 'Resync' || e.type === 'ReplacePage' ? undefined : e.resourceVersion;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('reflect() under any sequence of faults', () => {
  it('never errors, always resumes from the last resourceVersion it emitted, and ends up watching', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 25 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), async (steps, r) => {
        const lw = new StepLW(steps);
        const events: ReflectorEvent<Pod>[] = [];
        const statuses: ReflectorStatus[] = [];
        const watchStartedAfter: number[] = [];
        let failure: unknown;
        let completed = false;
        const watch = lw.watch.bind(lw);
        lw.watch = (opts, signal) => {
          watchStartedAfter.push(events.length);
          return watch(opts, signal);
        };
        const sub = reflect(lw, { random: () => r, resyncPeriod: 5000, status: (s) => statuses.push(s) }).subscribe({
          next: (e) => events.push(e),
          error: (e: unknown) => (failure = e),
          complete: () => (completed = true),
        });
        try {
          for (let i = 0; i < 40 && (lw.steps.length > 0 || statuses.at(-1)?.state !== 'watching'); i++) {
            await vi.advanceTimersByTimeAsync(60_000);
          }
          await vi.advanceTimersByTimeAsync(0);
          expect(failure).toBeUndefined();
          expect(completed).toBe(false);
          expect(statuses.at(-1)?.state).toBe('watching');
          expect(events[0]?.type).toBe('Replace');
          // Every watch starts from the resourceVersion of the last non-Resync event before it (no gap, no replay).
          lw.watchRvs.forEach((rv, i) => {
            const before = events.slice(0, watchStartedAfter[i]).map(rvOf).filter((x) => x !== undefined);
            expect(rv).toBe(before.at(-1));
          });
          const last = statuses.at(-1)!.counters;
          expect(last.errors).toBe(statuses.filter((s) => s.state === 'error').length);
          expect(events.filter((e) => e.type === 'Replace')).toHaveLength(lw.listed);
          expect(last.lists).toBeGreaterThanOrEqual(lw.listed);
          for (const b of statuses.filter((s) => s.state === 'backoff')) {
            expect(b.delayMs).toBeLessThan(60_001);
          }
        } finally {
          sub.unsubscribe();
        }
        // Checked after every run, failing or not, so that one run cannot leak timers into the next.
        expect(vi.getTimerCount()).toBe(0);
      }),
      { numRuns: 150 },
    );
  });
});
