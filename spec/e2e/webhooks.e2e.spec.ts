/**
 * The website operator's webhooks (examples/website-operator.ts) registered with a real kube-apiserver, as issue
 * #26 asks: the runner serves them on 127.0.0.1 with a certificate from a cert dir made here (a CA of its own,
 * openssl), and a ValidatingWebhookConfiguration, a MutatingWebhookConfiguration (`webhookManifests` with a `url`
 * client config and the CA bundle) and the Website CRD's conversion block name them. The API server refuses an
 * invalid Website with the handler's message, stores the defaults the mutating webhook patches in, converts
 * between v1 and v2 both ways (with either as the storage version), and goes on calling the webhooks after the
 * certificate is rewritten on disk, with no restart. The runner's `/metrics`, with metricsSecure, answers a
 * ServiceAccount bound to examples/deploy's metrics-reader ClusterRole, refuses one that is not (403) and a
 * request without a token (401), authenticating and authorizing each through the API server (TokenReview and
 * SubjectAccessReview, as a ServiceAccount bound to system:auth-delegator). Last, the runner provisions the
 * certificate itself for the Service examples/deploy names (a Secret, the CA bundle written into the configurations
 * and the CRD), and the API server calls the webhooks through that Service (aggregator routing, Endpoints at an
 * address of this machine) and trusts them by the bundle the runner wrote.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, type KubeConfig, type V1ClusterRole, type V1Deployment } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { KubeApiError } from '../../src/errors/api/index.js';
import { runManager } from '../../src/manager/runManager.js';
import { prometheusMetrics } from '../../src/metrics/index.js';
import { webhookManifests } from '../../src/admission/index.js';
import type { ManagerEvent } from '../../src/manager/options.js';
import buildDist from '../helpers/buildDist.js';
import { startExample } from '../helpers/runExample.js';
import { waitFor } from '../helpers/waitFor.js';
import { startCluster, type Cluster } from './cluster.js';
import { issueServingPair, makeCa, servedCertificate, servedFingerprint, writeCertDir, type TestCa } from './servingCerts.js';
import { bindMetricsScraper } from './helpers.js';

const deployDir = fileURLToPath(new URL('../../examples/deploy/', import.meta.url));
/** Where the Websites live, and where the scrapers' ServiceAccounts do. */
const NS = 'e2e-webhooks';
const MONITORING = 'monitoring';
/** A token user whose group the validating webhook lets ask for more replicas. */
const SITE_ADMIN = 'site-admin';

let cluster: Cluster;
let example: typeof import('../../examples/website-operator.js');
let certDir: string;
let ca1: TestCa;
const stop = new AbortController();
let exit: Promise<number> | undefined;
const serving = new Map<string, number>();
const stderr: string[] = [];

/** The webhook configurations for the runner at `port`, trusting `caBundle`, applied (server-side). */
async function register(port: number, caBundle: string): Promise<void> {
  const { webhooks, WEBHOOKS_NAME, Website } = example;
  for (const m of webhookManifests({ name: WEBHOOKS_NAME, webhooks, clientConfig: { url: `https://127.0.0.1:${port}` }, caBundle }) as { kind: string }[]) {
    const resource = m.kind === 'ValidatingWebhookConfiguration' ? 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations' : 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
    await objectClient(cluster.kubeConfig, resource, { fieldManager: 'e2e' }).apply(m as never, { force: true });
  }
  await applyCrd(Website.crd({ conversionWebhook: { url: `https://127.0.0.1:${port}/convert` }, caBundle }));
}

