/**
 * The runner's probe and metrics servers fuzzed with a few thousand seeded malformed requests (HI-14): the
 * process stays up, each connection is answered with well-formed HTTP or closed, never with a 5xx, and a
 * normal probe answers afterwards. `npm run chaos -- --servers 100000` runs many more.
 */
import { describe, expect, it } from 'vitest';
import { runs } from './fuzzKit.js';
import { fuzzServers } from './fuzzServers.js';

describe('the runner servers under malformed requests', () => {
  it.each([1, 2])('seed %i: no crash, no 5xx, only HTTP or a close, and a probe answers after', async (seed) => {
    const report = await fuzzServers({ seed, cases: runs(1_500) });
    expect(report.failures).toEqual([]);
    // The cases reached the routes as well as the parser's refusals: both kinds of answer were seen.
    expect(report.outcomes['200']).toBeGreaterThan(0);
    expect(report.outcomes['400']).toBeGreaterThan(0);
  });
});
