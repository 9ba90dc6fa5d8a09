/**
 * examples/deploy's website-operator rights, exercised: on a real kube-apiserver with RBAC authorization and the
 * OwnerReferencesPermissionEnforcement admission plugin (which hardened clusters turn on), website-crd.yaml and
 * website-rbac.yaml are applied as written, and examples/website-operator runs as the ServiceAccount they name,
 * with a token from the TokenRequest API as a pod gets one. It converges with those rights alone, and the server's
 * audit log shows a request for each of them; it is refused what it does not need; and a role less one of the
 * rights the server checks inside a request (create, for a server-side apply that creates; websites/finalizers,
 * for an owner reference with blockOwnerDeletion) is refused the write the operator makes. website-operator.yaml,
 * the operator's Deployment, is accepted by the server as written.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuthorizationV1Api, CoreV1Api, KubeConfig, type V1ClusterRole, type V1Deployment, type V1PolicyRule, type V1Service } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import type { Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { runManager } from '../../src/manager/runManager.js';
import { KubeApiError } from '../../src/errors/api/index.js';
import type { KubeObject } from '../../src/store/types.js';
import buildDist from '../helpers/buildDist.js';
import { waitFor } from '../helpers/waitFor.js';
import type { WebsiteOperator } from '../../examples/website-operator.js';
import { startCluster, type AuditEvent, type Cluster } from './cluster.js';
import { bindMetricsScraper } from './helpers.js';

const deployDir = fileURLToPath(new URL('../../examples/deploy/', import.meta.url));
/** Where examples/deploy puts the operator, and its ServiceAccount's name. */
const SYSTEM = 'website-operator';
const SA = 'website-operator';
/** Where the test's Websites live. */
const APPS = 'e2e-websites';
/** Token users, each bound to website-rbac.yaml's ClusterRole less one right: [user, verb, group, resource]. */
const WITHOUT: readonly (readonly [user: string, verb: string, group: string, resource: string])[] = [
  ['website-operator-without-finalizers', 'update', 'example.com', 'websites/finalizers'],
  ['website-operator-without-create-deployments', 'create', 'apps', 'deployments'],
  ['website-operator-without-create-services', 'create', '', 'services'],
];
/** The ServiceAccount's user name, as the server authenticates its token. */
const SA_USER = `system:serviceaccount:${SYSTEM}:${SA}`;

/** The resource each kind in the manifests is written to. */
const RESOURCES: Record<string, string> = {
  CustomResourceDefinition: 'apiextensions.k8s.io/v1/customresourcedefinitions',
  ServiceAccount: 'v1/serviceaccounts',
  ClusterRole: 'rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: 'rbac.authorization.k8s.io/v1/clusterrolebindings',
  Role: 'rbac.authorization.k8s.io/v1/roles',
  RoleBinding: 'rbac.authorization.k8s.io/v1/rolebindings',
  Deployment: 'apps/v1/deployments',
  Service: 'v1/services',
  ValidatingWebhookConfiguration: 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  MutatingWebhookConfiguration: 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
};

/** The Secret the runner keeps the provisioned webhook certificate in, and the webhook configurations' name. */
const TLS_SECRET = 'website-operator-webhook-tls';
const WEBHOOKS = 'website-operator';
/**
 * The ClusterRole's rights that only the certificate provisioner uses (writing CA bundles), which the controller
 * alone never asks for.
 */
const CERTIFICATE_RIGHTS = new Set(
  ['admissionregistration.k8s.io/validatingwebhookconfigurations', 'admissionregistration.k8s.io/mutatingwebhookconfigurations', 'apiextensions.k8s.io/customresourcedefinitions'].flatMap((r) =>
    ['get', 'list', 'watch', 'update'].map((verb) => `${verb} ${r}`),
  ),
);

let cluster: Cluster;
/** The operator's identity: the ServiceAccount's bound token, as the kubelet would mount it. */
let operatorKc: KubeConfig;
const subscriptions: Subscription[] = [];
let played: { unsubscribe(): void } | undefined;
let operator: WebsiteOperator | undefined;
/** examples/website-operator, loaded once dist/ (which it imports as 'rxkube') is built. */
let example: typeof import('../../examples/website-operator.js');
/** The operator's failed reconciles, newest last, to say why it has not converged. */
const failures: string[] = [];

