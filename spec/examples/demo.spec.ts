import { describe, expect, it } from 'vitest';
import { runDemo } from '../../examples/demo.js';

describe('the demo', () => {
  it('survives its faults and ends with the cache equal to the server', async () => {
    const lines: string[] = [];
    const summary = await runDemo({ durationMs: 4_000, perSecond: 300, log: (l) => lines.push(l) });
    expect(summary.mismatches).toEqual([]);
    expect(summary.cached).toBe(summary.onServer);
    expect(summary.adds).toBeGreaterThan(200);
    expect(summary.updates).toBeGreaterThan(0);
    expect(summary.deletes).toBeGreaterThan(0);
    expect(summary.lists).toBeGreaterThanOrEqual(2); // the compaction forced a relist
    expect(lines.some((l) => l.includes('the cache matches the server'))).toBe(true);
  }, 60_000);
});
