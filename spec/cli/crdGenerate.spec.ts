import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { readCrdFile } from '../../src/cli/crdManifest.js';
import { runCli } from './run.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rxkube-crd-generate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { group: string; names: Record<string, unknown>; versions: Record<string, unknown>[] };
}

describe('rxkube crd generate', () => {
  it('prints every definition a .ts module exports as YAML documents, once each, keys in the usual order', async () => {
    const { code, stdout, stderr } = await runCli(['crd', 'generate', fixture('websiteModule.ts')]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const docs = loadAll(stdout) as Crd[];
    // Blog and Website (also exported as default: given once), in the module namespace's order.
    expect(docs.map((d) => d.metadata.name)).toEqual(['blogs.example.com', 'websites.example.com']);
    expect(stdout.split('\n').filter((l) => l === '---')).toHaveLength(1);
    const website = docs[1] as Crd;
    expect(Object.keys(website)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(Object.keys(website.spec)).toEqual(['group', 'names', 'scope', 'versions']);
    expect(Object.keys(website.spec.names)).toEqual(['kind', 'listKind', 'plural', 'singular', 'shortNames']);
    expect(Object.keys(website.spec.versions[0] as object)).toEqual(['name', 'served', 'storage', 'schema', 'subresources', 'additionalPrinterColumns']);
    expect(stdout.startsWith('apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: blogs.example.com\n')).toBe(true);
    // What the module's crd() returned, reordered and nothing else.
    expect(website.spec.versions[0]).toMatchObject({ schema: { openAPIV3Schema: { properties: { spec: { required: ['image'] } } } }, subresources: { status: {} } });
  });

  it('-o json prints a v1 List of the same CRDs', async () => {
    const { code, stdout } = await runCli(['crd', 'generate', fixture('websiteModule.ts'), '-o', 'json']);
    expect(code).toBe(0);
    const list = JSON.parse(stdout) as { apiVersion: string; kind: string; items: Crd[] };
    expect(list.apiVersion).toBe('v1');
    expect(list.kind).toBe('List');
    expect(list.items.map((c) => c.metadata.name)).toEqual(['blogs.example.com', 'websites.example.com']);
    const yaml = await runCli(['crd', 'generate', fixture('websiteModule.ts')]);
    expect(list.items).toEqual(loadAll(yaml.stdout));
  });

  it('what it prints reads back as the CRDs `crd install` and `crd types` take from a file', async () => {
    const { stdout } = await runCli(['crd', 'generate', fixture('websiteModule.ts')]);
    const file = join(dir, 'crds.yaml');
    writeFileSync(file, stdout);
    expect(readCrdFile(file).map((c) => (c['metadata'] as { name: string }).name)).toEqual(['blogs.example.com', 'websites.example.com']);
  });

  it('a .mjs module that exports no definition is an error naming the module, what was looked for and what it exports', async () => {
    const { code, stdout, stderr } = await runCli(['crd', 'generate', fixture('noDefinitions.mjs')]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/noDefinitions\.mjs exports no custom-resource definition \(a value made by customResource\(\), with a crd\(\) method\); its exports: crd, website/);
  });

  it('a definition whose crd() is not a CRD, a missing file and a wrong extension are errors', async () => {
    expect((await runCli(['crd', 'generate', fixture('badCrd.mjs')])).stderr).toMatch(/export Broken: crd\(\) did not return an apiextensions\.k8s\.io\/v1 CustomResourceDefinition/);
    expect((await runCli(['crd', 'generate', join(dir, 'missing.ts')])).stderr).toMatch(/missing\.ts: no such file/);
    expect((await runCli(['crd', 'generate', fixture('httpRoute.crd.yaml')])).stderr).toMatch(/expected a module ending in \.ts, \.mts, \.js or \.mjs/);
  });

  it('a module that throws while loading is named with its error', async () => {
    const file = join(dir, 'throws.mjs');
    writeFileSync(file, "throw new Error('no \\u001b[31mred');\n");
    const { code, stderr } = await runCli(['crd', 'generate', file]);
    expect(code).toBe(1);
    // Escaped: the module's text reaches the terminal as printable characters.
    expect(stderr).toContain('throws.mjs: the module did not load: Error: no \\x1b[31mred');
  });

  it('a .ts module whose relative .js import has only its .ts file beside it (written for tsc) names both ways out', async () => {
    const { code, stdout, stderr } = await runCli(['crd', 'generate', fixture('tscProject/module.ts')]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('module.ts: the module did not load: Error: Cannot find module');
    expect(stderr).toContain("names.ts is there beside it: the module is written for tsc, whose relative imports name the compiled .js files, and Node's type stripping maps no .js import to a .ts file.");
    expect(stderr).toContain(`Either import the .ts files ('./names.ts' for './names.js') and set "rewriteRelativeImportExtensions": true in tsconfig so that tsc still writes .js imports, or compile the project and pass the compiled .js module)`);
  });

  it('a .ts module whose missing import has no .ts file beside it gets no such advice', async () => {
    const file = join(dir, 'missingImport.ts');
    writeFileSync(file, "import { x } from './nowhere.js';\nexport const y = x;\n");
    const { code, stderr } = await runCli(['crd', 'generate', file]);
    expect(code).toBe(1);
    expect(stderr).toContain('missingImport.ts: the module did not load: Error: Cannot find module');
    expect(stderr).not.toContain('rewriteRelativeImportExtensions');
  });

  it('a .ts module on a Node without type stripping names the requirement', async () => {
    const { code, stderr } = await runCli(['crd', 'generate', fixture('websiteModule.ts')], { NODE_OPTIONS: '--no-experimental-strip-types' });
    expect(code).toBe(1);
    expect(stderr).toMatch(/a TypeScript module is imported through Node's type stripping, which needs Node ≥ 22\.18 \(this is Node [\d.]+, with it off\); upgrade Node, or compile the module and pass the \.js file/);
  });
});