async function manifests(file: string): Promise<KubeObject[]> {
  return loadAll(await readFile(join(deployDir, file), 'utf8')) as KubeObject[];
}

/** Server-side apply of each object of `file`, as `kubectl apply --server-side` does it. */
async function applyFile(file: string, opts: { dryRun?: boolean } = {}): Promise<KubeObject[]> {
  const applied: KubeObject[] = [];
  for (const obj of await manifests(file)) {
    const resource = RESOURCES[obj.kind ?? ''];
    if (resource === undefined) throw new Error(`${file}: no resource known for kind ${String(obj.kind)}`);
    applied.push(await objectClient(cluster.kubeConfig, resource as 'v1/serviceaccounts', { fieldManager: 'e2e', ...opts }).apply(obj as never, { force: true }));
  }
  return applied;
}

/** A KubeConfig that authenticates with `token`, trusting the cluster's CA. */
function tokenKubeConfig(user: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'e2e', server: cluster.server, caData: cluster.kubeConfig.getCurrentCluster()?.caData, skipTLSVerify: false }],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: 'e2e', user }],
    currentContext: user,
  });
  return kc;
}

/**
 * Whether the identity of `kc` may `verb` `resource` (cluster-wide unless `at` names a namespace, any object unless
 * it names one), as the server's authorizer answers it.
 */
async function mayI(kc: KubeConfig, verb: string, group: string, resource: string, subresource?: string, at: { namespace?: string; name?: string } = {}): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
    body: { spec: { resourceAttributes: { verb, group, resource, ...(subresource === undefined ? {} : { subresource }), ...at } } },
  });
  return review.status?.allowed === true;
}

/** Whether the identity of `kc` may `verb` the non-resource URL `path`. */
async function mayIGet(kc: KubeConfig, path: string, verb = 'get'): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({ body: { spec: { nonResourceAttributes: { path, verb } } } });
  return review.status?.allowed === true;
}

/** website-rbac.yaml's ClusterRole. */
async function websiteRole(): Promise<V1ClusterRole> {
  return (await manifests('website-rbac.yaml')).find((o) => o.kind === 'ClusterRole') as V1ClusterRole;
}

/** Each right of `role` as `verb group/resource[/subresource]`. */
function rights(role: V1ClusterRole): string[] {
  return (role.rules ?? []).flatMap((r: V1PolicyRule) => (r.apiGroups ?? []).flatMap((g) => (r.resources ?? []).flatMap((res) => r.verbs.map((verb) => `${verb} ${g}/${res}`))));
}

/** The error `p` rejects with (failing the test when it resolves). */
async function refused(p: Promise<unknown>): Promise<KubeApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KubeApiError);
  return err as KubeApiError;
}

beforeAll(async () => {
  // The example imports rxkube by name: dist/ must be current.
  buildDist();
  example = await import('../../examples/website-operator.js');
  const { Website } = example;
  cluster = await startCluster({
    authorization: 'RBAC',
    admissionPlugins: ['OwnerReferencesPermissionEnforcement'],
    auditLog: true,
    users: WITHOUT.map(([user]) => ({ name: user })),
  });
  const admin = cluster.kubeConfig;
  const namespaces = objectClient(admin, 'v1/namespaces');
  // As examples/deploy/README.md has it: `kubectl create namespace website-operator`.
  for (const name of [SYSTEM, APPS]) await namespaces.create({ metadata: { name } });
  await applyFile('website-crd.yaml');
  await applyFile('website-rbac.yaml');
  const crds = objectClient(admin, 'apiextensions.k8s.io/v1/customresourcedefinitions');
  await waitFor(async () => (await crds.get(`${Website.plural}.${Website.group}`)).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true, 'the Website CRD to be Established', 30_000, { everyMs: 100 });

  // What the kubelet mounts for a pod of the ServiceAccount: a bound token.
  const issued = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: SA,
    namespace: SYSTEM,
    body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } },
  });
  operatorKc = tokenKubeConfig(SA_USER, issued.status?.token ?? '');
}, 240_000);

