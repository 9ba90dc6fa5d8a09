import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { runCli } from './run.js';

let server: ApiServer;
let kubeconfig: string;
const dir = mkdtempSync(join(tmpdir(), 'rxkube-watch-custom-'));

const condition = (status: string, reason: string) => ({ type: 'Ready', status, reason, message: '', lastTransitionTime: '2026-01-01T00:00:00Z' });

beforeAll(async () => {
  server = await startApiServer();
  server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
  server.registerResource({ group: 'example.com', version: 'v1', plural: 'gadgets', kind: 'Gadget', namespaced: false });
  await server.create('example.com/v1/widgets', { metadata: { name: 'ready', namespace: 'default' }, spec: {}, status: { conditions: [condition('True', 'Serving')] } });
  await server.create('example.com/v1/widgets', { metadata: { name: 'failing', namespace: 'default' }, spec: {}, status: { conditions: [{ type: 'Synced', status: 'True' }, condition('False', 'ImagePullBackOff')] } });
  await server.create('example.com/v1/widgets', { metadata: { name: 'plain', namespace: 'default' }, spec: {} });
  await server.create('example.com/v1/widgets', { metadata: { name: 'hostile', namespace: 'default' }, spec: {}, status: { conditions: [condition('Unknown', '\u001b[2Jx')] } });
  await server.create('example.com/v1/gadgets', { metadata: { name: 'g' }, spec: {} });
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfigYaml());
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The rows of a `--once` table: NAME and STATUS. */
function rows(stdout: string): Map<string, string> {
  const lines = stdout.split('\n');
  const head = lines.findIndex((l) => /^NAME\s+STATUS\s+AGE\s+LAST$/.test(l));
  expect(head, stdout).toBeGreaterThan(0);
  return new Map(lines.slice(head + 1).filter((l) => l.trim() !== '').map((l) => l.trim().split(/\s{2,}/) as [string, string]));
}

describe('rxkube watch on a custom resource, named as kubectl names it', () => {
  it.each(['widgets', 'widget', 'Widget', 'widgets.example.com', 'widget.example.com', 'example.com/v1/widgets'])('%s is example.com/v1/widgets', async (name) => {
    const { code, stdout, stderr } = await runCli(['watch', name, '--once', '--kubeconfig', kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^rxkube watch example\.com\/v1\/widgets · namespace default · synced/m);
  });

  it('the status column shows the Ready condition and its reason, the generation when there is none, escaped', async () => {
    const { stdout } = await runCli(['watch', 'widgets', '--once', '--kubeconfig', kubeconfig]);
    const status = rows(stdout);
    expect(status.get('ready')).toBe('Ready (Serving)');
    expect(status.get('failing')).toBe('NotReady (ImagePullBackOff)');
    expect(status.get('plain')).toBe('generation 1');
    expect(status.get('hostile')).toBe('Unknown (\\x1b[2Jx)');
  });

  it('the scope comes from discovery: a cluster-scoped custom resource is watched across the cluster, and -n is refused', async () => {
    const { code, stdout } = await runCli(['watch', 'gadgets', '--once', '--kubeconfig', kubeconfig]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^rxkube watch example\.com\/v1\/gadgets · cluster-scoped · synced/m);
    const refused = await runCli(['watch', 'gadget', '-n', 'default', '--once', '--kubeconfig', kubeconfig]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: -n/--namespace: example.com/v1/gadgets is cluster-scoped; leave -n out');
  });

  it('a name nothing matches is one error line with the close names the server serves', async () => {
    const { code, stdout, stderr } = await runCli(['watch', 'widgts', '--once', '--kubeconfig', kubeconfig]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('error: the server serves no resource "widgts": did you mean widgets.example.com? is the CRD installed?\n');
    const far = await runCli(['watch', 'zzzzzz', '--once', '--kubeconfig', kubeconfig]);
    expect(far.stderr).toBe('error: the server serves no resource "zzzzzz": is the CRD installed?\n');
  });

  it('built-in names still resolve without asking the server', async () => {
    const { code, stdout } = await runCli(['watch', 'cm', '-n', 'default', '--once', '--kubeconfig', kubeconfig]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^rxkube watch v1\/configmaps · namespace default · synced/m);
  });
});
