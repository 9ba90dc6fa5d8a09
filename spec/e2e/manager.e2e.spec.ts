/**
 * The built configmap-controller example run as a pod would see the world, against a real kube-apiserver
 * with RBAC: KUBERNETES_SERVICE_HOST/PORT set, and a service-account token (from the TokenRequest API, for
 * the ServiceAccount of examples/deploy) with the cluster CA mounted in a directory the test controls. Its only
 * rights are those examples/deploy grants. It converges, /readyz turns 200 after sync, and SIGTERM exits 0
 * with the Lease released; with one right taken away, stderr and /readyz name the verb and the resource.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AppsV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  loadAllYaml,
  type KubernetesObject,
  type V1ClusterRole,
} from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import buildDist from '../helpers/buildDist.js';
import { startExample, type ExampleProcess } from '../helpers/runExample.js';
import { probeUntil } from '../helpers/probe.js';
import { waitFor } from '../helpers/waitFor.js';
import { convergenceProblems, LEASE, MANAGED_BY, sampleDeployment } from '../../examples/configmap-controller.js';
import { startCluster, type Cluster } from './cluster.js';
import { startPrometheus, type QuerySample } from './prometheusServer.js';

const deployDir = fileURLToPath(new URL('../../examples/deploy/', import.meta.url));
/** Where examples/deploy puts the controller and its Lease. */
const SYSTEM = 'configmap-controller';
const SA_USER = `system:serviceaccount:${SYSTEM}:configmap-controller`;
/** Where the test's deployments live. */
const APPS = 'e2e-apps';

let cluster: Cluster;
let objects: KubernetesObjectApi;
let saDir: string;
let running: ExampleProcess | undefined;

async function manifests(file: string): Promise<KubernetesObject[]> {
  return loadAllYaml(await readFile(join(deployDir, file), 'utf8')) as KubernetesObject[];
}

beforeAll(async () => {
  // The example runs as a program: build/examples over dist/.
  buildDist();
  cluster = await startCluster({ authorization: 'RBAC' });
  objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
  for (const file of ['namespace.yaml', 'rbac.yaml']) for (const o of await manifests(file)) await objects.create(o);
  // The Deployment and Service are not run here (no kubelet), but the real server must accept them as written.
  for (const file of ['deployment.yaml', 'service.yaml']) for (const o of await manifests(file)) await objects.create(o, undefined, 'All');
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: APPS } } });
  const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
  for (const [name, replicas] of [['web', 3], ['api', 2]] as const) {
    await apps.createNamespacedDeployment({ namespace: APPS, body: sampleDeployment(name, replicas, `registry.invalid/${name}:1`, APPS) });
  }

  // What the kubelet mounts: a bound token for the ServiceAccount, the cluster's CA, the namespace.
  const issued = await core.createNamespacedServiceAccountToken({
    name: 'configmap-controller',
    namespace: SYSTEM,
    body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } },
  });
  saDir = await mkdtemp(join(tmpdir(), 'rxkube-sa-'));
  await writeFile(join(saDir, 'token'), issued.status?.token ?? '');
  await writeFile(join(saDir, 'ca.crt'), Buffer.from(cluster.kubeConfig.getCurrentCluster()?.caData ?? '', 'base64'));
  await writeFile(join(saDir, 'namespace'), SYSTEM);
});

afterEach(async () => {
  if (running !== undefined && running.child.exitCode === null) {
    running.child.kill('SIGKILL');
    await running.exited;
  }
  running = undefined;
});

afterAll(async () => {
  await cluster?.stop();
  if (saDir !== undefined) await rm(saDir, { recursive: true, force: true });
});

/** The example as a pod runs it: in-cluster environment, no kubeconfig, probes and metrics on free ports. */
function startInPod(): ExampleProcess {
  const { hostname, port } = new URL(cluster.server);
  const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_SERVICE_HOST: hostname, KUBERNETES_SERVICE_PORT: port };
  delete env['KUBECONFIG'];
  const p = startExample('configmap-controller', ['--metrics-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0', '--service-account-dir', saDir], env);
  running = p;
  return p;
}

