import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const built = (name: string): string => fileURLToPath(new URL(`../../build/examples/${name}.js`, import.meta.url));

/** Runs a built example as a user would, against the simulator, and collects what it printed. */
function runExample(name: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [built(name), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('each example runs against the simulator', () => {
  it('deployments: prints readiness per deployment as pods turn ready, then exits cleanly', async () => {
    const { code, stdout, stderr } = await runExample('deployments', ['--simulator', '--duration', '4s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toContain('default/web: 3/3 pods ready');
    expect(lines).toContain('default/api: 2/2 pods ready');
    expect(lines.some((l) => /^default\/web: [12]\/3 pods ready \(waiting: /.test(l))).toBe(true);
  }, 30_000);

  it('a misspelt flag is named, not ignored', async () => {
    const { code, stderr } = await runExample('deployments', ['--simulater']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/unknown argument "--simulater"/);
  }, 30_000);
});
