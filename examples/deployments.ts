/**
 * Per deployment, how many of its pods are ready, kept live from three
 * informers: pods are paired with their ReplicaSet (`joinOwner`), ReplicaSet
 * changes are mapped to their Deployment (`ownerKeys`), and every deployment
 * whose picture changed is printed once things have been quiet for a moment
 * (`debounceByKey`).
 *
 *   npm run example deployments                  # the current kubeconfig context; Ctrl-C stops
 *   npm run example deployments -- --simulator   # the built-in API server, seeded with deployments whose pods come and go
 */
import type { KubeConfig, V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { map, merge, mergeMap } from 'rxjs';
import {
  byControllerUid,
  debounceByKey,
  informer,
  joinOwner,
  kubeSource,
  metaNamespaceKey,
  ownerKeys,
  touchedObjects,
} from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import { exampleCluster } from './lib/cluster.js';

const isReady = (pod: V1Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

const deploymentOf = (rs: V1ReplicaSet): string[] => {
  const ref = rs.metadata?.ownerReferences?.find((r) => r.controller === true && r.kind === 'Deployment');
  return ref === undefined ? [] : [`${rs.metadata?.namespace}/${ref.name}`];
};

/**
 * Starts the three informers and prints a line per deployment whenever its
 * pods' readiness may have changed, e.g. `default/web: 2/3 pods ready (waiting: default/web-7d4f8b-x2x9q)`.
 *
 * @param kc the cluster to watch.
 * @param print where lines go.
 * @param quietMs how long a deployment must be quiet before it is printed.
 * @returns `stop()`, which stops everything and resolves when it has.
 */
export function watchDeploymentReadiness(
  kc: KubeConfig,
  print: (line: string) => void = console.log,
  quietMs = 500,
): { stop(): Promise<void> } {
  const deployments = informer(kubeSource(kc, 'apps/v1/deployments'));
  const replicaSets = informer(kubeSource(kc, 'apps/v1/replicasets'), {
    indexers: { controller: byControllerUid },
  });
  const pods = informer(kubeSource(kc, 'v1/pods'));

  // ReplicaSet key → pod key → ready. joinOwner's upsert/remove keep it exact.
  const podsByReplicaSet = new Map<string, Map<string, boolean>>();

  const fromPods$ = pods.pipe(
    joinOwner(replicaSets, { kind: 'ReplicaSet', apiVersion: 'apps/v1' }),
    mergeMap(({ type, ownerKey, child, owner }) => {
      const group = podsByReplicaSet.get(ownerKey) ?? new Map<string, boolean>();
      if (type === 'upsert') group.set(metaNamespaceKey(child), isReady(child));
      else group.delete(metaNamespaceKey(child));
      if (group.size === 0) podsByReplicaSet.delete(ownerKey);
      else podsByReplicaSet.set(ownerKey, group);
      // Until its ReplicaSet is cached the pod's deployment is unknown; the ReplicaSet's arrival re-pairs it.
      return owner === undefined ? [] : deploymentOf(owner);
    }),
  );

  const changed$ = merge(
    deployments.pipe(touchedObjects(), map(metaNamespaceKey)),
    replicaSets.pipe(ownerKeys({ kind: 'Deployment', apiVersion: 'apps/v1' })),
    fromPods$,
  ).pipe(debounceByKey(quietMs));

  const describe = (key: string): string => {
    const uid = deployments.store.getByKey(key)?.metadata?.uid;
    if (uid === undefined) return `${key}: gone`;
    const podReadiness = replicaSets.store
      .byIndex('controller', uid)
      .flatMap((rs) => [...(podsByReplicaSet.get(metaNamespaceKey(rs)) ?? [])]);
    const waiting = podReadiness.filter(([, ready]) => !ready).map(([podKey]) => podKey);
    const ready = podReadiness.length - waiting.length;
    return `${key}: ${ready}/${podReadiness.length} pods ready${waiting.length > 0 ? ` (waiting: ${waiting.join(', ')})` : ''}`;
  };

  // Subscribing starts the three informers; unsubscribing stops them and closes their watches.
  const subscription = changed$.subscribe((key) => print(describe(key)));
  return {
    async stop() {
      subscription.unsubscribe();
    },
  };
}

/** A deployment with one ReplicaSet and `n` pods, half of them ready. */
async function seedDeployment(server: ApiServer, name: string, n: number): Promise<void> {
  const d = await server.create<V1Deployment>('apps/v1/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: { selector: { matchLabels: { app: name } }, template: {} },
  });
  const rs = await server.create<V1ReplicaSet>('apps/v1/replicasets', {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${name}-1`,
      namespace: 'default',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid: d.metadata?.uid ?? '', controller: true }],
    },
    spec: { selector: { matchLabels: { app: name } } },
  });
  for (let i = 0; i < n; i++) {
    await server.create<V1Pod>('v1/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${name}-1-${i}`,
        namespace: 'default',
        labels: { app: name },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${name}-1`, uid: rs.metadata?.uid ?? '', controller: true }],
      },
      spec: { containers: [{ name: 'main', image: 'busybox' }] },
      status: { conditions: [{ type: 'Ready', status: i % 2 === 0 ? 'True' : 'False' }] },
    });
  }
}

if ((import.meta as { main?: boolean }).main) {
  const cluster = await exampleCluster(process.argv.slice(2), async (server) => {
    await seedDeployment(server, 'web', 3);
    await seedDeployment(server, 'api', 2);
  });
  const running = watchDeploymentReadiness(cluster.kc);
  // On the simulator, pods turn ready one by one so the output moves.
  const flip = cluster.simulator === undefined ? undefined : setInterval(() => void readyOne(cluster.simulator as ApiServer), 500);
  await cluster.done;
  if (flip !== undefined) clearInterval(flip);
  await running.stop();
  await cluster.close();
}

/** Marks the first pod that is not ready as ready. */
async function readyOne(server: ApiServer): Promise<void> {
  const waiting = server.list<V1Pod>('v1/pods').find((p) => p.status?.conditions?.[0]?.status !== 'True');
  if (waiting === undefined) return;
  await server.update('v1/pods', { ...waiting, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
}
