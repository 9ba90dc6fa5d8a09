import { describe, expect, it } from 'vitest';
import { CHAOS } from './config.js';
import { replayCommand, summarize } from './report.js';
import { runSeeds } from './runner.js';

// CI's share of the seed space; `npm run chaos -- --seeds 5000` runs more.
const SEEDS = Array.from({ length: 100 }, (_, i) => i + 1);
// Seeds mostly wait (on backoff, Retry-After, stall detection), so several share the process well.
const CONCURRENCY = 8;

describe('chaos: informers under random faults', () => {
  it(
    `${SEEDS.length} seeds: stores and every handler's view equal the server within ${CHAOS.ciBoundMs} ms of the last fault, and nothing stays open`,
    async () => {
      const report = await runSeeds({ seeds: SEEDS, concurrency: CONCURRENCY });
      console.log(summarize(report.results));
      const failing = report.results.filter((r) => r.failures.length > 0).map((r) => `seed ${r.seed}: ${r.failures.join(' | ')} — replay: ${replayCommand(r.seed)}`);
      expect(failing).toEqual([]);
      expect(report.unhandled).toEqual([]);
      expect(report.leaks).toEqual([]);
      expect(report.results).toHaveLength(SEEDS.length);
    },
    600_000,
  );
});
