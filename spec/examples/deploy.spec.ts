/**
 * examples/deploy as a user takes it: the Website CRD there is what `rxkube crd generate` prints for
 * examples/website-operator.ts today (so it cannot go stale), `rxkube crd install` establishes it, the
 * operator's RBAC names the resources that CRD defines, its Deployment runs it as that RBAC's ServiceAccount
 * with probes on the ports it serves, and the image installs every package the examples load.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { V1Deployment, V1Service } from '@kubernetes/client-node';
import { request } from 'node:https';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { imageNodeFlags } from '../../bench/lib/runnerFlags.js';
import { WEBHOOK_SERVICE, WEBHOOKS_NAME, webhooks, Website } from '../../examples/website-operator.js';
import { SIMULATED_SCRAPER, SIMULATED_STRANGER } from '../../examples/lib/loopbackWebhooks.js';
import { MAIN } from '../cli/run.js';
import { probeUntil } from '../helpers/probe.js';
import { runNode, startExample, type ExampleProcess } from '../helpers/runExample.js';
import { waitFor } from '../helpers/waitFor.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const deploy = (file: string): string => join(root, 'examples/deploy', file);

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
}

const manifests = (file: string): Manifest[] => loadAll(readFileSync(deploy(file), 'utf8')) as Manifest[];

/**
 * The bare specifiers `file` loads when it runs: those of its imports and exports, except those of
 * `import type` / `export type` (erased), and the files it loads by a relative path, which `visit` is given.
 */
function runtimeImports(file: string, visit: (path: string) => void): string[] {
  const text = readFileSync(file, 'utf8');
  const names: string[] = [];
  const clause = String.raw`(?:\{[^}]*\}|\*(?:\s+as\s+\w+)?|\w+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+\w+))?)\s*from\s*`;
  const statements = new RegExp(String.raw`(?:^|\n)\s*(?:import|export)(\s+type)?\s*(?:${clause})?'([^']+)'|(?<!typeof\s*)\bimport\(\s*'([^']+)'\s*\)`, 'g');
  for (const m of text.matchAll(statements)) {
    if (m[1] !== undefined) continue;
    const spec = m[2] ?? m[3] ?? '';
    if (spec.startsWith('.')) visit(join(dirname(file), spec.replace(/\.js$/, '.ts')));
    else names.push(spec);
  }
  return names;
}

/** Every bare specifier the examples load at run time, following rxkube's entries through its sources. */
function examplesLoad(): Set<string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { default: string }> };
  const seen = new Set<string>();
  const specs = new Set<string>();
  const visit = (path: string): void => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const spec of runtimeImports(path, visit)) {
      specs.add(spec);
      if (spec !== 'rxkube' && !spec.startsWith('rxkube/')) continue;
      // An entry of the package: its dist file is compiled from the source of the same path under src/.
      const entry = pkg.exports[spec === 'rxkube' ? '.' : `./${spec.slice('rxkube/'.length)}`];
      const target = typeof entry === 'string' ? entry : entry?.default;
      expect(target, `${relative(root, path)} imports ${spec}, which package.json does not export`).toBeDefined();
      visit(join(root, (target ?? '').replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')));
    }
  };
  for (const dir of ['examples', 'examples/lib']) {
    for (const name of readdirSync(join(root, dir))) if (name.endsWith('.ts')) visit(join(root, dir, name));
  }
  return specs;
}

