/**
 * The example ConfigMap controller against a real kube-apiserver and etcd: every deployment gets its
 * finalizer and its owned ConfigMap with the right data, changes are followed, a deleted deployment's
 * ConfigMap is removed by the finalizer's cleanup and the deployment then goes; and it converges again
 * after the API server is killed and restarted under it. No controller-manager runs, so nothing but this
 * controller touches the ConfigMaps (no garbage collector) and deletions wait for the finalizer.
 */
import { AppsV1Api, CoreV1Api, type V1ConfigMap, type V1Deployment } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import buildDist from '../helpers/buildDist.js';
import type { ReconcileOutcome } from '../../src/controller/types.js';
import { finalizer, FinalizerError } from '../../src/controller/finalizer.js';
import { objectClient } from '../../src/client/objectClient.js';
import { isConflict } from '../../src/errors/api/index.js';
import { configMapController, convergenceProblems, FINALIZER, MANAGED_BY, sampleDeployment, type ConfigMapController } from '../../examples/configmap-controller.js';
import { startCluster, type Cluster } from './cluster.js';
import { waitFor } from '../helpers/waitFor.js';

const NS = 'controller-e2e';
let cluster: Cluster;
let apps: AppsV1Api;
let core: CoreV1Api;
let running: ConfigMapController;
let subscription: Subscription;
const outcomes: ReconcileOutcome<V1Deployment>[] = [];

beforeAll(async () => {
  // The example imports the package by name, which resolves to dist/.
  buildDist();
  cluster = await startCluster();
  apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
  core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
});

afterAll(async () => {
  await running?.controller.shutdown();
  subscription?.unsubscribe();
  await cluster?.stop();
});

/** What is wrong, as a fresh LIST from the server shows it. */
async function problems(): Promise<string[]> {
  const [deployments, configMaps] = await Promise.all([
    apps.listNamespacedDeployment({ namespace: NS }),
    core.listNamespacedConfigMap({ namespace: NS, labelSelector: MANAGED_BY }),
  ]);
  return convergenceProblems(deployments.items, configMaps.items);
}

async function converged(what: string, timeoutMs = 60_000): Promise<void> {
  let last: string[] = [];
  // The condition is the server's answer to a LIST, so it is polled rather than awaited.
  await waitFor(async () => (last = await problems()).length === 0, `convergence (${what})`, timeoutMs, { everyMs: 100, describe: () => last.join('; ') });
}

async function configMap(name: string): Promise<V1ConfigMap | undefined> {
  return core.readNamespacedConfigMap({ name, namespace: NS }).catch(() => undefined);
}

async function deployment(name: string): Promise<V1Deployment | undefined> {
  return apps.readNamespacedDeployment({ name, namespace: NS }).catch(() => undefined);
}

describe('the example controller on a real kube-apiserver', () => {
  it('gives each deployment its finalizer and ConfigMap, follows changes, and cleans up deleted ones before they go', async () => {
    for (let i = 0; i < 5; i++) await apps.createNamespacedDeployment({ namespace: NS, body: sampleDeployment(`d${i}`, i + 1, `registry.invalid/app:${i}`, NS) });
    running = configMapController(cluster.kubeConfig, { concurrency: 2 });
    subscription = running.controller.subscribe((o) => outcomes.push(o));
    await converged('the first five deployments');
    const d0 = await deployment('d0');
    expect(d0?.metadata?.finalizers).toContain(FINALIZER);
    const cm0 = await configMap('d0-info');
    expect(cm0?.data).toEqual({ deployment: 'd0', generation: String(d0?.metadata?.generation), replicas: '1', images: 'registry.invalid/app:0' });
    expect(cm0?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd0', uid: d0?.metadata?.uid, controller: true }),
    ]);

    await apps.patchNamespacedDeployment({ name: 'd1', namespace: NS, body: [{ op: 'replace', path: '/spec/replicas', value: 7 }] });
    await converged('after scaling d1');
    expect((await configMap('d1-info'))?.data?.['replicas']).toBe('7');

    await apps.deleteNamespacedDeployment({ name: 'd2', namespace: NS });
    await apps.deleteNamespacedDeployment({ name: 'd3', namespace: NS });
    await converged('after deleting d2 and d3');
    expect(await deployment('d2')).toBeUndefined();
    expect(await deployment('d3')).toBeUndefined();
    expect(await configMap('d2-info')).toBeUndefined();
    expect(await configMap('d3-info')).toBeUndefined();
    expect(outcomes.some((o) => o.type === 'reconciled' && o.key === `${NS}/d2`)).toBe(true);
  });

  it('converges again after the API server is killed and restarted under it', async () => {
    await cluster.killApiServer();
    await cluster.startApiServer();
    await apps.createNamespacedDeployment({ namespace: NS, body: sampleDeployment('after', 2, 'registry.invalid/app:after', NS) });
    await apps.deleteNamespacedDeployment({ name: 'd4', namespace: NS });
    await converged('after the restart', 90_000);
    expect((await configMap('after-info'))?.data?.['replicas']).toBe('2');
    expect(await configMap('d4-info')).toBeUndefined();
    expect(running.controller.status().state).toBe('running');
  });

  it('the finalizer write carrying a stale resourceVersion is refused with 409 Conflict by the real server', async () => {
    const stale = (await deployment('d0')) as V1Deployment;
    await apps.patchNamespacedDeployment({ name: 'd0', namespace: NS, body: [{ op: 'add', path: '/metadata/labels/touched', value: 'yes' }] });
    const client = objectClient(cluster.kubeConfig, 'apps/v1/deployments', { namespace: NS });
    const err = await finalizer(client, 'example.com/other', stale, { apply: () => undefined, cleanup: () => undefined }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FinalizerError);
    expect(isConflict((err as FinalizerError).cause)).toBe(true);
    expect((await deployment('d0'))?.metadata?.finalizers).toEqual([FINALIZER]);
  });
});
