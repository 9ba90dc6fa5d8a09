/**
 * examples/deploy as a user takes it: the Website CRD there is what `rxkube crd generate` prints for
 * examples/website-operator.ts today (so it cannot go stale), `rxkube crd install` establishes it, and the
 * operator's RBAC names the resources that CRD defines.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { Website } from '../../examples/website-operator.js';
import { MAIN } from '../cli/run.js';
import { runNode } from '../helpers/runExample.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const deploy = (file: string): string => join(root, 'examples/deploy', file);

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

describe('examples/deploy', () => {
  let server: ApiServer;
  let dir: string;

  beforeAll(async () => {
    server = await startApiServer();
    dir = mkdtempSync(join(tmpdir(), 'rxkube-deploy-'));
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('website-crd.yaml is what `rxkube crd generate examples/website-operator.ts` prints now', async () => {
    // The built command, from the repository root, as examples/deploy/README.md runs it.
    const { code, stdout, stderr } = await runNode([MAIN, 'crd', 'generate', 'examples/website-operator.ts'], { cwd: root });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const regenerate = 'examples/deploy/website-crd.yaml is stale: regenerate it with `npm run build && node_modules/.bin/node dist/cli/main.js crd generate examples/website-operator.ts > examples/deploy/website-crd.yaml`';
    expect(readFileSync(deploy('website-crd.yaml'), 'utf8'), regenerate).toBe(stdout);
    expect(loadAll(stdout)).toEqual([Website.crd()]);
  });

  it('`rxkube crd install` establishes website-crd.yaml, and the server then defaults a Website as the schema says', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeConfigYaml());
    const { code, stdout, stderr } = await runNode([MAIN, 'crd', 'install', deploy('website-crd.yaml'), '--kubeconfig', kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^customresourcedefinition websites\.example\.com applied\ncustomresourcedefinition websites\.example\.com established/);

    const websites = objectClient(server.kubeConfig(), Website, { fieldManager: 'deploy-spec' });
    const applied = await websites.apply({ apiVersion: Website.apiVersion, kind: Website.kind, metadata: { name: 'blog', namespace: 'default' }, spec: { image: 'nginx:1.27' } });
    expect(applied.spec).toEqual({ image: 'nginx:1.27', replicas: 1, port: 80 });
  });

  it("website-rbac.yaml lets the operator's ServiceAccount read the CRD's resource and write its status", () => {
    const docs = loadAll(readFileSync(deploy('website-rbac.yaml'), 'utf8')) as { kind: string; rules?: Rule[] }[];
    const rules = docs.find((d) => d.kind === 'ClusterRole')?.rules ?? [];
    const allowed = (group: string, resource: string): string[] =>
      rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r) => r.verbs);
    expect(allowed(Website.group, Website.plural)).toEqual(expect.arrayContaining(['list', 'watch']));
    expect(allowed(Website.group, `${Website.plural}/status`)).toContain('patch');
    // Server-side apply of an owned object that does not exist yet is authorized as create as well as patch.
    expect(allowed('apps', 'deployments')).toEqual(expect.arrayContaining(['list', 'watch', 'create', 'patch']));
    expect(allowed('', 'services')).toEqual(expect.arrayContaining(['list', 'watch', 'create', 'patch']));
  });
});
