import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const built = fileURLToPath(new URL('../../build/examples/leader-election.js', import.meta.url));

describe('examples/leader-election', () => {
  it('on the simulator, the lead moves between candidates and never two lead at once', async () => {
    const child = spawn(process.execPath, [built, '--simulator', '--duration', '7s'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
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
