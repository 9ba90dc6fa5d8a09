import { describe, expect, it } from 'vitest';
import { runExample } from '../helpers/runExample.js';

describe('examples/leader-election', () => {
  it('on the simulator, the lead moves between candidates and never two lead at once', async () => {
    const { code, stdout, stderr } = await runExample('leader-election', ['--simulator', '--duration', '7s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    // Replay the lines in order: a candidate leads from its "leading" line until it follows or steps down.
    const leading = new Set<string>();
    const leaders = new Set<string>();
    for (const line of lines) {
      const [name, what] = line.split(': ') as [string, string];
      if (what.startsWith('leading')) {
        leading.add(name);
        leaders.add(name);
      } else if (what.startsWith('following') || what.startsWith('stepping down')) leading.delete(name);
      else if (what.startsWith('working')) expect(leading.has(name), `${name} works while not leading`).toBe(true);
      expect(leading.size, `leaders after "${line}": ${[...leading].join(", ")}`).toBeLessThanOrEqual(1);
    }
    expect(leaders.size).toBeGreaterThanOrEqual(2);
  }, 30_000);
});
