import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const built = fileURLToPath(new URL('../../build/examples/configmap-controller.js', import.meta.url));

/** Runs the built example as a user would, and collects what it printed. */
function runExample(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [built, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('examples/configmap-controller as a program', () => {
  it('keeps a ConfigMap per deployment under churn, cleans up deleted ones through the finalizer, and exits converged', async () => {
    const { code, stdout, stderr } = await runExample(['--simulator', '--duration', '4s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    // One line per outcome, then the summary and the convergence check.
    const outcomes = lines.slice(0, -2);
    for (const line of outcomes) {
      expect(line).toMatch(/^(reconciled default\/[a-z0-9-]+: .+ \(\d+ ms\)|failed default\/[a-z0-9-]+: .+; (retry in \d+ ms|not retried)|gone default\/[a-z0-9-]+)$/);
    }
    for (const name of ['web', 'api', 'db', 'cache']) {
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^reconciled default/${name}: finalizer added`)));
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^reconciled default/${name}: created default/${name}-info`)));
    }
    // The churn deletes deployments: their ConfigMaps are deleted before the finalizer goes.
    expect(lines.some((l) => /^reconciled default\/[a-z0-9-]+: deleted default\/[a-z0-9-]+-info, finalizer removed/.test(l))).toBe(true);
    expect(lines.some((l) => /^gone default\//.test(l))).toBe(true);
    expect(lines.at(-2)).toMatch(/^stopped: \d+ reconciles, \d+ failed, \d+ requeued, p50 \d+ ms, p99 \d+ ms$/);
    expect(lines.at(-1)).toMatch(/^converged: \d+ deployments, each with its ConfigMap$/);
  }, 30_000);

  it('names a misspelt flag instead of ignoring it', async () => {
    const { code, stderr } = await runExample(['--simulater']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/unknown argument "--simulater"/);
  }, 30_000);
});
