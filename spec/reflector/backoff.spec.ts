import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backoff, DEFAULT_BACKOFF, resolveBackoffOptions } from '../../src/reflector/backoff.js';

function clock(start = 0) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe('Backoff', () => {
  it("follows client-go's default sequence without jitter: 0.8, 1.6, 3.2 … capped at 30 s", () => {
    const c = clock();
    const b = new Backoff({ jitter: 0 }, c.now);
    const delays = Array.from({ length: 9 }, () => {
      const d = b.next();
      c.t += d;
      return d;
    });
    expect(delays).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
    expect(b.attempts).toBe(9);
  });

  it('matches client-go custom backoff 10 ms ×2 capped at 100 ms: 10, 20, 40, 80, 100', () => {
    const b = new Backoff({ initialMs: 10, factor: 2, maxMs: 100, jitter: 0 }, () => 0);
    expect([1, 2, 3, 4, 5].map(() => b.next())).toEqual([10, 20, 40, 80, 100]);
  });

  it('keeps every jittered delay in [base, base·(1+jitter))', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 30 }),
        fc.double({ min: 0, max: 2, noNaN: true }),
        (randoms, jitter) => {
          let i = 0;
          const b = new Backoff({ jitter }, () => 0, () => randoms[i++]!);
          let base = 800;
          for (const _ of randoms) {
            const d = b.next();
            expect(d).toBeGreaterThanOrEqual(base);
            if (jitter > 0) expect(d).toBeLessThan(base * (1 + jitter) + 1e-9);
            else expect(d).toBe(base);
            base = Math.min(base * 2, 30_000);
          }
        },
      ),
    );
  });

  it('starts over after resetAfterMs without a delay being asked for, measured from the end of the last delay', () => {
    const c = clock(1000);
    const b = new Backoff({ jitter: 0 }, c.now);
    expect([b.next(), b.next(), b.next()]).toEqual([800, 1600, 3200]);
    // The last delay ends 3.2 s from now; two minutes of health after that is needed.
    c.t += 3200 + 120_000;
    expect(b.next()).toBe(6400);
    c.t += 6400 + 120_001;
    expect(b.next()).toBe(800);
    expect(b.attempts).toBe(1);
  });

  it('never resets when resetAfterMs is 0', () => {
    const c = clock();
    const b = new Backoff({ jitter: 0, resetAfterMs: 0 }, c.now);
    b.next();
    c.t += 10 * 60_000;
    expect(b.next()).toBe(1600);
  });

  it('reset() starts over at once', () => {
    const b = new Backoff({ jitter: 0 }, () => 0);
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(800);
  });

  it('validates its options', () => {
    expect(resolveBackoffOptions(undefined)).toBe(DEFAULT_BACKOFF);
    expect(resolveBackoffOptions({ maxMs: 5000 })).toEqual({ ...DEFAULT_BACKOFF, maxMs: 5000 });
    expect(() => resolveBackoffOptions({ initialMs: -1 })).toThrow(/backoff\.initialMs/);
    expect(() => resolveBackoffOptions({ factor: Number.POSITIVE_INFINITY })).toThrow(/backoff\.factor/);
    expect(() => resolveBackoffOptions({ jitter: '1' })).toThrow(/backoff\.jitter must be a finite number >= 0, got "1"/);
    expect(() => resolveBackoffOptions(null)).toThrow(TypeError);
    expect(() => new Backoff({ initialMs: 10, maxMs: 5 })).toThrow(/maxMs/);
  });
});
