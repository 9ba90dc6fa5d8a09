import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliProcess, runCli } from './run.js';

/** Any ANSI escape sequence: colour or cursor movement. */
const ESCAPE = '\u001b[';

/** The table rows (after the header lines and the blank line) of a `--once` table. */
function tableRows(stdout: string): string[][] {
  const lines = stdout.split('\n');
  const head = lines.findIndex((l) => /^NAMESPACE\s+NAME\s+STATUS\s+AGE\s+LAST$/.test(l) || /^NAME\s+STATUS\s+AGE\s+LAST$/.test(l));
  expect(head, stdout).toBeGreaterThan(0);
  return lines
    .slice(head + 1)
    .filter((l) => l.trim() !== '' && !l.startsWith('…'))
    .map((l) => l.trim().split(/\s{2,}/));
}

describe('rxkube watch against the simulator', () => {
  it('--once prints the synced cache as a table with its header, and exits', async () => {
    const { code, stdout, stderr } = await runCli(['watch', 'pods', '-A', '--simulator', '--once', '--objects', '40']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).not.toContain(ESCAPE);
    expect(stdout).toMatch(/^rxkube watch v1\/pods · all namespaces · synced in \d+(ms|\.\ds)$/m);
    expect(stdout).toMatch(/^40 objects · /m);
    // The simulator spreads 40 objects 4:3:2:1 over four namespaces.
    expect(stdout).toMatch(/^by namespace: default 16 · web 12 · kube-system 8 · batch 4$/m);
    const rows = tableRows(stdout);
    expect(rows).toHaveLength(40);
    expect(rows[0]).toEqual(['batch', 'pod-19', '1/1 Running', expect.stringMatching(/^\d+s$/)]);
    expect(rows.map((r) => r[2])).toContain('0/1 ContainerCreating');
  });

  it('--fifo ordered watches through the ordered queue and syncs the same cache', async () => {
    const { code, stdout, stderr } = await runCli(['watch', 'pods', '-A', '--simulator', '--once', '--objects', '40', '--fifo', 'ordered']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^40 objects · /m);
    expect(tableRows(stdout)).toHaveLength(40);
  });

  it('-n limits the watch to one namespace and drops the NAMESPACE column', async () => {
    const { code, stdout } = await runCli(['watch', 'po', '-n', 'web', '--simulator', '--once', '--objects', '40']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/· namespace web ·/);
    const rows = tableRows(stdout);
    expect(rows).toHaveLength(12);
    expect(rows.every((r) => r[0]?.startsWith('pod-'))).toBe(true);
  });

  it('--once -o json writes one add line per cached object', async () => {
    const { code, stdout } = await runCli(['watch', 'v1/pods', '-A', '--simulator', '--once', '-o', 'json', '--objects', '25', '-l', 'app=web']);
    expect(code).toBe(0);
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; key: string; initial: boolean; object: { metadata: { labels: Record<string, string> } } });
    // Seeded pods cycle through four apps: pods 0, 4, 8, … are app=web.
    expect(events).toHaveLength(7);
    for (const e of events) {
      expect(e.type).toBe('add');
      expect(e.initial).toBe(true);
      expect(e.object.metadata.labels.app).toBe('web');
    }
    expect(events.map((e) => e.key)).toEqual([...events.map((e) => e.key)].sort());
  });

  it('the status column fits the kind: deployments show ready replicas', async () => {
    const { code, stdout } = await runCli(['watch', 'deploy', '-A', '--simulator', '--once', '--objects', '8']);
    expect(code).toBe(0);
    const rows = tableRows(stdout);
    expect(rows).toHaveLength(8);
    expect(rows.find((r) => r[1] === 'deployment-0')?.[2]).toBe('0/1 ready');
    expect(rows.find((r) => r[1] === 'deployment-1')?.[2]).toBe('2/2 ready');
  });

  it('watches a custom resource by group/version/plural', async () => {
    const { code, stdout, stderr } = await runCli(['watch', 'example.com/v1/widgets', '-A', '--simulator', '--once', '--objects', '5']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^rxkube watch example\.com\/v1\/widgets · all namespaces · synced/m);
    expect(tableRows(stdout).map((r) => r[1]).sort()).toEqual(['widget-0', 'widget-1', 'widget-2', 'widget-3', 'widget-4']);
  });

  it('a field selector the server refuses ends --once with the server\'s reason', async () => {
    const { code, stderr } = await runCli(['watch', 'pods', '-A', '--simulator', '--once', '--field-selector', 'spec.color=blue']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/did not sync/);
    expect(stderr).toMatch(/field label not supported/);
  });

  it('--once against a server that refuses connections: each error on stderr, then it gives up after --timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-cli-'));
    try {
      const kubeconfig = join(dir, 'config');
      // Port 9 (discard) is closed on the test machines: every request is refused.
      writeFileSync(
        kubeconfig,
        'apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: { server: "http://127.0.0.1:9" } }]\n' +
          'contexts: [{ name: x, context: { cluster: c, user: u, namespace: web } }]\ncurrent-context: x\nusers: [{ name: u, user: {} }]\n',
      );
      const { code, stdout, stderr } = await runCli(['watch', 'pods', '--once', '--kubeconfig', kubeconfig, '--timeout', '2s']);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toMatch(/^ConnectionError: list v1\/pods: ECONNREFUSED/m);
      // The context's namespace is the default, as with kubectl.
      expect(stderr).toMatch(/^error: v1\/pods in web did not sync \(not within 2000 ms\); last error: ConnectionError/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--context names a context the kubeconfig does not have', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-cli-'));
    try {
      const kubeconfig = join(dir, 'config');
      writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: [{ name: dev, context: { cluster: c, user: u } }]\nusers: []\n');
      const { code, stderr } = await runCli(['watch', 'pods', '--kubeconfig', kubeconfig, '--context', 'prod']);
      expect(code).toBe(1);
      expect(stderr).toContain('error: --context: no context "prod" in the kubeconfig (it has: dev)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('-o json streams add, update and delete lines until Ctrl-C, then exits cleanly', async () => {
    const cli = new CliProcess(['watch', 'pods', '-A', '--simulator', '-o', 'json', '--objects', '20', '--churn', '200']);
    try {
      const seen = (type: string) => (stdout: string) => stdout.split('\n').some((l) => l.startsWith(`{"type":"${type}"`));
      await cli.waitFor((out) => seen('update')(out) && seen('delete')(out) && out.includes('"initial":false'));
    } finally {
      const { code, stdout, stderr } = await cli.stop('SIGINT');
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).not.toContain(ESCAPE);
      const lines = stdout.trim().split('\n');
      // Every line is a whole JSON event, the initial list first.
      const events = lines.map((l) => JSON.parse(l) as { type: string; initial?: boolean });
      expect(events.slice(0, 20).every((e) => e.type === 'add' && e.initial === true)).toBe(true);
    }
  });

  it('in a pipe: the table once synced, then one line per change, reflector changes on stderr, no escapes', async () => {
    const cli = new CliProcess(['watch', 'pods', '-A', '--simulator', '--objects', '10', '--churn', '100']);
    try {
      await cli.waitFor((out) => /^(update|delete)\s+\S+\/\S+\s+\S+/m.test(out) && out.includes('NAMESPACE'));
    } finally {
      const { code, stdout, stderr } = await cli.stop('SIGTERM');
      expect(code).toBe(0);
      expect(stdout).not.toContain(ESCAPE);
      expect(stderr).not.toContain(ESCAPE);
      expect(stdout.indexOf('NAMESPACE')).toBeLessThan(stdout.search(/^(add|update|delete) /m));
      expect(stderr).toContain('reflector watching');
      // A churned pod's status stays coherent: ready containers only in a running pod.
      expect(stdout).not.toMatch(/\s[1-9]\d*\/\d+ Pending$/m);
    }
  });

  it('FORCE_COLOR colours a pipe; NO_COLOR wins over it', async () => {
    const forced = await runCli(['watch', 'pods', '--simulator', '--once', '--objects', '3'], { FORCE_COLOR: '1' });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(ESCAPE);
    const plain = await runCli(['watch', 'pods', '--simulator', '--once', '--objects', '3'], { FORCE_COLOR: '1', NO_COLOR: '1' });
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain(ESCAPE);
  });
});
