import { describe, expect, it } from 'vitest';
import { overlap, type Interval } from './replicas.js';

// The multi-process specs trust overlap() to catch two leaders at once; it must be able to say so.
describe('overlap()', () => {
  const iv = (id: string, start: number, end: number): Interval => ({ id, start, end, how: 'stopped' });

  it('accepts back-to-back intervals and finds one that starts before the previous ends', () => {
    expect(overlap([iv('a', 0, 10), iv('b', 11, 20), iv('a', 25, 30)])).toBeUndefined();
    expect(overlap([iv('a', 0, 10), iv('b', 9.5, 20)])).toMatch(/a acted 0\.0\.\.10\.0 \(stopped\) and b started at 9\.5, 0\.5 ms too early/);
    expect(overlap([iv('a', 0, 10), iv('b', 10, 20)])).toBeDefined();
  });
});