afterAll(async () => {
  for (const s of subscriptions) s.unsubscribe();
  played?.unsubscribe();
  await cluster?.stop();
});

describe("examples/deploy/website-rbac.yaml on a real kube-apiserver with RBAC and OwnerReferencesPermissionEnforcement", () => {
  it("is enough: the operator, as the ServiceAccount with only these rights, gives every Website its Deployment and Service and turns it Ready", async () => {
    const { convergenceProblems, playDeploymentController, sampleWebsite, Website, websiteOperator } = example;
    const admin = cluster.kubeConfig;
    // No controller-manager runs here: the example's stand-in, as admin, reports the Deployments' replicas ready.
    played = playDeploymentController(admin);
    operator = websiteOperator(operatorKc);
    subscriptions.push(
      operator.controller.subscribe((o) => {
        if (o.type === 'failed') failures.push(`${o.key}: ${o.error.message}`);
      }),
    );
    const websites = objectClient(admin, Website, { namespace: APPS, fieldManager: 'e2e' });
    await websites.create(sampleWebsite('blog', 'nginx:1.27', 2, APPS));
    await websites.create(sampleWebsite('shop', 'shop:3.1', undefined, APPS));
    let last: string[] = [];
    const problems = async (): Promise<string[]> => {
      const [ws, ds, ss] = await Promise.all([
        websites.list(),
        objectClient(admin, 'apps/v1/deployments', { namespace: APPS }).list(),
        objectClient(admin, 'v1/services', { namespace: APPS }).list(),
      ]);
      return convergenceProblems(ws.items, ds.items as V1Deployment[], ss.items as V1Service[]);
    };
    const why = (): string => [...last, ...failures.slice(-3)].join('; ');
    await waitFor(async () => (last = await problems()).length === 0, 'the Websites to converge', 90_000, { everyMs: 200, describe: why });
    // The owner reference that needs websites/finalizers under the plugin was written, by the operator's identity.
    const blog = await objectClient(admin, 'apps/v1/deployments', { namespace: APPS }).get('blog');
    expect(blog.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'Website', name: 'blog', controller: true, blockOwnerDeletion: true })]);
    expect(blog.metadata?.managedFields?.some((f) => f.manager === 'website-operator' && f.operation === 'Apply')).toBe(true);
    // A spec change is followed, still with these rights only.
    await websites.patch('blog', { spec: { replicas: 3 } });
    await waitFor(async () => (last = await problems()).length === 0, 'the scaled Website to converge', 90_000, { everyMs: 200, describe: why });

    // Every right is used: the server's audit log has a request of the ServiceAccount for each, all of them allowed.
    // Three are checked by the server inside another request rather than asked for by one of their own: create,
    // within a server-side apply of an object that does not exist yet; websites/finalizers, within the owner
    // reference check (the last test shows each of those is needed).
    const inside = new Set(['create apps/deployments', 'create /services', `update ${Website.group}/${Website.plural}/finalizers`]);
    // The certificate provisioner's rights are shown used by the test that runs it.
    const requested = rights(await websiteRole()).filter((r) => !inside.has(r) && !CERTIFICATE_RIGHTS.has(r)).sort();
    let used: string[] = [];
    let denied: string[] = [];
    const audited = async (): Promise<boolean> => {
      const mine = (await cluster.auditEvents()).filter((e) => e.user.username === SA_USER && e.objectRef?.resource !== undefined);
      const right = (e: AuditEvent): string => `${e.verb} ${e.objectRef?.apiGroup ?? ''}/${e.objectRef?.resource ?? ''}${e.objectRef?.subresource === undefined ? '' : `/${e.objectRef.subresource}`}`;
      used = [...new Set(mine.map(right))].sort();
      denied = mine.filter((e) => (e.responseStatus?.code ?? 0) >= 400).map((e) => `${right(e)} ${e.objectRef?.namespace ?? ''}/${e.objectRef?.name ?? ''}: ${e.responseStatus?.code}`);
      return requested.every((r) => used.includes(r));
    };
    await waitFor(audited, 'the audit log to show a request for each right', 30_000, { everyMs: 100, describe: () => `used: ${used.join(', ')}` });
    expect(denied).toEqual([]);
    expect(used).toEqual(requested);
  });

  it("is not more than that: the ServiceAccount may not touch a Website's spec, delete what it owns, or read Secrets", async () => {
    const { Website } = example;
    const denied: [verb: string, group: string, resource: string, subresource?: string][] = [
      ['create', Website.group, Website.plural],
      ['update', Website.group, Website.plural],
      ['patch', Website.group, Website.plural],
      ['delete', Website.group, Website.plural],
      ['update', Website.group, Website.plural, 'status'],
      ['delete', 'apps', 'deployments'],
      ['delete', '', 'services'],
      ['get', '', 'secrets'],
      ['list', '', 'secrets'],
      ['list', '', 'pods'],
    ];
    const answers = await Promise.all(denied.map(async ([verb, group, resource, sub]) => [`${verb} ${group}/${resource}${sub === undefined ? '' : `/${sub}`}`, await mayI(operatorKc, verb, group, resource, sub)] as const));
    expect(answers.filter(([, allowed]) => allowed).map(([what]) => what)).toEqual([]);
    // Each right the ClusterRole names is granted to the ServiceAccount through the binding (the certificate
    // provisioner's on the objects they name: the next test).
    for (const right of rights(await websiteRole()).filter((r) => !CERTIFICATE_RIGHTS.has(r))) {
      const [verb = '', path = ''] = right.split(' ');
      const [group = '', resource = '', sub] = path.split('/');
      expect(await mayI(operatorKc, verb, group, resource, sub), right).toBe(true);
    }

    // And the server refuses the requests themselves.
    const secrets = await refused(objectClient(operatorKc, 'v1/secrets', { namespace: APPS }).list());
    expect(secrets.status).toBe(403);
    expect(secrets.serverMessage).toContain(`"${SA_USER}" cannot list resource "secrets"`);
    const deleted = await refused(objectClient(operatorKc, Website, { namespace: APPS }).delete('shop'));
    expect(deleted.status).toBe(403);
    expect(deleted.serverMessage).toContain(`cannot delete resource "websites" in API group "example.com"`);
  });

  it('lets the certificate provisioner and the secure /metrics do their work on their own objects only, and lets a metrics-reader scrape', async () => {
    const { Website } = example;
    const crd = `${Website.plural}.${Website.group}`;
    const may = (verb: string, group: string, resource: string, at: { namespace?: string; name?: string }): Promise<boolean> => mayI(operatorKc, verb, group, resource, undefined, at);
    const granted: (readonly [verb: string, group: string, resource: string, at: { namespace?: string; name?: string }])[] = [
      // Its TLS Secret: created once, then watched, read and replaced (rotation) by name.
      ['create', '', 'secrets', { namespace: SYSTEM }],
      ...(['get', 'list', 'watch', 'update'] as const).map((verb) => [verb, '', 'secrets', { namespace: SYSTEM, name: TLS_SECRET }] as const),
      // The CA bundle, into its own webhook configurations and the Website CRD's conversion block.
      ...(['get', 'list', 'watch', 'update'] as const).flatMap((verb) => [
        [verb, 'admissionregistration.k8s.io', 'validatingwebhookconfigurations', { name: WEBHOOKS }] as const,
        [verb, 'admissionregistration.k8s.io', 'mutatingwebhookconfigurations', { name: WEBHOOKS }] as const,
        [verb, 'apiextensions.k8s.io', 'customresourcedefinitions', { name: crd }] as const,
      ]),
      // --metrics-secure: system:auth-delegator's TokenReview and SubjectAccessReview.
      ['create', 'authentication.k8s.io', 'tokenreviews', {}],
      ['create', 'authorization.k8s.io', 'subjectaccessreviews', {}],
    ];
    const refusedRights: typeof granted = [
      // Another Secret, in its namespace or elsewhere; the Secrets of its namespace as a list.
      ['get', '', 'secrets', { namespace: SYSTEM, name: 'other' }],
      ['list', '', 'secrets', { namespace: SYSTEM }],
      ['get', '', 'secrets', { namespace: APPS, name: TLS_SECRET }],
      ['create', '', 'secrets', { namespace: APPS }],
      ['delete', '', 'secrets', { namespace: SYSTEM, name: TLS_SECRET }],
      // Another webhook configuration or CRD; creating or deleting its own.
      ['update', 'admissionregistration.k8s.io', 'validatingwebhookconfigurations', { name: 'other' }],
      ['update', 'admissionregistration.k8s.io', 'mutatingwebhookconfigurations', { name: 'other' }],
      ['list', 'admissionregistration.k8s.io', 'validatingwebhookconfigurations', {}],
      ['create', 'admissionregistration.k8s.io', 'validatingwebhookconfigurations', {}],
      ['delete', 'admissionregistration.k8s.io', 'mutatingwebhookconfigurations', { name: WEBHOOKS }],
      ['patch', 'admissionregistration.k8s.io', 'mutatingwebhookconfigurations', { name: WEBHOOKS }],
      ['update', 'apiextensions.k8s.io', 'customresourcedefinitions', { name: 'other.example.com' }],
      ['list', 'apiextensions.k8s.io', 'customresourcedefinitions', {}],
      ['patch', 'apiextensions.k8s.io', 'customresourcedefinitions', { name: crd }],
    ];
    const say = ([verb, group, resource, at]: (typeof granted)[number]): string => `${verb} ${group}/${resource} ${at.namespace ?? ''}/${at.name ?? ''}`;
    const answers = async (list: typeof granted): Promise<[string, boolean][]> => Promise.all(list.map(async (r) => [say(r), await may(...r)] as [string, boolean]));
    expect((await answers(granted)).filter(([, allowed]) => !allowed).map(([what]) => what)).toEqual([]);
    expect((await answers(refusedRights)).filter(([, allowed]) => allowed).map(([what]) => what)).toEqual([]);
    // The operator may not scrape its own /metrics: metrics-reader is for the scraper, bound by whoever runs one.
    expect(await mayIGet(operatorKc, '/metrics')).toBe(false);

    // A scraper's ServiceAccount bound to website-operator-metrics-reader, as README.md says, may get /metrics and
    // nothing else; one without the binding may not.
    const admin = cluster.kubeConfig;
    const reader = (await manifests('website-rbac.yaml')).find((o) => o.kind === 'ClusterRole' && o.metadata?.name === 'website-operator-metrics-reader') as V1ClusterRole | undefined;
    expect(reader?.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    await bindMetricsScraper(admin, APPS);
    const tokenOf = async (name: string): Promise<KubeConfig> => {
      const issued = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({ name, namespace: APPS, body: { spec: { expirationSeconds: 3600 } } });
      return tokenKubeConfig(`system:serviceaccount:${APPS}:${name}`, issued.status?.token ?? '');
    };
    const prometheus = await tokenOf('prometheus');
    const stranger = await tokenOf('stranger');
    await waitFor(() => mayIGet(prometheus, '/metrics'), "the metrics-reader binding to take effect", 30_000, { everyMs: 50 });
    expect(await mayIGet(prometheus, '/metrics', 'post')).toBe(false);
    expect(await mayIGet(prometheus, '/debug/pprof')).toBe(false);
    expect(await mayI(prometheus, 'list', '', 'secrets', undefined, { namespace: APPS })).toBe(false);
    expect(await mayIGet(stranger, '/metrics')).toBe(false);
  });

  it('needs each right the server checks inside a request: without it, the write the operator makes is refused', async () => {
    const { desiredDeployment, desiredService, sampleWebsite, Website } = example;
    const admin = cluster.kubeConfig;
    // The operator stops first, so the objects below are not already there, written by it.
    await operator?.controller.shutdown();
    const role = await websiteRole();
    const websites = objectClient(admin, Website, { namespace: APPS, fieldManager: 'e2e' });
    for (const [user, verb, group, resource] of WITHOUT) {
      const rules = (role.rules ?? [])
        .map((r) => ((r.apiGroups ?? []).includes(group) && (r.resources ?? []).includes(resource) ? { ...r, verbs: r.verbs.filter((v) => v !== verb) } : r))
        .filter((r) => r.verbs.length > 0);
      expect(rights({ rules }), user).toEqual(rights(role).filter((r) => r !== `${verb} ${group}/${resource}`));
      await objectClient(admin, 'rbac.authorization.k8s.io/v1/clusterroles', { fieldManager: 'e2e' }).apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: user }, rules }, { force: true });
      await objectClient(admin, 'rbac.authorization.k8s.io/v1/clusterrolebindings', { fieldManager: 'e2e' }).apply(
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: user },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
        },
        { force: true },
      );
      const kc = cluster.kubeConfigFor(user);
      // The server's authorizer learns of the binding through its own informer: wait until it grants the rest.
      await waitFor(() => mayI(kc, 'patch', 'apps', 'deployments'), `${user}'s binding to take effect`, 30_000, { everyMs: 50 });
      const w = await websites.create(sampleWebsite(user.replace('website-operator-', ''), 'docs:1', 1, APPS));
      const owned = resource === 'services' ? desiredService(w) : desiredDeployment(w);
      const client = objectClient(kc, resource === 'services' ? 'v1/services' : 'apps/v1/deployments', { fieldManager: 'website-operator' });

      const err = await refused(client.apply(owned as never, { force: true }));
      expect(err.status, user).toBe(403);
      if (verb === 'create') {
        expect(err.serverMessage, user).toContain(`User "${user}" cannot create resource "${resource}" in API group "${group}"`);
        // Once the object exists, the same apply is a patch, which the reduced role allows.
        await objectClient(admin, resource === 'services' ? 'v1/services' : 'apps/v1/deployments', { fieldManager: 'e2e' }).apply(owned as never, { force: true });
        await client.apply(owned as never, { force: true });
      } else {
        expect(err.serverMessage, user).toContain("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on");
        // The same Deployment without blockOwnerDeletion is within the reduced role: it is that one right that is needed.
        const refs = owned.metadata?.ownerReferences?.map((r) => ({ ...r, blockOwnerDeletion: false }));
        await client.apply({ ...owned, metadata: { ...owned.metadata, ownerReferences: refs } } as never, { force: true });
      }
    }
  });

  it('website-operator.yaml, the Deployment that runs it, and website-service.yaml are accepted by the server as written', async () => {
    const [deployment] = (await applyFile('website-operator.yaml', { dryRun: true })) as V1Deployment[];
    expect(deployment?.metadata?.namespace).toBe(SYSTEM);
    expect(deployment?.spec?.template.spec?.serviceAccountName).toBe(SA);
    const services = (await applyFile('website-service.yaml', { dryRun: true })) as V1Service[];
    expect(services.map((s) => [s.metadata?.namespace, s.metadata?.name, s.spec?.ports?.map((p) => `${p.port}->${String(p.targetPort)}`)])).toEqual([
      [SYSTEM, 'website-operator-webhook', ['443->webhook-server']],
      [SYSTEM, 'website-operator-metrics', ['8443->metrics']],
    ]);
    // Each Service's target port is a port of the Deployment's container, and selects its pods.
    const container = deployment?.spec?.template.spec?.containers[0];
    for (const s of services) {
      expect(s.spec?.selector).toEqual(deployment?.spec?.selector?.matchLabels);
      expect(container?.ports?.map((p) => p.name)).toContain(s.spec?.ports?.[0]?.targetPort);
    }
  });
  it("is enough for provisioned certificates: the runner, as the ServiceAccount, writes its Secret and the CA bundle into website-webhooks.yaml's configurations and the CRD", async () => {
    const { Website, WEBHOOK_SERVICE, WEBHOOKS_NAME, webhooks } = example;
    const admin = cluster.kubeConfig;
    // The configurations as examples/deploy ships them, with no caBundle: the runner writes it. They name a Service
    // the API server cannot reach here, so they are removed before this test ends (the other tests write Websites).
    const registered = (await applyFile('website-webhooks.yaml')).filter((o) => o.kind !== 'CustomResourceDefinition');
    expect(registered.map((o) => o.metadata?.name)).toEqual([WEBHOOKS_NAME, WEBHOOKS_NAME]);
    const stop = new AbortController();
    const failed: string[] = [];
    const exit = runManager({
      controllers: [],
      webhooks,
      webhookBindAddress: '127.0.0.1:0',
      webhookCertificates: { kubeConfig: operatorKc, name: WEBHOOKS_NAME, service: WEBHOOK_SERVICE, customResources: [Website] },
      metricsBindAddress: '0',
      healthProbeBindAddress: '0',
      signal: stop.signal,
      signals: [],
      stderr: { write: (text: string) => failed.push(text) },
    });
    try {
      const secrets = objectClient(admin, 'v1/secrets', { namespace: SYSTEM });
      const caOf = (bundle: string | undefined): string => Buffer.from(bundle ?? '', 'base64').toString('utf8');
      let secretCa = '';
      await waitFor(async () => (secretCa = Buffer.from((await secrets.get(TLS_SECRET).catch(() => undefined))?.data?.['ca.crt'] ?? '', 'base64').toString('utf8')) !== '', 'the Secret to be written', 60_000, { everyMs: 100, describe: () => failed.join('') });
      const bundles = async (): Promise<string[]> => [
        ...(await objectClient(admin, 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations').get(WEBHOOKS_NAME)).webhooks!.map((w) => caOf(w.clientConfig.caBundle)),
        ...(await objectClient(admin, 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations').get(WEBHOOKS_NAME)).webhooks!.map((w) => caOf(w.clientConfig.caBundle)),
        caOf((await objectClient(admin, 'apiextensions.k8s.io/v1/customresourcedefinitions').get(`${Website.plural}.${Website.group}`)).spec.conversion?.webhook?.clientConfig?.caBundle),
      ];
      let seen: string[] = [];
      await waitFor(async () => (seen = await bundles()).every((b) => b !== '' && b === secretCa), 'the CA bundle in both configurations and the CRD', 60_000, { everyMs: 100, describe: () => `${seen.map((b) => b.slice(0, 40)).join(' | ')} ${failed.join('')}` });
      const secret = await secrets.get(TLS_SECRET);
      expect(secret.type).toBe('kubernetes.io/tls');
      expect(Object.keys(secret.data ?? {}).sort()).toEqual(expect.arrayContaining(['ca.crt', 'tls.crt', 'tls.key']));

      // Each of the provisioner's rights was used by the ServiceAccount (but the Secret's update, which only a
      // rotation makes), and none of its requests was refused.
      const wanted = [...CERTIFICATE_RIGHTS, 'create /secrets', 'get /secrets', 'list /secrets', 'watch /secrets'].sort();
      let used: string[] = [];
      let denied: string[] = [];
      const audited = async (): Promise<boolean> => {
        // (The Secrets of the other namespace are the ones an earlier test showed it is refused.)
        const mine = (await cluster.auditEvents()).filter(
          (e) => e.user.username === SA_USER && (e.objectRef?.resource === 'secrets' ? e.objectRef.namespace === SYSTEM : ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations', 'customresourcedefinitions'].includes(e.objectRef?.resource ?? '')),
        );
        used = [...new Set(mine.map((e) => `${e.verb} ${e.objectRef?.apiGroup ?? ''}/${e.objectRef?.resource ?? ''}`))].sort();
        denied = mine.filter((e) => (e.responseStatus?.code ?? 0) === 403).map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name ?? ''}`);
        return wanted.every((r) => used.includes(r));
      };
      await waitFor(audited, 'the audit log to show each of the provisioner\'s rights used', 30_000, { everyMs: 100, describe: () => `used: ${used.join(', ')}` });
      expect(denied).toEqual([]);
      expect(failed).toEqual([]);
    } finally {
      stop.abort();
      await exit;
      for (const o of registered) await objectClient(admin, RESOURCES[o.kind ?? ''] as 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations').delete(o.metadata?.name ?? '');
    }
  });
});
