import { describe, expect, it } from 'vitest';
import { runExample } from '../helpers/runExample.js';

describe('examples/sharded-controller', () => {
  it('three replicas split the 300 ConfigMaps: each caches only its share and reconciles all of it, then leaves cleanly', async () => {
    const { code, stdout, stderr } = await runExample('sharded-controller', ['--simulator', '--duration', '8s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines.filter((l) => / runs the sharder$/.test(l))).toHaveLength(1);
    for (const id of ['replica-a', 'replica-b', 'replica-c']) expect(lines).toContain(`${id} joined the ring`);
    const shares = lines
      .map((l) => /^(replica-[abc]): (\d+) configmaps cached, (\d+) of them reconciled$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => ({ id: m[1]!, cached: Number(m[2]), reconciled: Number(m[3]) }));
    expect(shares.map((s) => s.id)).toEqual(['replica-a', 'replica-b', 'replica-c']);
    expect(shares.reduce((n, s) => n + s.cached, 0)).toBe(300);
    for (const s of shares) {
      expect(s.reconciled).toBe(s.cached);
      // Even enough: a third each, give or take the ring's spread.
      expect(s.cached).toBeGreaterThan(70);
      expect(s.cached).toBeLessThan(130);
    }
  }, 60_000);

  it('a misspelt flag is named, not ignored', async () => {
    const { code, stderr } = await runExample('sharded-controller', ['--simulater']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/unknown argument "--simulater"/);
  }, 30_000);
});
