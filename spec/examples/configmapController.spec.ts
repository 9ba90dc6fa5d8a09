import { afterEach, describe, expect, it } from 'vitest';
import { runExample, startExample, type ExampleProcess } from '../helpers/runExample.js';
import { probeUntil } from '../helpers/probe.js';
import { waitFor } from '../helpers/waitFor.js';

/** Free ports for this run: the conventional :8080 and :8081 may be taken on a shared machine. */
const EPHEMERAL = ['--metrics-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0'];
/** Lines that are not outcomes: where it serves, its leadership, the start of its stop. */
const MANAGER_LINE = /^(serving (probes|metrics) on http:\/\/127\.0\.0\.1:\d+|leading \(lease configmap-controller\)|stopping: the signal aborted)$/;

let started: ExampleProcess | undefined;
afterEach(async () => {
  if (started !== undefined && started.child.exitCode === null) {
    started.child.kill('SIGKILL');
    await started.exited;
  }
  started = undefined;
});

describe('examples/configmap-controller as a program', () => {
  it('keeps a ConfigMap per deployment under churn, cleans up deleted ones through the finalizer, and exits converged', async () => {
    const { code, stdout, stderr } = await runExample('configmap-controller', ['--simulator', '--duration', '4s', ...EPHEMERAL]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    // What the manager reports, one line per outcome, then the summaries and the convergence check.
    expect(lines.slice(0, 3).sort()).toEqual([expect.stringMatching(/^leading/), expect.stringMatching(/^serving metrics/), expect.stringMatching(/^serving probes/)]);
    expect(lines.at(-4)).toBe('stopping: the signal aborted');
    const outcomes = lines.slice(0, -3).filter((l) => !MANAGER_LINE.test(l));
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

  it('serves its probes and metrics on the addresses of its two flags, and drains and exits 0 on SIGTERM', async () => {
    const p = startExample('configmap-controller', ['--simulator', ...EPHEMERAL]);
    started = p;
    const at = (server: string): string | undefined => new RegExp(`^serving ${server} on (http://\\S+)$`, 'm').exec(p.stdout())?.[1];
    const probes = await waitFor(() => at('probes'), 'the probe server', 20_000);
    const metrics = await waitFor(() => at('metrics'), 'the metrics server', 20_000);
    // Ready once the caches synced and this replica leads with its controller past the sync gate.
    const readyBody = (await probeUntil(`${probes}/readyz`, 200, 'the caches to sync and the controller to run', { timeoutMs: 20_000, body: /^\[\+\]controller apps\/v1\/deployments ok$/m })).body;
    expect(readyBody).toMatch(/^\[\+\]informer apps\/v1\/deployments ok$/m);
    expect(readyBody).toMatch(/^\[\+\]controller apps\/v1\/deployments ok$/m);
    const health = await fetch(`${probes}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.text()).toMatch(/healthz check passed\n$/);
    expect((await fetch(`${probes}/livez`)).status).toBe(200);
    await waitFor(() => /^reconciled default\/web: created default\/web-info/m.test(p.stdout()), 'a first ConfigMap', 20_000);
    const scrape = await fetch(`${metrics}/metrics`);
    expect(scrape.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await scrape.text()).toMatch(/^controller_runtime_reconcile_total\{controller="apps\/v1\/deployments",result="success"\} [1-9]\d*$/m);

    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(p.stdout()).toMatch(/^stopping: the signal aborted$/m);
    expect(p.stdout()).toMatch(/^stopped: \d+ reconciles/m);
    expect(p.stderr()).toBe('');
    // Its servers closed with it.
    await expect(fetch(`${probes}/healthz`)).rejects.toThrow();
  }, 60_000);

  it('names a misspelt flag instead of ignoring it', async () => {
    const { code, stderr } = await runExample('configmap-controller', ['--simulater']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/unknown argument "--simulater"/);
  }, 30_000);

  it('names a bad bind address at once', async () => {
    const { code, stderr } = await runExample('configmap-controller', ['--simulator', '--health-probe-bind-address', 'localhost:99999']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/option "healthProbeBindAddress" has port 99999, outside 0-65535, got "localhost:99999"/);
  }, 30_000);
});
