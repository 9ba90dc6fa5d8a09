/**
 * The simulator tier of `rxkube crd install`, `crd types -r` and `watch` on an installed CRD: the same
 * cases spec/e2e/crdCli.e2e.spec.ts runs against kube-apiserver. They run as soon as the simulator
 * serves CustomResourceDefinitions (a POST of one answers 201); until then they are skipped.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { runCli } from './run.js';
import { minimalCrd } from './crdHelpersShared.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('rxkube crd install against the simulator', () => {
  let server: ApiServer;
  let dir: string;
  let kubeconfig: string;

  beforeAll(async () => {
    server = await startApiServer();
    dir = mkdtempSync(join(tmpdir(), 'rxkube-crd-install-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeConfigYaml());
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies every CRD of a module and names each as it becomes Established; again, it is a no-op', async () => {
    const { code, stdout, stderr } = await runCli(['crd', 'install', fixture('websiteModule.ts'), '--kubeconfig', kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['customresourcedefinition blogs.example.com applied', 'customresourcedefinition websites.example.com applied']);
    expect(lines.slice(2).map((l) => l.replace(/ \(.*\)$/, '')).sort()).toEqual([
      'customresourcedefinition blogs.example.com established',
      'customresourcedefinition websites.example.com established',
    ]);
    expect((await runCli(['crd', 'install', fixture('websiteModule.ts'), '--kubeconfig', kubeconfig])).code).toBe(0);
  });

  it('a CRD whose names are taken fails with NamesAccepted, its reason and message', async () => {
    const file = join(dir, 'wonders.json');
    writeFileSync(file, JSON.stringify(minimalCrd('wonders', 'Wonder', ['ws'])));
    const { code, stderr } = await runCli(['crd', 'install', file, '--kubeconfig', kubeconfig, '--timeout', '30s']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: wonders\.example\.com is not Established: NamesAccepted False \(ShortNamesConflict\): /);
  });

  it('watch finds the installed resource by its short name and shows its printer columns; types -r writes its module', async () => {
    await waitFor(async () => (await fetch(`${server.url}/apis/example.com/v1/namespaces/default/websites`)).status === 200, 'websites to be served', 10_000);
    const created = await fetch(`${server.url}/apis/example.com/v1/namespaces/default/websites`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'blog' }, spec: { image: 'nginx' } }),
    });
    expect(created.status).toBe(201);
    const watched = await runCli(['watch', 'ws', '--once', '--kubeconfig', kubeconfig]);
    expect(watched.stderr).toBe('');
    expect(watched.stdout).toMatch(/^NAME\s+STATUS\s+IMAGE\s+READY\s+AGE\s+LAST$/m);
    expect(watched.stdout).toMatch(/^blog\s+generation 1\s+nginx\s+<none>\s+\d+s$/m);
    const types = await runCli(['crd', 'types', '-r', 'websites', '--kubeconfig', kubeconfig]);
    expect(types.code).toBe(0);
    expect(types.stdout).toContain('export interface WebsiteSpec {\n  image: string;\n  replicas?: number;\n}');
  });

  it('a CRD never seen within --timeout fails naming it and the last error of the watch', async () => {
    const failing = await startApiServer();
    try {
      // Every list of CRDs fails: the informer never sees the CRD it waits for.
      failing.faults.inject({ type: 'status', status: 500 }, { verb: 'list', times: 1_000 });
      const file = join(dir, 'gadgets.json');
      writeFileSync(file, JSON.stringify(minimalCrd('gadgets', 'Gadget', [])));
      const config = join(dir, 'failing-kubeconfig');
      writeFileSync(config, failing.kubeConfigYaml());
      const { code, stdout, stderr } = await runCli(['crd', 'install', file, '--kubeconfig', config, '--timeout', '1s']);
      expect(stdout).toBe('customresourcedefinition gadgets.example.com applied\n');
      expect(code).toBe(1);
      expect(stderr).toMatch(/^error: not Established within 1\.0s: gadgets\.example\.com: not seen; last error: .*500/);
    } finally {
      await failing.close();
    }
  });
});
