/**
 * Many clusters against two real control planes (two etcd + kube-apiserver pairs on their own
 * ports): one multi-cluster informer and one multi-cluster controller over both. The merged cache
 * equals the union of the two servers' fresh LISTs; each cluster's reconciles write through that
 * cluster's own KubeConfig; a killed API server is reported as unreachable while the other cluster
 * keeps being reconciled, and is caught up once restarted; a cluster removed from the fleet leaves
 * the cache and its keys are no longer reconciled.
 */
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { BehaviorSubject, filter, firstValueFrom, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { clusterKey } from '../../src/multicluster/clusterKey.js';
import type { Controller } from '../../src/controller/controller.js';
import type { ReconcileOutcome } from '../../src/controller/types.js';
import { multiClusterController } from '../../src/multicluster/multiClusterController.js';
import { multiClusterInformer, type MultiClusterInformer } from '../../src/multicluster/multiClusterInformer.js';
import type { Cluster as FleetMember, ClusterEvent } from '../../src/multicluster/types.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { waitFor } from '../helpers/waitFor.js';
import { startCluster, type Cluster } from './cluster.js';

const NS = 'fleet-e2e';
let a: Cluster;
let b: Cluster;
const provider = new BehaviorSubject<readonly FleetMember[]>([]);
let configMaps: MultiClusterInformer<V1ConfigMap>;
let labeller: Controller<V1ConfigMap>;
const subscriptions: Subscription[] = [];
const events: ClusterEvent<V1ConfigMap>[] = [];
// Outcome keys are cluster keys: `a/fleet-e2e/a1`.
const outcomes: ReconcileOutcome<V1ConfigMap>[] = [];
const reconciledIn = (cluster: string) => outcomes.filter((o) => o.key.startsWith(`${cluster}/`));

const core = (c: Cluster): CoreV1Api => c.kubeConfig.makeApiClient(CoreV1Api);
const cm = (name: string): V1ConfigMap => ({ metadata: { name, namespace: NS }, data: { v: '1' } });

beforeAll(async () => {
  // One after the other: two control planes starting at once on two cores take longer than in turn.
  a = await startCluster();
  b = await startCluster();
  for (const [c, names] of [[a, ['a1', 'a2', 'shared']], [b, ['b1', 'shared']]] as const) {
    await core(c).createNamespace({ body: { metadata: { name: NS } } });
    for (const name of names) await core(c).createNamespacedConfigMap({ namespace: NS, body: cm(name) });
  }
  provider.next([
    { name: 'a', kubeConfig: a.kubeConfig },
    { name: 'b', kubeConfig: b.kubeConfig },
  ]);
  configMaps = multiClusterInformer(provider, (c) => kubeSource(c.kubeConfig, 'v1/configmaps', { namespace: NS }), {
    unreachableAfterMs: 3_000,
    reflector: { backoff: { initialMs: 200, maxMs: 2_000 } },
    onError: () => {},
  });
  subscriptions.push(configMaps.subscribe((e) => events.push(e)));
  labeller = multiClusterController({
    for: configMaps,
    concurrency: 2,
    onError: () => {},
    reconcile: async (obj, ctx) => {
      if (obj.metadata?.labels?.['reconciled-in'] === ctx.cluster.name) return;
      const client = objectClient(ctx.cluster.kubeConfig, 'v1/configmaps', { namespace: NS });
      await client.patch(obj.metadata?.name ?? '', { metadata: { labels: { 'reconciled-in': ctx.cluster.name } } }, { signal: ctx.signal });
    },
  });
  subscriptions.push(labeller.subscribe((o) => outcomes.push(o)));
});

afterAll(async () => {
  await labeller?.shutdown();
  for (const s of subscriptions) s.unsubscribe();
  await Promise.all([a?.stop(), b?.stop()]);
});

/** The servers' own view, by multi-cluster key, from fresh LISTs. */
async function union(clusters: readonly [string, Cluster][]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [name, c] of clusters) {
    const list = await core(c).listNamespacedConfigMap({ namespace: NS });
    for (const item of list.items) out.set(clusterKey(name, `${NS}/${item.metadata?.name}`), item.metadata?.resourceVersion ?? '');
  }
  return out;
}

function cached(): Map<string, string> {
  return new Map(configMaps.store.listKeys().map((k) => [k, configMaps.store.getByKey(k)?.metadata?.resourceVersion ?? '']));
}

