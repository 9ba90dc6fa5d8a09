/**
 * `rxkube crd install`, `rxkube crd types -r` and `rxkube watch` on a custom resource against a real
 * kube-apiserver: server-side apply under the field manager `rxkube` and the wait for Established, a CRD
 * whose names the server refuses (named with the condition's reason and message), the force decision on
 * a field another manager owns, and kubectl's names for a custom resource resolved through discovery.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import buildDist from '../helpers/buildDist.js';
import { waitFor } from '../helpers/waitFor.js';
import { runCli } from '../cli/run.js';
import { startCluster, type Cluster } from './cluster.js';
import { asCarried, minimalCrd } from '../cli/crdHelpersShared.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../cli/fixtures/${name}`, import.meta.url));
let cluster: Cluster;
/** The round trip needs customResource() in the package; until it is exported that case is skipped. */
let kubeconfig: string;

interface Crd {
  metadata: { name: string; managedFields?: { manager: string; operation: string }[] };
  status?: { conditions?: { type: string; status: string; reason?: string }[] };
}

beforeAll(async () => {
  buildDist();
  cluster = await startCluster();
  kubeconfig = cluster.kubeconfigPath;
});

afterAll(async () => {
  await cluster?.stop();
});

/** A CRD file of one CRD, in YAML's JSON subset. */
function crdFile(name: string, crd: object): string {
  const file = join(cluster.pkiDir, '..', `${name}.json`);
  writeFileSync(file, JSON.stringify(crd));
  return file;
}