async function applyCrd(crd: object): Promise<void> {
  await objectClient(cluster.kubeConfig, 'apiextensions.k8s.io/v1/customresourcedefinitions', { fieldManager: 'e2e' }).apply(crd as never, { force: true });
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

/** The message a create of `name` asking for `replicas` gets, or 'created'. */
async function tryCreate(kc: KubeConfig, name: string, replicas: number): Promise<string> {
  const { sampleWebsite, Website } = example;
  try {
    await objectClient(kc, Website, { namespace: NS, fieldManager: 'e2e' }).create(sampleWebsite(name, 'nginx:1.27', replicas, NS));
    return 'created';
  } catch (e) {
    return e instanceof KubeApiError ? `${e.status}: ${e.serverMessage}` : String(e);
  }
}

/** A ServiceAccount's bound token, from the TokenRequest API, as the kubelet mounts one. */
async function tokenOf(namespace: string, name: string): Promise<string> {
  const issued = await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({ name, namespace, body: { spec: { expirationSeconds: 3600 } } });
  return issued.status?.token ?? '';
}

/** A GET of the runner's /metrics over HTTPS, as Prometheus with `insecure_skip_verify` makes it. */
function scrape(token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: serving.get('metrics'), path: '/metrics', rejectUnauthorized: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * An IPv4 address of this machine other than loopback: kube-apiserver refuses Endpoints on 127.0.0.0/8, so a
 * webhook reached through a Service listens on this one.
 */
function hostAddress(): string {
  const found = Object.values(networkInterfaces()).flat().find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
  if (found === undefined) throw new Error('e2e: this machine has no IPv4 address besides loopback, which Endpoints may not name');
  return found.address;
}

beforeAll(async () => {
  // The example imports rxkube by name: dist/ must be current.
  buildDist();
  example = await import('../../examples/website-operator.js');
  // Aggregator routing: a webhook's Service is reached at its Endpoints (the last test writes them), not a ClusterIP.
  cluster = await startCluster({ authorization: 'RBAC', aggregatorRouting: true, users: [{ name: SITE_ADMIN, groups: ['admins'] }] });
  const admin = cluster.kubeConfig;
  for (const name of [NS, MONITORING]) await objectClient(admin, 'v1/namespaces').create({ metadata: { name } });
  // The site admin may write Websites; RBAC lets it, the validating webhook lets it ask for more replicas.
  await objectClient(admin, 'rbac.authorization.k8s.io/v1/clusterrolebindings', { fieldManager: 'e2e' }).apply(
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'site-admins' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'admins' }],
    },
    { force: true },
  );
  // The runner reviews scrapers' tokens as a ServiceAccount with system:auth-delegator, as website-rbac.yaml binds it.
  await objectClient(admin, 'v1/serviceaccounts', { namespace: MONITORING }).create({ metadata: { name: 'website-operator' } });
  await objectClient(admin, 'rbac.authorization.k8s.io/v1/clusterrolebindings', { fieldManager: 'e2e' }).apply(
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'website-operator-auth-delegator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name: 'website-operator', namespace: MONITORING }],
    },
    { force: true },
  );
  const reviewer = cluster.kubeConfigFor('admin');
  reviewer.loadFromOptions({
    clusters: reviewer.clusters,
    users: [{ name: 'website-operator', token: await tokenOf(MONITORING, 'website-operator') }],
    contexts: [{ name: 'website-operator', cluster: reviewer.getCurrentCluster()?.name ?? '', user: 'website-operator' }],
    currentContext: 'website-operator',
  });

  certDir = await mkdtemp(join(tmpdir(), 'rxkube-e2e-webhook-certs-'));
  ca1 = await makeCa('rxkube-e2e-webhooks-ca-1');
  await writeCertDir(certDir, await issueServingPair(ca1, ['127.0.0.1', 'localhost'], 'webhook-1'));
  exit = runManager({
    controllers: [],
    webhooks: example.webhooks,
    webhookBindAddress: '127.0.0.1:0',
    webhookCertDir: certDir,
    metrics: prometheusMetrics({ defaultMetrics: false }),
    metricsBindAddress: '127.0.0.1:0',
    metricsSecure: { kubeConfig: reviewer },
    healthProbeBindAddress: '0',
    signal: stop.signal,
    signals: [],
    stderr: { write: (text: string) => stderr.push(text) },
    onEvent: (e: ManagerEvent) => {
      if (e.type === 'serving') serving.set(e.server, e.port);
    },
  });
  await waitFor(() => serving.has('webhooks') && serving.has('metrics'), 'the webhook and metrics servers to listen', 30_000, { describe: () => stderr.join('') });
  await register(serving.get('webhooks') ?? 0, ca1.certPem);
  const crds = objectClient(admin, 'apiextensions.k8s.io/v1/customresourcedefinitions');
  const crdName = `${example.Website.plural}.${example.Website.group}`;
  await waitFor(async () => (await crds.get(crdName)).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true, 'the Website CRD to be Established', 30_000, { everyMs: 100 });
  // The API server learns of the configurations through its own informer: wait until the validating webhook answers.
  await waitFor(async () => (await tryCreate(admin, 'probe', 50)).includes('at most 10'), 'the validating webhook to be called', 30_000, { everyMs: 100 });
}, 240_000);