/** Polls the servers until the cache equals their union (their answer is a LIST, so it is polled). */
async function converged(clusters: readonly [string, Cluster][], what: string, timeoutMs = 60_000): Promise<void> {
  let want = new Map<string, string>();
  let have = new Map<string, string>();
  const equal = async (): Promise<boolean> => {
    want = await union(clusters);
    have = cached();
    return want.size === have.size && [...want].every(([k, v]) => have.get(k) === v);
  };
  await waitFor(equal, `the cache to converge (${what})`, timeoutMs, { everyMs: 100, describe: () => `cache ${JSON.stringify([...have])}, servers ${JSON.stringify([...want])}` });
}

async function labelledWithOwnCluster(c: Cluster, name: string): Promise<boolean> {
  const list = await core(c).listNamespacedConfigMap({ namespace: NS });
  return list.items.filter((i) => i.data?.['v'] !== undefined).every((i) => i.metadata?.labels?.['reconciled-in'] === name);
}

describe('many clusters on two real kube-apiservers', () => {
  it("merges both clusters' ConfigMaps, same names apart, and labels each through its own cluster's KubeConfig", async () => {
    await configMaps.whenSynced({ timeout: 60_000 });
    await waitFor(async () => (await labelledWithOwnCluster(a, 'a')) && (await labelledWithOwnCluster(b, 'b')), 'every ConfigMap labelled with its own cluster', 60_000, { everyMs: 100 });
    await converged([['a', a], ['b', b]], 'both clusters');
    expect(configMaps.store.getByKey(`a/${NS}/shared`)?.metadata?.uid).not.toBe(configMaps.store.getByKey(`b/${NS}/shared`)?.metadata?.uid);
    expect(Object.keys(labeller.status().groups ?? {})).toEqual(['a', 'b']);
  });

  it('a killed API server is reported unreachable while the other cluster is still reconciled, and is caught up once back', async () => {
    await a.killApiServer();
    await firstValueFrom(configMaps.status$.pipe(filter((s) => s.clusters.find((c) => c.name === 'a')?.state === 'unreachable')));
    // Kept, stale, meanwhile.
    expect(configMaps.store.byIndex('cluster', 'a').length).toBeGreaterThan(0);
    await core(b).createNamespacedConfigMap({ namespace: NS, body: cm('b-while-a-down') });
    await waitFor(() => outcomes.some((o) => o.key === clusterKey('b', `${NS}/b-while-a-down`)), 'b to be reconciled while a is down', 60_000);
    await a.startApiServer();
    await core(a).createNamespacedConfigMap({ namespace: NS, body: cm('a-after-restart') });
    await firstValueFrom(configMaps.status$.pipe(filter((s) => s.clusters.every((c) => c.state === 'synced'))));
    await waitFor(() => labelledWithOwnCluster(a, 'a'), 'the new ConfigMap in a labelled', 60_000, { everyMs: 100 });
    await converged([['a', a], ['b', b]], 'after the restart');
  });

  it('a cluster removed from the fleet leaves the cache as cluster-removed deletes and its keys are no longer reconciled', async () => {
    const before = events.length;
    provider.next([{ name: 'a', kubeConfig: a.kubeConfig }]);
    const removed = events.slice(before);
    expect(removed.length).toBeGreaterThan(0);
    expect(removed.every((e) => e.type === 'delete' && e.cluster === 'b' && e.reason === 'cluster-removed')).toBe(true);
    await converged([['a', a]], 'a alone');
    await waitFor(() => (labeller.status().groups?.['b']?.inFlight ?? 0) === 0 && (labeller.status().groups?.['b']?.depth ?? 0) === 0, 'b to leave the controller', 60_000);
    const reconciledInB = reconciledIn('b').length;
    await core(b).createNamespacedConfigMap({ namespace: NS, body: cm('b-after-leaving') });
    await core(a).createNamespacedConfigMap({ namespace: NS, body: cm('a-last') });
    await waitFor(() => outcomes.some((o) => o.key === clusterKey('a', `${NS}/a-last`)), 'a to carry on', 60_000);
    expect(reconciledIn('b')).toHaveLength(reconciledInB);
    expect(configMaps.store.getByKey(`b/${NS}/b-after-leaving`)).toBeUndefined();
  });
});
