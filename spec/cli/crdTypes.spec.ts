import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { crdTypesModule } from '../../src/cli/crdTypesModule.js';
import { startApiServer } from '../../src/testing/index.js';
import { runCli } from './run.js';
import { asCarried } from './crdHelpersShared.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const outDir = join(root, 'build', 'crd-types-spec');

/** The package's entry, as the generated module's `import ... from 'rxkube'` resolves in the spec. */
function rxkubeEntry(): string {
  return relative(outDir, join(root, 'src', 'index.ts'));
}

/** Typechecks the files of outDir as the package's users would compile them; returns tsc's diagnostics. */
async function typecheck(): Promise<string> {
  const tsconfig = {
    extends: relative(outDir, join(root, 'tsconfig.base.json')),
    compilerOptions: { noEmit: true, declaration: false, declarationMap: false, sourceMap: false, rootDir: relative(outDir, root), paths: { rxkube: [rxkubeEntry()] } },
    include: ['*.ts'],
  };
  writeFileSync(join(outDir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', join(outDir, 'tsconfig.json'), '--pretty', 'false'], { cwd: root, encoding: 'utf8' });
  if (run.error !== undefined) throw run.error;
  return run.stdout + run.stderr;
}

/** Uses of the generated types: what must compile, and (after @ts-expect-error) what must not. */
const USES = `import type { HTTPRouteSpecV1, HTTPRouteSpecV1beta1, HTTPRouteStatusV1 } from './httpRoute.js';
import { HTTPRoute } from './httpRoute.js';

export const full: HTTPRouteSpecV1 = {
  parentRefs: [{ name: 'gw', sectionName: 'https', port: 443 }],
  hostnames: ['example.com'],
  rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' }, headers: [{ name: 'x', value: 'y' }], method: 'GET' }], backendRefs: [{ name: 'web', port: 'http' }, { name: 'api', port: 8080 }], timeouts: null, sessionPersistence: { sessionName: 's', other: 1 } }],
  labels: { team: 'web' },
  extensions: { anything: [1, 'two'] },
  retryBudget: null,
  'x-owner-team': 'platform',
};
export const old: HTTPRouteSpecV1beta1 = { hostnames: ['a'] };
export const status: HTTPRouteStatusV1 = { parents: [{ controllerName: 'c', parentRef: { name: 'gw' }, conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] }] };
export const definition = HTTPRoute;

// @ts-expect-error not one of the enum's methods
export const badMethod: HTTPRouteSpecV1 = { rules: [{ matches: [{ method: 'FETCH' }] }] };
// @ts-expect-error name is required in a parentRef
export const noName: HTTPRouteSpecV1 = { parentRefs: [{ port: 80 }] };
// @ts-expect-error a port is a number or a string
export const badPort: HTTPRouteSpecV1 = { rules: [{ backendRefs: [{ name: 'a', port: true }] }] };
// @ts-expect-error a label's value is a string
export const badLabel: HTTPRouteSpecV1 = { labels: { team: 1 } };
// @ts-expect-error a field the schema does not have
export const typo: HTTPRouteSpecV1 = { hostname: ['a'] };
// @ts-expect-error only the rules' timeouts are nullable, not the hostnames
export const nullHosts: HTTPRouteSpecV1 = { hostnames: null };
// @ts-expect-error a condition's status is True, False or Unknown
export const badStatus: HTTPRouteStatusV1 = { parents: [{ controllerName: 'c', parentRef: { name: 'gw' }, conditions: [{ type: 'A', status: 'Yes', reason: 'r', message: '', lastTransitionTime: '' }] }] };
`;

describe('rxkube crd types', () => {
  let text = '';
  beforeAll(async () => {
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, 'httpRoute.ts');
    const { code, stdout, stderr } = await runCli(['crd', 'types', fixture('httpRoute.crd.yaml'), '-o', file]);
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
    text = readFileSync(file, 'utf8');
  });

  it('the module for a third-party-shaped CRD typechecks, and its types accept and refuse what the schema does', async () => {
    writeFileSync(join(outDir, 'uses.ts'), USES);
    expect(await typecheck()).toBe('');
  }, 120_000);

  it('writes an interface per object, named after its path and version, with required members and doc comments', () => {
    expect(text).toContain("import { customResource, jsonSchema } from 'rxkube';");
    expect(text).toContain('/** The desired state of the route. */\nexport interface HTTPRouteSpecV1 {\n  /** The gateways the route attaches to. */\n  parentRefs?: HTTPRouteSpecV1ParentRefs[];');
    expect(text).toContain('export interface HTTPRouteSpecV1ParentRefs {\n  group?: string;\n  kind?: string;\n  name: string;');
    expect(text).toContain('export interface HTTPRouteSpecV1beta1 {\n  hostnames?: string[];\n}');
  });

  it('enums are unions of literals, int-or-string is number | string, nullable adds null, maps and free-form fields are Records', () => {
    expect(text).toContain("  method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'CONNECT' | 'OPTIONS' | 'TRACE' | 'PATCH';");
    expect(text).toContain("  status: 'True' | 'False' | 'Unknown';");
    expect(text).toContain('  port?: number | string;');
    expect(text).toContain('  timeouts?: HTTPRouteSpecV1RulesTimeouts | null;');
    expect(text).toContain('  retryBudget?: number | null;');
    expect(text).toContain('  labels?: Record<string, string>;');
    expect(text).toContain('  extensions?: unknown;');
    expect(text).toContain('  filters?: Record<string, unknown>[];');
    expect(text).toContain('export interface HTTPRouteSpecV1RulesSessionPersistence {\n  sessionName?: string;\n  [field: string]: unknown;\n}');
    expect(text).toContain("  'x-owner-team'?: string;");
  });

  it('the definition carries the names, versions, printer columns, subresources and the schemas verbatim', () => {
    expect(text).toMatch(
      /export const HTTPRoute = customResource\(\{\n {2}group: 'gateway\.example\.io',\n {2}kind: 'HTTPRoute',\n {2}plural: 'httproutes',\n {2}singular: 'httproute',\n {2}listKind: 'HTTPRouteList',\n {2}scope: 'Namespaced',\n {2}shortNames: \['hr'\],\n {2}categories: \['gateway-api', 'all'\],\n {2}versions: \{\n {4}v1beta1: \{\n {6}deprecated: true,/,
    );
    expect(text).toContain('    v1: {\n      storage: true,\n      spec: jsonSchema<HTTPRouteSpecV1>({\n        description: \'The desired state of the route.\',');
    expect(text).toContain("      status: jsonSchema<HTTPRouteStatusV1>({");
    expect(text).toContain("          jsonPath: '.status.parents[*].conditions[?(@.type==\"Accepted\")].status',");
    expect(text).toContain("            'x-kubernetes-list-map-keys': ['name', 'sectionName'],");
    expect(text).toContain("                    'x-kubernetes-int-or-string': true,");
    expect(text).toContain('export type HTTPRoute = typeof HTTPRoute.Type;');
    // The root's required list cannot be carried by a definition, and says so; a `*/` in a description cannot end a comment.
    expect(text).toContain('Not carried: v1: the schema\'s root also has required: ["spec"]');
    expect(text).toContain('A comment breaker *\\/ is kept harmless.');
  });

  it('the schemas in the module are the CRD\'s own, value for value', async () => {
    const { load } = await import('js-yaml');
    const crd = load(readFileSync(fixture('httpRoute.crd.yaml'), 'utf8')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[] } };
    const v1 = crd.spec.versions[1]?.schema.openAPIV3Schema.properties;
    // The generated literal, evaluated: everything between `spec: jsonSchema<HTTPRouteSpecV1>(` and its closing `),`.
    const start = text.indexOf('spec: jsonSchema<HTTPRouteSpecV1>(') + 'spec: jsonSchema<HTTPRouteSpecV1>('.length;
    const end = text.indexOf('\n      }),\n', start) + '\n      }'.length;
    expect(new Function(`return (${text.slice(start, end)});`)()).toEqual(v1?.['spec']);
  });

  it('a CRD whose schema has fields beside spec and status, or none, cannot be typed, and says why', () => {
    const crd = (properties: Record<string, unknown>): Record<string, unknown> => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.example.com' },
      spec: { group: 'example.com', names: { kind: 'Thing', plural: 'things' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties } } }] },
    });
    expect(() => crdTypesModule([crd({ spec: { type: 'object' }, data: { type: 'object' } })])).toThrow(/things\.example\.com: version v1 has top-level fields customResource\(\) cannot carry \(it types spec and status only\): data/);
    expect(() => crdTypesModule([crd({ status: { type: 'object' } })])).toThrow(/version v1 has no spec in its schema/);
    const constrained = crdTypesModule([crd({ metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } }, spec: { type: 'object' } })]);
    expect(constrained).toContain('Not carried: v1: the schema of metadata, {"type":"object","properties":{"name":{"type":"string","maxLength":20}}}');
    const converted = crdTypesModule([{ ...crd({ spec: { type: 'object' } }), spec: { ...(crd({ spec: { type: 'object' } })['spec'] as object), conversion: { strategy: 'Webhook' } } }]);
    expect(converted).toContain('Not carried: the conversion, {"strategy":"Webhook"}.');
  });

  it('hostile names cannot break out of the module: odd keys are quoted, kinds that are not names refused', () => {
    const crd = {
      metadata: { name: 'x.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'X', plural: 'xs' },
        versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', description: 'a */ b', properties: { "a'b": { type: 'string', enum: ["it's", 'x\ny'] } } } } } } }],
      },
    };
    const out = crdTypesModule([crd]);
    expect(out).toContain("  'a\\'b'?: 'it\\'s' | 'x\\ny';");
    const bidi = { ...crd, spec: { ...crd.spec, versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', description: 'x\u202ey\u009bz', properties: { a: { type: 'string', enum: ['\u202e\u0085'] } } } } } } }] } };
    const safe = crdTypesModule([bidi]);
    expect(safe).toContain("  a?: '\\u202e\\u0085';");
    expect(safe).toContain('/** x y z */');
    expect(safe).not.toMatch(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(out).toContain('/** a *\\/ b */');
    expect(() => crdTypesModule([{ ...crd, spec: { ...crd.spec, names: { kind: 'X = 1; evil()', plural: 'xs' } } }])).toThrow(/is not a kind name/);
  });

  it('a cluster that cannot be reached is one error line, not a stack', async () => {
    const server = await startApiServer();
    const kubeconfig = join(outDir, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeConfigYaml());
    await server.close();
    const { code, stdout, stderr } = await runCli(['crd', 'types', '-r', 'websites', '--kubeconfig', kubeconfig]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^error: discovery \/apis: .*ECONNREFUSED.*\n$/);
    expect(stderr).not.toContain('    at ');
  });

  it('needs a file or -r, not both', async () => {
    expect((await runCli(['crd', 'types'])).stderr).toMatch(/give a CRD file or -r <resource>, one of the two/);
    expect((await runCli(['crd', 'types', fixture('httpRoute.crd.yaml'), '-r', 'x'])).stderr).toMatch(/one of the two/);
  });

  it('crd types → install of the module on the simulator: every version loads as a definition and the CRD it gives is accepted with the original schemas', async () => {
    const server = await startApiServer();
    try {
      mkdirSync(outDir, { recursive: true });
      const module = join(outDir, 'roundTrip.ts');
      expect((await runCli(['crd', 'types', fixture('httpRoute.crd.yaml'), '-o', module])).code).toBe(0);
      const kubeconfig = join(outDir, 'kubeconfig');
      writeFileSync(kubeconfig, server.kubeConfigYaml());
      const installed = await runCli(['crd', 'install', module, '--kubeconfig', kubeconfig]);
      expect(installed.stderr).toBe('');
      expect(installed.code).toBe(0);
      const original = load(readFileSync(fixture('httpRoute.crd.yaml'), 'utf8')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[] } };
      const crd = server.get<typeof original & { metadata: object }>('apiextensions.k8s.io/v1/customresourcedefinitions', undefined, 'httproutes.gateway.example.io');
      for (const version of original.spec.versions) {
        const served = crd?.spec.versions.find((v) => v.name === version.name)?.schema.openAPIV3Schema.properties;
        expect(served?.['spec'], version.name).toEqual(asCarried(version.schema.openAPIV3Schema.properties['spec']));
        expect(served?.['status'], version.name).toEqual(asCarried(version.schema.openAPIV3Schema.properties['status'] ?? { type: 'object' }));
      }
    } finally {
      await server.close();
    }
  });
});
