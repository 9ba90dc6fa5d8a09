/**
 * Per deployment, how many of its pods are ready, kept live from three
 * informers: pods are paired with their ReplicaSet (`joinOwner`), ReplicaSet
 * changes are mapped to their Deployment (`ownerKeys`), and every deployment
 * whose picture changed is printed once things have been quiet for a moment
 * (`debounceByKey`).
 *
 *   node --import ./bench/register.js examples/deployments.ts   # current kubeconfig context; Ctrl-C stops
 */
import { KubeConfig, type V1Deployment, type V1Pod, type V1ReplicaSet } from '@kubernetes/client-node';
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
  const deployments = informer<V1Deployment>(kubeSource(kc, 'apps/v1/deployments'));
  const replicaSets = informer<V1ReplicaSet>(kubeSource(kc, 'apps/v1/replicasets'), {
    indexers: { controller: byControllerUid },
  });
  const pods = informer<V1Pod>(kubeSource(kc, 'v1/pods'));

  // ReplicaSet key → pod key → ready. joinOwner's upsert/remove keep it exact.
  const podsByReplicaSet = new Map<string, Map<string, boolean>>();

  const fromPods$ = pods.events$.pipe(
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
    deployments.events$.pipe(touchedObjects(), map(metaNamespaceKey)),
    replicaSets.events$.pipe(ownerKeys({ kind: 'Deployment', apiVersion: 'apps/v1' })),
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

  // events$ is hot: subscribe before starting so the initial list is seen too.
  const subscription = changed$.subscribe((key) => print(describe(key)));
  const all = [deployments, replicaSets, pods];
  for (const each of all) each.start();

  return {
    async stop() {
      subscription.unsubscribe();
      await Promise.all(all.map((each) => each.stop()));
    },
  };
}

if ((import.meta as { main?: boolean }).main) {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const running = watchDeploymentReadiness(kc);
  process.once('SIGINT', () => void running.stop());
}
