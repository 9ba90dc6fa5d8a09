import { describe, expect, it } from 'vitest';
import { createStderrReporter } from '../../src/errors/reportError.js';
import { heldBack, Throttle } from '../../src/errors/throttle.js';

// LT-60: one rate limit for every report that may repeat.
describe('Throttle: one occurrence per kind per interval, the rest counted', () => {
  it('lets the first of a kind through, holds the rest of its window, and the next says how many and since when', () => {
    let now = 1_000;
    const t = new Throttle(100, () => now);
    expect(t.pass('a')).toEqual({ held: 0, sinceMs: 0 });
    now = 1_050;
    expect(t.pass('a')).toBeUndefined();
    expect(t.pass('a')).toBeUndefined();
    // Another kind has a window of its own.
    expect(t.pass('b')).toEqual({ held: 0, sinceMs: 0 });
    now = 1_100;
    expect(t.pass('a')).toEqual({ held: 2, sinceMs: 100 });
    expect(t.pass('a')).toBeUndefined();
  });

  it('an interval of 0 lets everything through', () => {
    const t = new Throttle(0, () => 5);
    expect(t.pass('a')).toEqual({ held: 0, sinceMs: 0 });
    expect(t.pass('a')).toEqual({ held: 0, sinceMs: 0 });
  });

  it('forgets a settled kind only once its window passed with nothing held back', () => {
    let now = 0;
    const t = new Throttle(100, () => now);
    t.pass('a');
    t.pass('a');
    now = 200;
    // One held back: not forgotten, so its next report still counts it.
    t.settled('a');
    expect(t.pass('a')).toEqual({ held: 1, sinceMs: 200 });
    now = 250;
    // Within its window: not forgotten, so it is still held.
    t.settled('a');
    expect(t.pass('a')).toBeUndefined();
    now = 1_000;
    t.pass('a');
    now = 2_000;
    t.settled('a');
    // Forgotten: the next is a first again.
    expect(t.pass('a')).toEqual({ held: 0, sinceMs: 0 });
  });

  it('the tail of a report names what was held back, and nothing when nothing was', () => {
    expect(heldBack({ held: 0, sinceMs: 0 })).toBe('');
    expect(heldBack({ held: 3, sinceMs: 10 })).toBe(' (3 more like it held back)');
  });
});

describe('createStderrReporter: one line per kind of failure per interval', () => {
  it('a kind is the error class, HTTP status and system code, not the message', () => {
    let now = 0;
    const lines: string[] = [];
    const report = createStderrReporter({ intervalMs: 30_000, now: () => now, write: (l) => lines.push(l) });
    const withStatus = (status: number, message: string) => Object.assign(new Error(message), { status });
    report(withStatus(503, 'first'));
    report(withStatus(503, 'second, same kind'));
    report(withStatus(500, 'another status'));
    report(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    report(new TypeError('another class'));
    expect(lines).toEqual(['rxkube: Error: first\n', 'rxkube: Error: another status\n', 'rxkube: Error: refused\n', 'rxkube: TypeError: another class\n']);
    now = 30_000;
    report(withStatus(503, 'after the interval'));
    expect(lines.at(-1)).toBe('rxkube: Error: after the interval (1 more like it held back)\n');
  });
});
