/**
 * The controller's duration percentiles come from durations kept sorted as they are recorded: over any
 * sequence, longer than the window or not, they equal the nearest-rank percentiles of the last 512 sorted afresh.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ControllerStats, percentile } from '../../src/controller/stats.js';

describe('ControllerStats', () => {
  it('reports the percentiles of the last 512 durations, as sorting them would', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(50), fc.double({ min: 0, max: 1e6, noNaN: true })), { maxLength: 1_500 }), (durations) => {
        const stats = new ControllerStats();
        for (const ms of durations) stats.recordDuration(ms);
        const sorted = durations.slice(-512).sort((a, b) => a - b);
        const s = stats.snapshot('running', 0, 0, []);
        expect([s.durationP50Ms, s.durationP99Ms]).toEqual([percentile(sorted, 0.5), percentile(sorted, 0.99)]);
      }),
      { numRuns: 200 },
    );
  });
});