describe('rxkube crd install against kube-apiserver', () => {
  it('applies every CRD of a module under the field manager rxkube and names each as it becomes Established', async () => {
    const { code, stdout, stderr } = await runCli(['crd', 'install', fixture('websiteModule.ts'), '--kubeconfig', kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['customresourcedefinition blogs.example.com applied', 'customresourcedefinition websites.example.com applied']);
    expect(lines.slice(2).map((l) => l.replace(/ \(.*\)$/, '')).sort()).toEqual([
      'customresourcedefinition blogs.example.com established',
      'customresourcedefinition websites.example.com established',
    ]);
    const crd = await objectClient(cluster.kubeConfig, 'apiextensions.k8s.io/v1/customresourcedefinitions').get('websites.example.com');
    const c = crd as unknown as Crd;
    expect(c.status?.conditions?.find((x) => x.type === 'Established')?.status).toBe('True');
    expect(c.metadata.managedFields?.some((f) => f.manager === 'rxkube' && f.operation === 'Apply')).toBe(true);
  });

  it('installing again is a no-op that succeeds', async () => {
    const { code, stdout } = await runCli(['crd', 'install', fixture('websiteModule.ts'), '--kubeconfig', kubeconfig]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^customresourcedefinition websites\.example\.com established/m);
  });

  it('a CRD whose names the server refuses fails at once with NamesAccepted, its reason and its message', async () => {
    // `ws` is websites.example.com's short name already.
    const file = crdFile('wonders', minimalCrd('wonders', 'Wonder', ['ws']));
    const { code, stdout, stderr } = await runCli(['crd', 'install', file, '--kubeconfig', kubeconfig, '--timeout', '30s']);
    expect(code).toBe(1);
    expect(stdout).toBe('customresourcedefinition wonders.example.com applied\n');
    expect(stderr).toMatch(/^error: wonders\.example\.com is not Established: NamesAccepted False \(ShortNamesConflict\): "\\"ws\\" is already in use"\n$/);
  });

  it('fields another manager owns are taken over by default, and refused with --no-force-conflicts', async () => {
    const file = crdFile('gizmos', minimalCrd('gizmos', 'Gizmo', ['gz']));
    expect((await runCli(['crd', 'install', file, '--kubeconfig', kubeconfig])).code).toBe(0);
    // Another manager applies a different short name list: it now shares ownership of a field rxkube set.
    const other = objectClient(cluster.kubeConfig, 'apiextensions.k8s.io/v1/customresourcedefinitions', { fieldManager: 'platform-team' });
    const changed = minimalCrd('gizmos', 'Gizmo', ['gzm']);
    await other.apply(changed as never, { force: true });
    const refused = await runCli(['crd', 'install', file, '--kubeconfig', kubeconfig, '--no-force-conflicts']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: gizmos\.example\.com: .*conflict.*platform-team/im);
    const forced = await runCli(['crd', 'install', file, '--kubeconfig', kubeconfig]);
    expect(forced.code).toBe(0);
    const crd = (await other.get('gizmos.example.com')) as unknown as { spec: { names: { shortNames: string[] } } };
    expect(crd.spec.names.shortNames).toEqual(['gz']);
  });
});

describe('kubectl names for a custom resource, through discovery', () => {
  beforeAll(async () => {
    const websites = objectClient(cluster.kubeConfig, 'example.com/v1/websites', { namespace: 'default' });
    await waitFor(async () => (await websites.list().then(() => true, () => false)), 'websites to be served', 30_000);
    await websites.create({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'blog' }, spec: { image: 'nginx' } } as never);
    await websites.applyStatus(
      { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'blog' }, status: { readyReplicas: 1, conditions: [{ type: 'Ready', status: 'True', reason: 'Serving', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] } } as never,
      { force: true },
    );
  });

  it.each(['websites', 'website', 'ws', 'websites.example.com', 'Website'])('rxkube watch %s finds example.com/v1/websites and shows the Ready condition and the printer columns', async (name) => {
    const { code, stdout, stderr } = await runCli(['watch', name, '--once', '--kubeconfig', kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^rxkube watch example\.com\/v1\/websites · namespace default · synced/m);
    // The CRD's printer columns between STATUS and AGE: its Age column is the table's own.
    expect(stdout).toMatch(/^NAME\s+STATUS\s+IMAGE\s+READY\s+AGE\s+LAST$/m);
    expect(stdout).toMatch(/^blog\s+Ready \(Serving\)\s+nginx\s+1\s+\d+s$/m);
  });

  it('a name the server does not serve suggests the close ones', async () => {
    const { code, stderr } = await runCli(['watch', 'webstes', '--once', '--kubeconfig', kubeconfig]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/the server serves no resource "webstes": did you mean websites\.example\.com\? is the CRD installed\?/);
  });

  it.each(['websites', 'ws', 'websites.example.com'])('rxkube crd types -r %s writes the module for the installed CRD', async (name) => {
    const { code, stdout, stderr } = await runCli(['crd', 'types', '-r', name, '--kubeconfig', kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain("export const Website = customResource({\n  group: 'example.com',\n  kind: 'Website',");
    expect(stdout).toContain('export interface WebsiteSpec {\n  image: string;\n  replicas?: number;\n}');
  });

  it('crd types -r on a built-in resource says it is not a custom resource', async () => {
    const { code, stderr } = await runCli(['crd', 'types', '-r', 'deploy', '--kubeconfig', kubeconfig]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/deploy is apps\/deployments, a built-in resource, not a custom resource/);
  });

  // Runs once customResource() is exported: the module `crd types` writes for a third-party-shaped CRD is imported by
  // `crd install` itself (Node strips its types; 'rxkube' resolves to this package's dist), and the server accepts the
  // CRD it gives, with the schemas of the original.
  it('crd types → install of the module: the HTTPRoute-shaped CRD round-trips to one the server accepts', async () => {
    const dir = join(fileURLToPath(new URL('../..', import.meta.url)), 'build', 'crd-roundtrip');
    mkdirSync(dir, { recursive: true });
    const module = join(dir, 'httpRoute.ts');
    expect((await runCli(['crd', 'types', fixture('httpRoute.crd.yaml'), '-o', module])).code).toBe(0);
    const installed = await runCli(['crd', 'install', module, '--kubeconfig', kubeconfig]);
    expect(installed.stderr).toBe('');
    expect(installed.code).toBe(0);
    const original = load(readFileSync(fixture('httpRoute.crd.yaml'), 'utf8')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[] } };
    const crd = (await objectClient(cluster.kubeConfig, 'apiextensions.k8s.io/v1/customresourcedefinitions').get('httproutes.gateway.example.io')) as unknown as typeof original;
    for (const version of original.spec.versions) {
      const served = crd.spec.versions.find((v) => v.name === version.name)?.schema.openAPIV3Schema.properties;
      expect(served?.['spec'], version.name).toEqual(asCarried(version.schema.openAPIV3Schema.properties['spec']));
      // A status subresource without a status schema gets an empty object schema, which keeps nothing either.
      expect(served?.['status'], version.name).toEqual(asCarried(version.schema.openAPIV3Schema.properties['status'] ?? { type: 'object' }));
    }
  });
});
