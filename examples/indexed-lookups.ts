/**
 * Indexed lookups in the informer's cache: which pods run on a node
 * (`byField('spec.nodeName')`) and which pods a ReplicaSet, Job or other
 * controller owns (`byControllerUid`), each answered from an index instead
 * of a scan, and kept current as pods come, move and go.
 *
 *   npm run example indexed-lookups                                # the current kubeconfig context; Ctrl-C stops
 *   npm run example indexed-lookups -- --simulator --duration 10s  # the built-in API server, with pods moving between nodes
 */
import type { KubeConfig, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { debounceTime, filter, first, map, merge } from 'rxjs';
import { byControllerUid, byField, informer, kubeSource, metaNamespaceKey, touchedObjects } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import { exampleCluster } from './lib/cluster.js';

/**
 * A pod cache indexed by node and by controller, with the two questions it answers quickly.
 *
 * @param kc the cluster.
 * @returns the informer and the lookups.
 */
export function podIndex(kc: KubeConfig) {
  const pods = informer(kubeSource(kc, 'v1/pods'), {
    indexers: { node: byField('spec.nodeName'), controller: byControllerUid },
  });
  return {
    pods,
    /** `node-1: default/web-0, default/web-1` for every node with pods, nodes in name order. */
    byNode(): string[] {
      return pods.store
        .listIndexFuncValues('node')
        .sort()
        .map((node) => `node ${node}: ${pods.store.indexKeys('node', node).sort().join(', ')}`);
    },
    /** `ReplicaSet default/web-6f7d (uid …): 3 pods` for every controller uid with pods. */
    byOwner(): string[] {
      return pods.store
        .listIndexFuncValues('controller')
        .map((uid) => {
          const owned = pods.store.byIndex('controller', uid);
          const ref = owned[0]?.metadata?.ownerReferences?.find((r) => r.uid === uid);
          return `${ref?.kind ?? 'owner'} ${owned[0]?.metadata?.namespace}/${ref?.name ?? uid}: ${owned.length} pods`;
        })
        .sort();
    },
  };
}

/**
 * Prints both views once synced, then again whenever pods have changed and
 * things have been quiet for `quietMs`.
 *
 * @param kc the cluster.
 * @param print where lines go.
 * @param quietMs how long to wait for quiet before printing again.
 * @returns `whenSynced()`, and `stop()`, which unsubscribes: the watch ends and its connection closes.
 */
export function printIndexedViews(kc: KubeConfig, print: (line: string) => void = console.log, quietMs = 300): { whenSynced(): Promise<void>; stop(): void } {
  const index = podIndex(kc);
  const show = (why: string): void => {
    print(`-- ${why}: ${index.pods.store.listKeys().length} pods`);
    for (const line of [...index.byNode(), ...index.byOwner()]) print(line);
  };
  const synced$ = index.pods.status$.pipe(
    first((s) => s.synced),
    map(() => 'synced'),
  );
  const changed$ = index.pods.pipe(
    // The initial list is what the synced print shows; after it, every change.
    filter((e) => !(e.type === 'add' && e.isInInitialList)),
    touchedObjects(),
    debounceTime(quietMs),
    map(() => 'changed'),
  );
  const subscription = merge(synced$, changed$).subscribe(show);
  return { whenSynced: () => index.pods.whenSynced({ timeout: 30_000 }), stop: () => subscription.unsubscribe() };
}

/** A ReplicaSet in `default` and the uid its pods point to. */
async function replicaSet(server: ApiServer, name: string): Promise<string> {
  const rs = await server.create<V1ReplicaSet>('apps/v1/replicasets', {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: 'default' },
    spec: { selector: { matchLabels: { app: name } } },
  });
  return rs.metadata?.uid ?? '';
}

/** A pod of `owner` on `node`. */
const ownedPod = (name: string, node: string, owner: string, uid: string): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid, controller: true }] },
  spec: { nodeName: node, containers: [{ name: 'main', image: 'busybox' }] },
});

/** Moves one pod to the next node (delete and re-create, as a rescheduled pod would be). */
async function reschedule(server: ApiServer, step: number): Promise<void> {
  const all = server.list<V1Pod>('v1/pods', 'default').sort((a, b) => metaNamespaceKey(a).localeCompare(metaNamespaceKey(b)));
  const victim = all[step % all.length];
  if (victim === undefined) return;
  await server.delete('v1/pods', 'default', victim.metadata?.name ?? '');
  const ref = victim.metadata?.ownerReferences?.[0];
  await server.create('v1/pods', ownedPod(victim.metadata?.name ?? '', `node-${(step + 1) % 3}`, ref?.name ?? '', ref?.uid ?? ''));
}

if ((import.meta as { main?: boolean }).main) {
  const cluster = await exampleCluster(process.argv.slice(2), async (server) => {
    const web = await replicaSet(server, 'web');
    const api = await replicaSet(server, 'api');
    for (let i = 0; i < 3; i++) await server.create('v1/pods', ownedPod(`web-${i}`, `node-${i}`, 'web', web));
    for (let i = 0; i < 2; i++) await server.create('v1/pods', ownedPod(`api-${i}`, 'node-0', 'api', api));
  });
  const running = printIndexedViews(cluster.kc);
  // On the simulator, once the cache is synced, a pod is rescheduled to another node every second.
  let step = 0;
  const simulator = cluster.simulator;
  if (simulator !== undefined) await Promise.race([running.whenSynced(), cluster.done]);
  const moves = simulator === undefined ? undefined : setInterval(() => void reschedule(simulator, step++).catch((err: unknown) => console.error(err)), 1_000);
  await cluster.done;
  if (moves !== undefined) clearInterval(moves);
  running.stop();
  await cluster.close();
}
