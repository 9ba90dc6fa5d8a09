import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { V1Deployment, V1Service } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import type { Controller, CustomResource, KubeObject } from '../../src/index.js';
import { startApiServer } from '../../src/testing/index.js';
import { MAIN } from '../cli/run.js';
import { runNode, type ProgramRun } from '../helpers/runExample.js';
import { waitFor } from '../helpers/waitFor.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The first `ts` block after a heading of the README, as a user would copy it. */
async function firstBlockUnder(heading: string): Promise<string> {
  const readme = await readFile(`${root}README.md`, 'utf8');
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README.md has no heading "${heading}"`);
  const block = /\n```ts\n([\s\S]*?)\n```\n/.exec(readme.slice(at));
  if (block?.[1] === undefined) throw new Error(`README.md has no ts block under "${heading}"`);
  return block[1];
}

const quickStart = (): Promise<string> => firstBlockUnder('## Quick start');

/** Typechecks a file as a user's project would, against the built package. */
async function typecheck(file: string): Promise<ProgramRun> {
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  return run([
    tsc, '--ignoreConfig', '--noEmit', '--strict', '--noUncheckedIndexedAccess', '--skipLibCheck',
    '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2023', '--types', 'node', file,
  ]);
}

const run = (args: readonly string[]): Promise<ProgramRun> => runNode(args, { cwd: root });

describe("the README's quick start", () => {
  it('typechecks against the built package and runs on the simulator as the README says it prints', async () => {
    // Saved inside the package, as the README says, so that `import 'rxkube'` resolves to dist/ (built by the
    // test run's global setup); build/ is the tools' output folder, outside git.
    const dir = `${root}build/readme`;
    await mkdir(dir, { recursive: true });
    const file = `${dir}/quickstart.ts`;
    await writeFile(file, await quickStart());

    const checked = await typecheck(file);
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);

    // The project's Node runs the TypeScript file as it is, as the README tells a new user to.
    const { code, stdout, stderr } = await run([file]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual([
      'add default/web-1',
      'add default/web-2',
      '2 pods cached with app=web',
      'add default/web-3',
      'delete default/web-1',
    ]);
  }, 60_000);
});

describe("the README's custom-resource module", () => {
  it('typechecks against the built package, and `rxkube crd generate` on it prints the CRD of examples/website-operator.ts', async () => {
    // website.ts in the package, as the README has the user save it.
    const dir = `${root}build/readme`;
    await mkdir(dir, { recursive: true });
    const file = `${dir}/website.ts`;
    await writeFile(file, await firstBlockUnder('## Your own custom resources'));

    const checked = await typecheck(file);
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);

    // The same schema as the example the section walks through: v1 of the CRD examples/deploy ships (the example
    // adds a v2, converted by its webhook).
    const generated = await run([MAIN, 'crd', 'generate', file]);
    expect(generated.stderr).toBe('');
    expect(generated.code).toBe(0);
    type Crd = { spec: { versions: { name: string }[]; conversion?: unknown } };
    const [readme] = loadAll(generated.stdout) as Crd[];
    const [deployed] = loadAll(await readFile(`${root}examples/deploy/website-crd.yaml`, 'utf8')) as Crd[];
    expect(deployed?.spec.versions.map((v) => v.name)).toEqual(['v1', 'v2']);
    const { conversion: _conversion, ...deployedSpec } = deployed?.spec ?? { versions: [] };
    expect(readme).toEqual({ ...deployed, spec: { ...deployedSpec, versions: deployed?.spec.versions.filter((v) => v.name === 'v1') } });
  }, 60_000);

  it('its operator gives a Website its Deployment and Service, owned by it, and a Ready condition on the simulator', async () => {
    const dir = `${root}build/readme`;
    await mkdir(dir, { recursive: true });
    const file = `${dir}/websiteInProcess.ts`;
    await writeFile(file, await firstBlockUnder('## Your own custom resources'));
    // Imported, not run: its entry point runs only as the main module.
    const mod = (await import(pathToFileURL(file).href)) as {
      Website: CustomResource<KubeObject & { spec: { image: string } }>;
      websiteOperator(kc: unknown): Controller<KubeObject>;
    };
    const server = await startApiServer({ crds: [mod.Website.crd()] });
    const operator = mod.websiteOperator(server.kubeConfig());
    operator.subscribe();
    try {
      const created = await server.create<KubeObject & { spec: { image: string } }>(mod.Website, { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'blog', namespace: 'default' }, spec: { image: 'nginx:1.27' } });
      const d = await waitFor(() => server.list<V1Deployment>('apps/v1/deployments')[0], 'the Deployment');
      expect(d.spec?.replicas).toBe(1);
      expect(d.spec?.template?.spec?.containers?.[0]?.image).toBe('nginx:1.27');
      expect(d.metadata?.ownerReferences).toEqual([{ apiVersion: 'example.com/v1', kind: 'Website', name: 'blog', uid: created.metadata?.uid, controller: true, blockOwnerDeletion: true }]);
      const s = await waitFor(() => server.list<V1Service>('v1/services')[0], 'the Service');
      expect(s.spec?.ports?.[0]?.targetPort).toBe(80);
      type Status = { conditions?: { type: string; status: string; reason: string; message: string }[] };
      const ready = await waitFor(() => (server.list(mod.Website)[0] as { status?: Status } | undefined)?.status?.conditions?.find((c) => c.type === 'Ready'), 'the Ready condition');
      // No pods run on the simulator: the Deployment never reports a ready replica.
      expect(ready).toMatchObject({ status: 'False', reason: 'ReplicasStarting', message: '0/1 replicas ready' });
    } finally {
      // Reconciles in flight finish before the server goes.
      await operator.shutdown();
      await server.close();
    }
  });
});
