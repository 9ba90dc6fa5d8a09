import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/index.js';
import { websiteCrd } from '../testing/crdFixtures.js';
import { CliProcess } from './run.js';

// `rxkube simulator --crd … --kubeconfig-out …`: the simulator as a process of its own, serving the CRDs of
// YAML files and TypeScript modules, reached through the kubeconfig it writes.

let dir: string;
let cli: CliProcess | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rxkube-simulator-'));
});
afterEach(async () => {
  await cli?.stop('SIGTERM');
  cli = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A module as `customResource` definitions look to the command: exports with a crd() method, types stripped by Node. */
const MODULE = `
interface Crd { apiVersion: string; kind: string; metadata: { name: string }; spec: Record<string, unknown> }
const schema: Record<string, unknown> = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } };
export const Gadget = {
  kind: 'Gadget',
  crd(): Crd {
    return {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.tools.example.com' },
      spec: { group: 'tools.example.com', scope: 'Cluster', names: { plural: 'gadgets', kind: 'Gadget' }, versions: [{ name: 'v1', served: true, storage: true, schema }] },
    };
  },
};
export const unrelated: number = 42;
`;

describe('rxkube simulator', () => {
  it('serves the CRDs of a multi-document YAML file and a .ts module, with a kubeconfig rxkube clients use', async () => {
    const yaml = join(dir, 'crds.yaml');
    const page = websiteCrd({ plural: 'pages', kind: 'Page' });
    page.spec.names.shortNames = [];
    writeFileSync(yaml, `${JSON.stringify(websiteCrd())}\n---\n${JSON.stringify(page)}\n`);
    const mod = join(dir, 'gadget.ts');
    writeFileSync(mod, MODULE);
    const kubeconfig = join(dir, 'kubeconfig');
    cli = new CliProcess(['simulator', '--crd', yaml, '--crd', mod, '--kubeconfig-out', kubeconfig]);
    await cli.waitFor((out) => out.includes('ready'));
    expect(cli.stdout).toMatch(/^rxkube simulator ready at http:\/\/127\.0\.0\.1:\d+ with 3 CRDs; kubeconfig written to /);
    expect(existsSync(kubeconfig)).toBe(true);

    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const websites = objectClient(kc, { group: 'example.com', version: 'v1', plural: 'websites', namespaced: true }, { namespace: 'default' });
    await websites.apply({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'blog' }, spec: { image: 'nginx', replicas: 2 } } as never, { force: true });
    expect((await websites.get('blog')).metadata?.generation).toBe(1);
    const gadgets = objectClient(kc, { group: 'tools.example.com', version: 'v1', plural: 'gadgets', namespaced: false });
    await gadgets.create({ apiVersion: 'tools.example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 1 } } as never);
    expect((await gadgets.list()).items.map((g) => g.metadata?.name)).toEqual(['g']);
    const crds = objectClient(kc, { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', namespaced: false });
    expect((await crds.list()).items.map((c) => c.metadata?.name)).toEqual(['gadgets.tools.example.com', 'pages.example.com', 'websites.example.com']);

    const ended = await cli.stop('SIGTERM');
    cli = undefined;
    expect(ended.code).toBe(0);
  });

  it('refuses a file that holds something else, and a CRD the server would refuse, before serving', async () => {
    const other = join(dir, 'other.yaml');
    writeFileSync(other, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n');
    const wrong = await new CliProcess(['simulator', '--crd', other]).exited;
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`error: --crd ${other}: document 1 is v1 ConfigMap, not an apiextensions.k8s.io/v1 CustomResourceDefinition`);

    const invalid = join(dir, 'invalid.json');
    writeFileSync(invalid, JSON.stringify(websiteCrd({ group: 'local' })));
    const refused = await new CliProcess(['simulator', '--crd', invalid]).exited;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: --crd: CRD 1 would be refused: CustomResourceDefinition.apiextensions.k8s.io "websites.local" is invalid: spec.group');

    const empty = join(dir, 'empty.mjs');
    writeFileSync(empty, 'export const x = 1;\n');
    const none = await new CliProcess(['simulator', '--crd', empty]).exited;
    expect(none.stderr).toContain(`error: --crd ${empty} exports no custom-resource definition`);
  });
});
