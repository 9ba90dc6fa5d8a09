import { describe, expect, it } from 'vitest';
import { runExample } from '../helpers/runExample.js';

describe('examples/multi-cluster as a program', () => {
  it('copies the hub ConfigMap into every member as members join and leave, puts back a copy edited by hand, and exits converged', async () => {
    const { code, stdout, stderr } = await runExample('multi-cluster', ['--simulator', '--duration', '5s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    const at = (line: string): number => {
      const i = lines.indexOf(line);
      expect(i, `"${line}" in:\n${stdout}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    // Each member gets its copy after it joined; the update reaches those present; m3 joins later with revision 2.
    expect(at('m1: created fleet/settings at revision 1')).toBeGreaterThan(at('joined m1'));
    expect(at('m2: created fleet/settings at revision 1')).toBeGreaterThan(at('joined m2'));
    const update = at('hub: fleet/settings now at revision 2');
    expect(at('m1: updated fleet/settings to revision 2')).toBeGreaterThan(update);
    expect(at('m2: updated fleet/settings to revision 2')).toBeGreaterThan(update);
    expect(at('m3: created fleet/settings at revision 2')).toBeGreaterThan(at('joined m3'));
    // After m2 left nothing more is written there; the hand edit in m1 is put back.
    const left = at('left m2');
    expect(lines.slice(left).some((l) => l.startsWith('m2:'))).toBe(false);
    expect(lines.slice(at('m1: fleet/settings edited by hand'))).toContain('m1: updated fleet/settings to revision 2');
    expect(lines.every((l) => !/failed/.test(l))).toBe(true);
    expect(lines.at(-2)).toMatch(/^metrics: m1 \d+ reconciles, m3 \d+ reconciles$/);
    expect(lines.at(-1)).toBe('converged: m1, m3 each hold fleet/settings at revision 2');
  }, 30_000);
});