/** A GET over HTTPS that trusts any certificate (Prometheus's `insecure_skip_verify`), with a bearer token if given. */
function scrapeSecure(url: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('examples/deploy', () => {
  let server: ApiServer;
  let dir: string;
  let running: ExampleProcess | undefined;

  beforeAll(async () => {
    server = await startApiServer();
    dir = mkdtempSync(join(tmpdir(), 'rxkube-deploy-'));
  });

  afterAll(async () => {
    if (running !== undefined && running.child.exitCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('website-crd.yaml is what `rxkube crd generate examples/website-operator.ts --webhook-service …` prints now', async () => {
    // The built command, from the repository root, as examples/deploy/README.md runs it.
    const service = `${WEBHOOK_SERVICE.namespace}/${WEBHOOK_SERVICE.name}`;
    const { code, stdout, stderr } = await runNode([MAIN, 'crd', 'generate', 'examples/website-operator.ts', '--webhook-service', service], { cwd: root });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const regenerate = `examples/deploy/website-crd.yaml is stale: regenerate it with \`npm run build && node_modules/.bin/node dist/cli/main.js crd generate examples/website-operator.ts --webhook-service ${service} > examples/deploy/website-crd.yaml\``;
    expect(readFileSync(deploy('website-crd.yaml'), 'utf8'), regenerate).toBe(stdout);
    expect(loadAll(stdout)).toEqual([Website.crd({ conversionWebhook: { service: WEBHOOK_SERVICE } })]);
    // The conversion webhook is reached through website-service.yaml's webhook Service, which the certificate is for.
    const webhookService = (manifests('website-service.yaml') as (Manifest & V1Service)[]).find((s) => s.spec?.ports?.[0]?.targetPort === 'webhook-server');
    expect(WEBHOOK_SERVICE).toEqual({ namespace: webhookService?.metadata.namespace, name: webhookService?.metadata.name });
  });

  it('website-webhooks.yaml is what `rxkube manifests examples/website-operator.ts` prints for the webhook Service, and registers every admission webhook the operator serves', async () => {
    const service = `${WEBHOOK_SERVICE.namespace}/${WEBHOOK_SERVICE.name}`;
    const { code, stdout, stderr } = await runNode([MAIN, 'manifests', 'examples/website-operator.ts', '--service', service, '--name', WEBHOOKS_NAME], { cwd: root });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const regenerate = `examples/deploy/website-webhooks.yaml is stale: regenerate it with \`npm run build && node_modules/.bin/node dist/cli/main.js manifests examples/website-operator.ts --service ${service} --name ${WEBHOOKS_NAME} > examples/deploy/website-webhooks.yaml\``;
    expect(readFileSync(deploy('website-webhooks.yaml'), 'utf8'), regenerate).toBe(stdout);
    const objects = loadAll(stdout) as (Manifest & { webhooks?: { name: string; clientConfig: { service?: { path?: string } } }[] })[];
    // The CRD, as website-crd.yaml has it, then one configuration of each kind, named as the provisioner writes them.
    expect(objects[0]).toEqual(loadAll(readFileSync(deploy('website-crd.yaml'), 'utf8'))[0]);
    expect(objects.slice(1).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([`ValidatingWebhookConfiguration/${WEBHOOKS_NAME}`, `MutatingWebhookConfiguration/${WEBHOOKS_NAME}`]);
    const paths = objects.slice(1).flatMap((o) => (o.webhooks ?? []).map((w) => w.clientConfig.service?.path));
    expect(paths).toEqual(webhooks.filter((w) => w.type !== 'conversion').map((w) => w.path));
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
    // The owner references carry blockOwnerDeletion, which OwnerReferencesPermissionEnforcement allows only to
    // whoever may update the owner's finalizers (spec/e2e/websiteRbac.e2e.spec.ts shows the refusal without it).
    expect(allowed(Website.group, `${Website.plural}/finalizers`)).toEqual(['update']);
    // Server-side apply of an owned object that does not exist yet is authorized as create as well as patch.
    expect(allowed('apps', 'deployments')).toEqual(expect.arrayContaining(['list', 'watch', 'create', 'patch']));
    expect(allowed('', 'services')).toEqual(expect.arrayContaining(['list', 'watch', 'create', 'patch']));
  });

  it('website-rbac.yaml lets the runner provision its webhook certificate into the objects it names, and nothing else, and lets a scraper read /metrics', () => {
    type NamedRule = Rule & { resourceNames?: string[]; nonResourceURLs?: string[] };
    const docs = manifests('website-rbac.yaml') as (Manifest & { rules?: NamedRule[]; roleRef?: { name: string }; subjects?: { name: string; namespace: string }[] })[];
    const clusterRole = docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'website-operator');
    const named = (rules: readonly NamedRule[] | undefined, resource: string): Record<string, string[]> =>
      Object.fromEntries((rules ?? []).filter((r) => r.resources?.includes(resource)).flatMap((r) => r.verbs.map((v) => [v, r.resourceNames ?? ['*']])));
    // The CA bundle goes into the configurations webhookManifests names WEBHOOKS_NAME, and into the Website CRD.
    const byName = (name: string): Record<string, string[]> => ({ get: [name], list: [name], watch: [name], update: [name] });
    for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) expect(named(clusterRole?.rules, kind)).toEqual(byName(WEBHOOKS_NAME));
    expect(named(clusterRole?.rules, 'customresourcedefinitions')).toEqual(byName(`${Website.plural}.${Website.group}`));
    // The Secret, in the operator's namespace only: `<name>-webhook-tls`, webhookCertificates' default.
    const role = docs.find((d) => d.kind === 'Role');
    expect(role?.metadata.namespace).toBe('website-operator');
    expect(named(role?.rules, 'secrets')).toEqual({ create: ['*'], ...byName(`${WEBHOOKS_NAME}-webhook-tls`) });
    expect(docs.find((d) => d.kind === 'RoleBinding' && d.roleRef?.name === role?.metadata.name)?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'website-operator', namespace: 'website-operator' }]);
    // TokenReview and SubjectAccessReview for --metrics-secure, through the built-in role.
    expect(docs.find((d) => d.kind === 'ClusterRoleBinding' && d.roleRef?.name === 'system:auth-delegator')?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'website-operator', namespace: 'website-operator' }]);
    // The scraper's role, bound by whoever runs Prometheus (no binding here).
    expect(docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'website-operator-metrics-reader')?.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    expect(docs.filter((d) => d.roleRef?.name === 'website-operator-metrics-reader')).toEqual([]);
  });

  it("website-operator.yaml runs the operator as website-rbac.yaml's ServiceAccount, in its namespace, from the image's compiled examples", () => {
    const rbac = manifests('website-rbac.yaml');
    const sa = rbac.find((o) => o.kind === 'ServiceAccount');
    const binding = rbac.find((o) => o.kind === 'ClusterRoleBinding') as (Manifest & { subjects: { kind: string; name: string; namespace: string }[] }) | undefined;
    const [deployment, ...rest] = manifests('website-operator.yaml') as (Manifest & V1Deployment)[];
    expect(rest).toEqual([]);
    expect(deployment?.kind).toBe('Deployment');
    expect(deployment?.metadata.namespace).toBe('website-operator');
    expect(sa?.metadata).toEqual({ name: 'website-operator', namespace: deployment?.metadata.namespace });
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: sa?.metadata.name, namespace: sa?.metadata.namespace }]);
    const pod = deployment?.spec?.template.spec;
    expect(pod?.serviceAccountName).toBe(sa?.metadata.name);
    // No Lease, so no leader election: one replica, and no second one during a rollout.
    expect(deployment?.spec?.replicas).toBe(1);
    expect(deployment?.spec?.strategy?.type).toBe('Recreate');
    // The image's WORKDIR holds build/examples as ./examples: the command names the compiled example.
    const dockerfile = readFileSync(deploy('Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^WORKDIR \/app$/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/src\/build\/examples \.\/examples$/m);
    const [container] = pod?.containers ?? [];
    // Node's flags in between are the image's (the spec after next).
    expect([container?.command?.[0], container?.command?.at(-1)]).toEqual(['node', 'examples/website-operator.js']);
    expect(existsSync(join(root, 'examples/website-operator.ts'))).toBe(true);
    expect(dockerfile).toContain(`-t ${container?.image ?? ''} `);
  });

  it('website-operator.yaml probes the ports its flags serve, and the operator serves its probes, secure metrics and webhooks there', async () => {
    const [deployment] = manifests('website-operator.yaml') as V1Deployment[];
    const container = deployment?.spec?.template.spec?.containers[0];
    const flags = new Map((container?.args ?? []).map((a) => (/^--([a-z-]+)(?:=(.*))?$/.exec(a)?.slice(1, 3) ?? [a, undefined]) as [string, string | undefined]));
    const port = (name: string): number | undefined => container?.ports?.find((p) => p.name === name)?.containerPort;
    expect(flags.get('metrics-bind-address')).toBe(`:${port('metrics')}`);
    expect(flags.get('health-probe-bind-address')).toBe(`:${port('probes')}`);
    expect(flags.get('webhook-bind-address')).toBe(`:${port('webhook-server')}`);
    // Secure metrics by default in a pod, as kubebuilder's scaffold; the webhooks' certificate is provisioned for
    // website-service.yaml's webhook Service.
    expect(flags.has('metrics-secure') && flags.get('metrics-secure') === undefined).toBe(true);
    const services = manifests('website-service.yaml') as (Manifest & V1Service)[];
    const webhookService = services.find((s) => s.spec?.ports?.[0]?.targetPort === 'webhook-server');
    expect(flags.get('webhook-service')).toBe(`${webhookService?.metadata.namespace}/${webhookService?.metadata.name}`);
    expect(webhookService?.spec?.ports?.[0]?.port).toBe(443);
    expect(container?.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'probes' });
    expect(container?.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'probes' });

    // The same flags, bind addresses on free loopback ports, on the simulator: each server starts and answers.
    const args = [...flags].map(([name, value]) => (value === undefined ? `--${name}` : name.endsWith('-bind-address') ? `--${name}=127.0.0.1:0` : `--${name}=${value}`));
    const p = startExample('website-operator', ['--simulator', ...args]);
    running = p;
    const at = (what: string): Promise<string> => waitFor(() => new RegExp(`^serving ${what} on (https?://\\S+)$`, 'm').exec(p.stdout())?.[1], `the ${what} server`, 20_000);
    const probes = await at('probes');
    const metrics = await at('metrics');
    expect(await at('webhooks')).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(metrics).toMatch(/^https:/);
    await probeUntil(`${probes}/readyz`, 200, 'the caches to sync', { timeoutMs: 20_000 });
    expect((await fetch(`${probes}/healthz`)).status).toBe(200);
    // The webhooks, registered on the simulator, answered the API server's calls for the writes the example makes.
    await waitFor(() => /^webhooks: default\/huge refused: /m.test(p.stdout()), 'the example to show its webhooks', 20_000);
    // Both seeded Websites and the one written as v2 Ready before SIGTERM, so the closing check has nothing to wait for.
    await waitFor(() => ['blog: 2/2', 'shop: 3/3', 'docs: 1/1'].every((w) => new RegExp(`^reconciled default/${w} ready$`, 'm').test(p.stdout())), 'the Websites Ready', 20_000);
    // /metrics over HTTPS: the simulator's Prometheus identity may read it, another token may not, no token is 401.
    expect((await scrapeSecure(`${metrics}/metrics`)).status).toBe(401);
    expect((await scrapeSecure(`${metrics}/metrics`, SIMULATED_STRANGER.token)).status).toBe(403);
    const scraped = await scrapeSecure(`${metrics}/metrics`, SIMULATED_SCRAPER.token);
    expect(scraped.status).toBe(200);
    expect(scraped.body).toMatch(/^controller_runtime_reconcile_total\{[^}]*result="success"\} [1-9]\d*$/m);
    expect(scraped.body).toMatch(/^controller_runtime_webhook_requests_total\{[^}]*webhook="\/validate-example-com-v1-website"[^}]*\} [1-9]\d*$/m);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(p.stdout()).toMatch(/^converged: 3 websites, each with its Deployment and Service, Ready$/m);
    expect(p.stderr()).toBe('');
  }, 60_000);

  it("the image's Node options are all in NODE_OPTIONS, which a pod's own command keeps, and node starts with them", async () => {
    const { nodeOptions, entrypoint } = imageNodeFlags(readFileSync(deploy('Dockerfile'), 'utf8'), deploy('Dockerfile'));
    // The one V8 setting the image makes (PF-47); none on the command line, which a pod's own command would replace.
    expect(nodeOptions).toEqual(['--max-semi-space-size=4']);
    expect(entrypoint).toEqual([]);
    const [deployment] = manifests('website-operator.yaml') as V1Deployment[];
    const command = deployment?.spec?.template.spec?.containers[0]?.command ?? [];
    expect(command).toEqual(['node', 'examples/website-operator.js']);
    // An option NODE_OPTIONS does not allow, or a V8 flag this Node does not know, would stop the container at start.
    const run = await runNode(['-e', 'process.stdout.write("started")'], { env: { ...process.env, NODE_OPTIONS: nodeOptions.join(' ') } });
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ code: 0, stdout: 'started', stderr: '' });
  });

  it('the image installs every peer of rxkube the examples load, at the range the repository tests them with', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; devDependencies: Record<string, string> };
    const packageOf = (spec: string): string => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
    const peers = [...new Set([...examplesLoad()].map(packageOf))].filter((name) => Object.hasOwn(pkg.peerDependencies, name)).sort();
    // The examples reach prom-client through rxkube/metrics and zod directly: found by following the imports.
    expect(peers).toEqual(expect.arrayContaining(['@kubernetes/client-node', 'prom-client', 'rxjs', 'zod']));
    const install = /npm install [^\n]*?\/tmp\/pkg\/rxkube-\*\.tgz((?: [^\s\\]+)*)/.exec(readFileSync(deploy('Dockerfile'), 'utf8'))?.[1] ?? '';
    const installed = Object.fromEntries(install.trim().split(' ').map((s) => [s.slice(0, s.lastIndexOf('@')), s.slice(s.lastIndexOf('@') + 1)]));
    expect(Object.fromEntries(peers.map((name) => [name, installed[name]]))).toEqual(Object.fromEntries(peers.map((name) => [name, pkg.devDependencies[name]])));
  });
});
