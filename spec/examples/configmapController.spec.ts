import { describe, expect, it } from 'vitest';
import { runExample } from '../helpers/runExample.js';

describe('examples/configmap-controller as a program', () => {
  it('keeps a ConfigMap per deployment under churn, cleans up deleted ones through the finalizer, and exits converged', async () => {
    const { code, stdout, stderr } = await runExample('configmap-controller', ['--simulator', '--duration', '4s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    // One line per outcome, then the summaries and the convergence check.
    const outcomes = lines.slice(0, -3);
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
    expect(lines.at(-3)).toMatch(/^stopped: \d+ reconciles, \d+ failed, \d+ requeued, p50 \d+ ms, p99 \d+ ms$/);
    // An Event for every ConfigMap created or updated, each written (the four seeded ones at least).
    const events = /^events: (\d+) published, (\d+) written, (\d+) rate-limited, 0 failed$/.exec(lines.at(-2) ?? '');
    expect(events).not.toBeNull();
    expect(Number(events?.[1])).toBeGreaterThanOrEqual(4);
    expect(Number(events?.[2]) + Number(events?.[3])).toBeGreaterThanOrEqual(4);
    expect(Number(events?.[2])).toBeGreaterThan(0);
    expect(lines.at(-1)).toMatch(/^converged: \d+ deployments, each with its ConfigMap$/);
  }, 30_000);

  it('names a misspelt flag instead of ignoring it', async () => {
    const { code, stderr } = await runExample('configmap-controller', ['--simulater']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/unknown argument "--simulater"/);
  }, 30_000);
});
