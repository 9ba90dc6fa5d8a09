import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { CliProcess, runCli } from './run.js';

let eu: ApiServer;
let us: ApiServer;
let dir: string;
let kubeconfig: string;

/** A kubeconfig with one context per entry; `namespace` is the context's default namespace. */
function contexts(entries: Record<string, { url: string; namespace?: string }>): string {
  const e = Object.entries(entries);
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [${e.map(([n, c]) => `{ name: ${n}, cluster: { server: "${c.url}", insecure-skip-tls-verify: true } }`).join(', ')}]`,
    `users: [${e.map(([n]) => `{ name: ${n}, user: {} }`).join(', ')}]`,
    `contexts: [${e.map(([n, c]) => `{ name: ${n}, context: { cluster: ${n}, user: ${n}${c.namespace === undefined ? '' : `, namespace: ${c.namespace}`} } }`).join(', ')}]`,
    `current-context: ${e[0]?.[0]}`,
    '',
  ].join('\n');
}

/** The rows of a `--once` table with a CLUSTER column. */
function rows(stdout: string): string[][] {
  const lines = stdout.split('\n');
  const head = lines.findIndex((l) => /^CLUSTER\s+/.test(l));
  expect(head, stdout).toBeGreaterThan(0);
  return lines
    .slice(head + 1)
    .filter((l) => l.trim() !== '' && !l.startsWith('…'))
    .map((l) => l.trim().split(/\s{2,}/));
}

beforeAll(async () => {
  [eu, us] = [await startApiServer({ port: 0 }), await startApiServer({ port: 0 })];
  await eu.create('v1/pods', pod('web', { namespace: 'default' }));
  await eu.create('v1/pods', pod('db', { namespace: 'data' }));
  await us.create('v1/pods', pod('web', { namespace: 'default' }));
  dir = mkdtempSync(join(tmpdir(), 'rxkube-cli-'));
  kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, contexts({ eu: { url: eu.url }, us: { url: us.url, namespace: 'data' }, other: { url: 'http://127.0.0.1:9' } }));
});

afterAll(async () => {
  await Promise.all([eu.close(), us.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('rxkube watch over several contexts', () => {
  it('--once with two --context flags prints one table with a CLUSTER column and a line per cluster above it', async () => {
    const { code, stdout, stderr } = await runCli(['watch', 'pods', '-A', '--kubeconfig', kubeconfig, '--context', 'eu', '--context', 'us', '--once']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^rxkube watch v1\/pods · 2 clusters · all namespaces · synced in /m);
    expect(stdout).toMatch(/^eu\s+synced\s+2 objects$/m);
    expect(stdout).toMatch(/^us\s+synced\s+1 objects$/m);
    expect(rows(stdout).map((r) => r.slice(0, 3))).toEqual([
      ['eu', 'data', 'db'],
      ['eu', 'default', 'web'],
      ['us', 'default', 'web'],
    ]);
  });

  it("without -A, each context's own namespace is watched, as kubectl would; -o json lines carry the cluster", async () => {
    const { code, stdout } = await runCli(['watch', 'pods', '--kubeconfig', kubeconfig, '--context', 'eu', '--context', 'us', '--once', '-o', 'json']);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; cluster: string; key: string; initial: boolean });
    // eu has no namespace in its context (default), us has data (where it has no pod).
    expect(lines.map((l) => [l.type, l.cluster, l.key, l.initial])).toEqual([['add', 'eu', 'default/web', true]]);
  });

  it('streams a line per change with its cluster, in a pipe, until Ctrl-C', async () => {
    const cli = new CliProcess(['watch', 'pods', '-A', '--kubeconfig', kubeconfig, '--context', 'eu', '--context', 'us']);
    try {
      await cli.waitFor((out) => /^CLUSTER\s+/m.test(out));
      await us.create('v1/pods', pod('api', { namespace: 'default' }));
      await cli.waitFor((out) => /^add\s+us\s+default\/api\s+/m.test(out));
      await eu.delete('v1/pods', 'data', 'db');
      await cli.waitFor((out) => /^delete\s+eu\s+data\/db\s+Deleted$/m.test(out));
    } finally {
      const { code } = await cli.stop('SIGINT');
      expect(code).toBe(0);
    }
    await eu.create('v1/pods', pod('db', { namespace: 'data' }));
    await us.delete('v1/pods', 'default', 'api');
  });

  it('a context whose cluster cannot be reached does not hold up the others; --once names it and exits 1', async () => {
    const { code, stdout, stderr } = await runCli(['watch', 'pods', '-A', '--kubeconfig', kubeconfig, '--all-contexts', '--once', '--timeout', '30s']);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^other\s+unreachable\s+0 objects\s+ConnectionError: list v1\/pods: ECONNREFUSED/m);
    expect(rows(stdout).map((r) => r[0])).toEqual(['eu', 'eu', 'us']);
    expect(stderr).toMatch(/^error: cluster "other": unreachable for 10000 ms; still retrying .*\(unreachable\)$/m);
  }, 40_000);

  it('names a context the kubeconfig does not have, and refuses --all-contexts with --context or --simulator', async () => {
    const missing = await runCli(['watch', 'pods', '--kubeconfig', kubeconfig, '--context', 'eu', '--context', 'mars']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error: --context: no context "mars" in the kubeconfig (it has: eu, us, other)');
    const both = await runCli(['watch', 'pods', '--kubeconfig', kubeconfig, '--context', 'eu', '--all-contexts']);
    expect(both.stderr).toContain('error: --all-contexts and --context cannot be combined');
    const sim = await runCli(['watch', 'pods', '--simulator', '--all-contexts']);
    expect(sim.stderr).toContain('error: --simulator cannot be combined with several --context or --all-contexts');
  });
});