const probesOf = (p: ExampleProcess): Promise<string> =>
  waitFor(() => /^serving probes on (http:\/\/\S+)$/m.exec(p.stdout())?.[1], 'the probe server', 60_000);

async function problems(): Promise<string[]> {
  const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const [deployments, configMaps] = await Promise.all([
    apps.listNamespacedDeployment({ namespace: APPS }),
    core.listNamespacedConfigMap({ namespace: APPS, labelSelector: MANAGED_BY }),
  ]);
  return convergenceProblems(deployments.items, configMaps.items);
}

async function leaseHolder(): Promise<string | undefined> {
  const lease = await cluster.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: LEASE, namespace: SYSTEM }).catch(() => undefined);
  return lease?.spec?.holderIdentity;
}

/** Whether the ServiceAccount may `verb` `resource` cluster-wide, as the server's authorizer answers now. */
async function allowed(verb: string, resource: string): Promise<boolean> {
  const review = await cluster.kubeConfig.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: { spec: { user: SA_USER, groups: ['system:serviceaccounts', `system:serviceaccounts:${SYSTEM}`], resourceAttributes: { verb, resource } } },
  });
  return review.status?.allowed === true;
}

describe('the example in a pod, on a real kube-apiserver with RBAC', () => {
  it('authenticates as its ServiceAccount, converges with only the rights of examples/deploy, is ready after sync, and exits 0 on SIGTERM', async () => {
    const p = startInPod();
    const probes = await probesOf(p);
    // Ready once synced, as a standby at first; this replica takes the free Lease and its controller starts.
    await probeUntil(`${probes}/readyz`, 200, 'the caches to sync', { timeoutMs: 60_000 });
    await waitFor(() => /^leading \(lease configmap-controller\)$/m.test(p.stdout()), 'it to lead', 60_000);
    const ready = (await probeUntil(`${probes}/readyz`, 200, 'the controller to run', { timeoutMs: 60_000, body: /^\[\+\]controller apps\/v1\/deployments ok$/m })).body;
    expect(ready).toMatch(/^\[\+\]informer apps\/v1\/deployments ok$/m);
    expect(ready).toMatch(/^\[\+\]controller apps\/v1\/deployments ok$/m);
    let left: string[] = [];
    await waitFor(async () => (left = await problems()).length === 0, 'the controller to converge', 60_000, { everyMs: 50, describe: () => left.join('; ') });
    expect(await leaseHolder()).toMatch(/_[0-9a-f-]{36}$/);
    expect(await (await fetch(`${probes}/healthz`)).text()).toMatch(/healthz check passed\n$/);

    // A real Prometheus scrapes /metrics and answers the queries a Go controller's dashboard asks.
    const metricsUrl = await waitFor(() => /^serving metrics on (http:\/\/\S+)$/m.exec(p.stdout())?.[1], 'the metrics server', 60_000);
    const prometheus = await startPrometheus(new URL(metricsUrl).host, 'configmap-controller');
    try {
      const wanted: Record<string, (samples: QuerySample[]) => boolean> = {
        'up{job="configmap-controller"}': (r) => r[0]?.value === 1,
        'controller_runtime_reconcile_total{controller="apps/v1/deployments",result="success"}': (r) => (r[0]?.value ?? 0) > 0,
        'controller_runtime_max_concurrent_reconciles{controller="apps/v1/deployments"}': (r) => r[0]?.value === 2,
        'histogram_quantile(0.99, rate(controller_runtime_reconcile_time_seconds_bucket[1m]))': (r) => r.length === 1,
        'workqueue_adds_total{name="apps/v1/deployments"}': (r) => (r[0]?.value ?? 0) > 0,
        'workqueue_depth{name="apps/v1/deployments"}': (r) => r[0]?.value === 0,
        'leader_election_master_status{name="configmap-controller/configmap-controller"}': (r) => r[0]?.value === 1,
        'rxkube_informer_synced{resource="v1/configmaps"}': (r) => r[0]?.value === 1,
      };
      const seen = new Map<string, QuerySample[]>();
      const scraped = async (): Promise<boolean> => {
        for (const expr of Object.keys(wanted)) seen.set(expr, await prometheus.query(expr));
        return [...seen].every(([expr, r]) => wanted[expr]?.(r));
      };
      await waitFor(scraped, 'Prometheus to scrape the controller', 60_000, { everyMs: 50, describe: () => JSON.stringify(Object.fromEntries(seen)) });
    } finally {
      await prometheus.stop();
    }

    p.child.kill('SIGTERM');
    // Within the pod's 30 s grace period, after which the kubelet would SIGKILL it: nothing was in flight, so the
    // drain has nothing to wait for (a drain that waited anyway would still be waiting when this gives up).
    let code: number | null | undefined;
    void p.exited.then((c) => (code = c));
    await waitFor(() => code !== undefined, 'the process to exit within the grace period', 30_000);
    expect(code).toBe(0);
    expect(p.stdout()).toMatch(/^stopping: the signal aborted$/m);
    expect(await leaseHolder()).toBe('');
    expect(p.stderr()).toBe('');
  });

  it('with "list" on configmaps taken away, names the verb and the resource on stderr and in /readyz, and recovers when it is given back', async () => {
    const rbac = await manifests('rbac.yaml');
    const role = rbac.find((o) => o.kind === 'ClusterRole') as V1ClusterRole;
    const without: V1ClusterRole = {
      ...role,
      rules: (role.rules ?? []).map((r) => (r.resources?.includes('configmaps') ? { ...r, verbs: r.verbs.filter((v) => v !== 'list') } : r)),
    };
    const header = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role.metadata?.name ?? '' } };
    await objects.replace({ ...without, metadata: { ...without.metadata, resourceVersion: (await objects.read(header)).metadata?.resourceVersion } });
    // The server's authorizer learns of the change through its own informer: wait until it refuses.
    await waitFor(async () => !(await allowed('list', 'configmaps')), 'the server to refuse list on configmaps', 30_000, { everyMs: 50 });

    const p = startInPod();
    const probes = await probesOf(p);
    const notReady = (await probeUntil(`${probes}/readyz?verbose`, 503, 'the refused list to be reported', { timeoutMs: 60_000 })).body;
    const named = /cannot list resource "configmaps"/;
    await waitFor(() => named.test(p.stderr()), 'stderr to name the refused verb and resource', 60_000);
    expect(p.stderr()).toMatch(/^rxkube: KubeApiError: list v1\/configmaps: 403 Forbidden: configmaps is forbidden: User "system:serviceaccount:configmap-controller:configmap-controller" cannot list resource "configmaps"/m);
    expect(notReady).toMatch(/^\[-\]informer v1\/configmaps failed: not synced: /m);
    // Deployments may still be listing; once they synced, the refused cache is what keeps the pod unready.
    const body = (await probeUntil(`${probes}/readyz?verbose`, 503, 'deployments to sync beside the refused configmaps', { timeoutMs: 60_000, body: /^\[\+\]informer apps\/v1\/deployments ok$/m })).body;
    expect(body).toMatch(/^\[-\]informer v1\/configmaps failed: not synced: .*cannot list resource "configmaps"/m);
    expect(body).toMatch(/^\[\+\]informer apps\/v1\/deployments ok$/m);

    await objects.replace({ ...role, metadata: { ...role.metadata, resourceVersion: (await objects.read(header)).metadata?.resourceVersion } });
    await probeUntil(`${probes}/readyz`, 200, 'the informer to sync once the right is back', { timeoutMs: 60_000 });
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  });
});