afterAll(async () => {
  stop.abort();
  await exit;
  await cluster?.stop();
  if (certDir !== undefined) await rm(certDir, { recursive: true, force: true });
});

describe("the website operator's webhooks on a real kube-apiserver", () => {
  it('refuses an invalid Website with the handler\'s message, and lets an admin ask for more', async () => {
    const { MAX_REPLICAS } = example;
    const err = await refused(objectClient(cluster.kubeConfig, example.Website, { namespace: NS }).create(example.sampleWebsite('big', 'nginx:1.27', MAX_REPLICAS + 1, NS)));
    expect(err.status).toBe(403);
    expect(err.serverMessage).toBe(`admission webhook "vwebsite.example.com" denied the request: spec.replicas: at most ${MAX_REPLICAS} for non-admins, got ${MAX_REPLICAS + 1}`);
    const latest = await refused(objectClient(cluster.kubeConfig, example.Website, { namespace: NS }).create(example.sampleWebsite('floating', 'nginx:latest', 1, NS)));
    expect(latest.serverMessage).toContain('spec.image: pin a version instead of :latest');
    // The handler sees the API server's userInfo: a member of `admins` may.
    expect(await tryCreate(cluster.kubeConfigFor(SITE_ADMIN), 'big', MAX_REPLICAS + 1)).toBe('created');
  });

  it('stores the defaults the mutating webhook patches in, and keeps what the writer set', async () => {
    const websites = objectClient(cluster.kubeConfig, example.Website, { namespace: NS, fieldManager: 'e2e' });
    const created = await websites.create(example.sampleWebsite('blog', 'nginx:1.27', 2, NS));
    expect(created.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'blog' });
    expect((await websites.get('blog')).metadata.labels).toEqual({ 'app.kubernetes.io/name': 'blog' });
    const own = example.sampleWebsite('shop', 'shop:3.1', 1, NS);
    const kept = await websites.create({ ...own, metadata: { ...own.metadata, labels: { 'app.kubernetes.io/name': 'storefront', tier: 'web' } } });
    expect(kept.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'storefront', tier: 'web' });
  });

  it('converts between v1 and v2 through the conversion webhook, whichever version is stored', async () => {
    const { Website } = example;
    const WebsiteV2 = Website.forVersion('v2');
    const v1 = objectClient(cluster.kubeConfig, Website, { namespace: NS, fieldManager: 'e2e' });
    const v2 = objectClient(cluster.kubeConfig, WebsiteV2, { namespace: NS, fieldManager: 'e2e' });
    const storedApiVersion = async (name: string): Promise<string | undefined> => {
      const raw = await cluster.etcdValue(`/registry/${Website.group}/${Website.plural}/${NS}/${name}`);
      return raw === undefined ? undefined : (JSON.parse(raw) as { apiVersion?: string }).apiVersion;
    };
    // Written as v2, stored as v1 (the definition's storage version): read as v1, and as v2 again.
    await v2.create({ apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'docs' }, spec: { repository: 'registry.example.com:5000/docs', tag: '2.0', replicas: 1, port: 8080 } });
    expect(await storedApiVersion('docs')).toBe('example.com/v1');
    expect((await v1.get('docs')).spec).toEqual({ image: 'registry.example.com:5000/docs:2.0', replicas: 1, port: 8080 });
    expect((await v2.get('docs')).spec).toEqual({ repository: 'registry.example.com:5000/docs', tag: '2.0', replicas: 1, port: 8080 });

    // The same CRD with v2 as its storage version: a Website written as v1 is stored as v2, and read as v1 and back.
    const webhook = { conversionWebhook: { url: `https://127.0.0.1:${serving.get('webhooks')}/convert` }, caBundle: ca1.certPem };
    const crd = Website.crd(webhook) as unknown as { spec: { versions: readonly { name: string; storage: boolean }[] } };
    await applyCrd({ ...crd, spec: { ...crd.spec, versions: crd.spec.versions.map((v) => ({ ...v, storage: v.name === 'v2' })) } });
    // The API server's handler for the resource picks the new storage version up from its CRD informer.
    let n = 0;
    await waitFor(async () => {
      const name = `wiki-${++n}`;
      await v1.create(example.sampleWebsite(name, 'wiki:1.0', 1, NS));
      return (await storedApiVersion(name)) === 'example.com/v2' ? name : undefined;
    }, 'Websites to be stored as v2', 30_000, { everyMs: 100 });
    const wiki = await v1.create(example.sampleWebsite('wiki', 'wiki:1.0', 1, NS));
    expect(await storedApiVersion('wiki')).toBe('example.com/v2');
    expect(JSON.parse((await cluster.etcdValue(`/registry/${Website.group}/${Website.plural}/${NS}/wiki`)) ?? '{}').spec).toEqual({ repository: 'wiki', tag: '1.0', replicas: 1, port: 80 });
    expect(wiki.spec).toEqual({ image: 'wiki:1.0', replicas: 1, port: 80 });
    expect((await v1.get('wiki')).spec).toEqual({ image: 'wiki:1.0', replicas: 1, port: 80 });
    expect((await v2.get('wiki')).spec).toEqual({ repository: 'wiki', tag: '1.0', replicas: 1, port: 80 });
    // And the v1 object stored before reads as v2 through the webhook, as before.
    expect((await v2.get('docs')).spec).toEqual({ repository: 'registry.example.com:5000/docs', tag: '2.0', replicas: 1, port: 8080 });
    await applyCrd(Website.crd(webhook));
    // What is stored as v2 goes, so that listing Websites (as v1, the storage version again) needs no conversion
    // webhook: the last test starts an operator before its webhook is reachable.
    for (let i = 1; i <= n; i++) await v1.delete(`wiki-${i}`);
    await v1.delete('wiki');
  });

  it('serves a certificate rewritten on disk without a restart: the API server calls the webhooks with it', async () => {
    const port = serving.get('webhooks') ?? 0;
    const ca2 = await makeCa('rxkube-e2e-webhooks-ca-2');
    const pair2 = await issueServingPair(ca2, ['127.0.0.1', 'localhost'], 'webhook-2');
    // First the API server is told to trust only the second CA: it can no longer call the webhooks.
    await register(port, ca2.certPem);
    await waitFor(async () => (await tryCreate(cluster.kubeConfig, 'rotated', 50)).includes('x509'), 'the API server to refuse the first certificate', 30_000, { everyMs: 100 });
    // Then the second pair is written over the first: the same server, still running, serves it to new connections,
    // and the API server's next call succeeds, with the handler's answer.
    await writeCertDir(certDir, pair2);
    await waitFor(async () => (await servedFingerprint(port)) === pair2.fingerprint256, 'the new certificate to be served', 30_000, { everyMs: 50 });
    let last = '';
    await waitFor(async () => (last = await tryCreate(cluster.kubeConfig, 'rotated', 50)).includes('at most 10'), 'the API server to call the webhooks again', 30_000, { everyMs: 100, describe: () => last });
    expect(last).toBe(`403: admission webhook "vwebsite.example.com" denied the request: spec.replicas: at most 10 for non-admins, got 50`);
    expect(await tryCreate(cluster.kubeConfig, 'rotated', 1)).toBe('created');
    expect(exit).toBeDefined();
    expect(stderr).toEqual([]);
  });

  it('serves /metrics with metricsSecure: 200 to a ServiceAccount bound to metrics-reader, 403 to one that is not, 401 without a token', async () => {
    const admin = cluster.kubeConfig;
    const rbac = loadAll(await readFile(join(deployDir, 'website-rbac.yaml'), 'utf8')) as V1ClusterRole[];
    const reader = rbac.find((o) => o.kind === 'ClusterRole' && o.metadata?.name === 'website-operator-metrics-reader');
    expect(reader).toBeDefined();
    await objectClient(admin, 'rbac.authorization.k8s.io/v1/clusterroles', { fieldManager: 'e2e' }).apply(reader as never, { force: true });
    await bindMetricsScraper(admin, MONITORING);
    const prometheus = await tokenOf(MONITORING, 'prometheus');
    const stranger = await tokenOf(MONITORING, 'stranger');

    expect((await scrape()).status).toBe(401);
    expect((await scrape('not-a-token')).status).toBe(401);
    expect((await scrape(stranger)).status).toBe(403);
    // The binding reaches the API server's authorizer through its informer: wait for the scrape to be allowed.
    let last = { status: 0, body: '' };
    await waitFor(async () => (last = await scrape(prometheus)).status === 200, 'the metrics-reader binding to take effect', 30_000, { everyMs: 100, describe: () => String(last.status) });
    // The webhooks' requests, counted in controller-runtime's names: the API server's calls made above.
    expect(last.body).toMatch(/^controller_runtime_webhook_requests_total\{[^}]*webhook="\/validate-example-com-v1-website"[^}]*\} [1-9]\d*$/m);
    expect(last.body).toMatch(/^controller_runtime_webhook_requests_total\{[^}]*webhook="\/convert"[^}]*\} [1-9]\d*$/m);
    // Asked again (the runner caches the reviews' answers for a short while), the stranger is still refused.
    expect((await scrape(stranger)).status).toBe(403);
  });
  it('as website-operator.yaml runs it, provisions its certificate for the Service: the Secret and the CA bundles are written, and the API server calls the webhooks through the Service with it', async () => {
    const { sampleWebsite, Website, WEBHOOK_SERVICE, WEBHOOKS_NAME, webhooks } = example;
    const admin = cluster.kubeConfig;
    const host = hostAddress();
    await objectClient(admin, 'v1/namespaces').create({ metadata: { name: WEBHOOK_SERVICE.namespace } });
    // The configurations and the CRD as examples/deploy ships them: the Service, no CA bundle (the runner writes it).
    for (const m of webhookManifests({ name: WEBHOOKS_NAME, webhooks, clientConfig: { service: WEBHOOK_SERVICE } }) as { kind: string }[]) {
      const resource = m.kind === 'ValidatingWebhookConfiguration' ? 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations' : 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
      await objectClient(admin, resource, { fieldManager: 'e2e' }).apply(m as never, { force: true });
    }
    await applyCrd(Website.crd({ conversionWebhook: { service: WEBHOOK_SERVICE } }));

    // The example program itself, with website-operator.yaml's flags (addresses made local), against this cluster.
    const deployment = (loadAll(await readFile(join(deployDir, 'website-operator.yaml'), 'utf8')) as V1Deployment[])[0];
    const args = (deployment?.spec?.template.spec?.containers[0]?.args ?? []).map((a) =>
      a.startsWith('--webhook-bind-address=') ? `--webhook-bind-address=${host}:0` : a.replace(/^(--(?:metrics|health-probe)-bind-address)=.*$/, '$1=127.0.0.1:0'),
    );
    expect(args).toContain(`--webhook-service=${WEBHOOK_SERVICE.namespace}/${WEBHOOK_SERVICE.name}`);
    const program = startExample('website-operator', args, { ...process.env, KUBECONFIG: cluster.kubeconfigPath });
    let port = 0;
    try {
      port = Number(await waitFor(() => /^serving webhooks on https:\/\/[^:]+:(\d+)$/m.exec(program.stdout())?.[1], 'the example to serve its webhooks', 60_000, { describe: () => program.stderr() }));
      // The Service (port 443, as website-service.yaml) and the Endpoints a kubelet's pod would give it.
      const ns = WEBHOOK_SERVICE.namespace;
      await objectClient(admin, 'v1/services', { namespace: ns }).create({ metadata: { name: WEBHOOK_SERVICE.name }, spec: { ports: [{ name: 'webhook-server', port: 443, targetPort: port as never }] } });
      await objectClient(admin, 'v1/endpoints', { namespace: ns }).create({ metadata: { name: WEBHOOK_SERVICE.name }, subsets: [{ addresses: [{ ip: host }], ports: [{ name: 'webhook-server', port }] }] });
      await objectClient(admin, 'discovery.k8s.io/v1/endpointslices', { namespace: ns }).create({
        metadata: { name: `${WEBHOOK_SERVICE.name}-1`, labels: { 'kubernetes.io/service-name': WEBHOOK_SERVICE.name } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [host], conditions: { ready: true } }],
        ports: [{ name: 'webhook-server', port, protocol: 'TCP' }],
      });

      // The Secret, and its CA in both configurations and the CRD.
      const caOf = (bundle: string | undefined): string => Buffer.from(bundle ?? '', 'base64').toString('utf8');
      const secretCa = async (): Promise<string> => {
        const secret = await objectClient(admin, 'v1/secrets', { namespace: ns }).get(`${WEBHOOKS_NAME}-webhook-tls`).catch(() => undefined);
        return caOf(secret?.data?.['ca.crt']);
      };
      const ca = await waitFor(secretCa, 'the Secret to be written', 60_000, { everyMs: 100, describe: () => program.stderr() });
      let bundles: string[] = [];
      await waitFor(
        async () =>
          (bundles = [
            ...((await objectClient(admin, 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations').get(WEBHOOKS_NAME)).webhooks ?? []).map((w) => caOf(w.clientConfig.caBundle)),
            ...((await objectClient(admin, 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations').get(WEBHOOKS_NAME)).webhooks ?? []).map((w) => caOf(w.clientConfig.caBundle)),
            caOf((await objectClient(admin, 'apiextensions.k8s.io/v1/customresourcedefinitions').get(`${Website.plural}.${Website.group}`)).spec.conversion?.webhook?.clientConfig?.caBundle),
          ]).every((b) => b === ca),
        'the CA bundle in both configurations and the CRD',
        60_000,
        { everyMs: 100, describe: () => bundles.map((b) => b.slice(27, 60)).join(' | ') },
      );
      // What is served is issued for the Service's DNS names.
      const served = await waitFor(async () => {
        const cert = await servedCertificate(port, host);
        return cert.subjectAltName?.includes(`DNS:${WEBHOOK_SERVICE.name}.${ns}.svc`) ? cert : undefined;
      }, 'the provisioned certificate to be served', 30_000, { everyMs: 100 });
      expect(served.checkIssued(new X509Certificate(ca))).toBe(true);

      // The API server reaches the webhooks through the Service and trusts them by the bundle: a refusal with the
      // handler's message, the defaults, and a conversion.
      let last = '';
      await waitFor(async () => (last = await tryCreate(admin, 'through-service', 50)).startsWith('403: '), 'the API server to call the webhooks through the Service', 60_000, { everyMs: 200, describe: () => last });
      expect(last).toBe('403: admission webhook "vwebsite.example.com" denied the request: spec.replicas: at most 10 for non-admins, got 50');
      const created = await objectClient(admin, Website, { namespace: NS, fieldManager: 'e2e' }).create(sampleWebsite('through-service', 'nginx:1.27', 1, NS));
      expect(created.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'through-service' });
      expect((await objectClient(admin, Website.forVersion('v2'), { namespace: NS }).get('through-service')).spec).toEqual({ repository: 'nginx', tag: '1.27', replicas: 1, port: 80 });
      // The operator's own work goes on beside: the Website it was let through gets its Deployment.
      await waitFor(() => /^reconciled e2e-webhooks\/through-service: /m.test(program.stdout()), 'the operator to reconcile the Website', 30_000);
      program.child.kill('SIGTERM');
      expect(await program.exited).toBe(0);
      expect(program.stderr()).toBe('');
    } finally {
      if (program.child.exitCode === null) program.child.kill('SIGKILL');
      await program.exited;
    }
  });
});
