/**
 * Per deployment, how many of its pods are ready, kept live from three
 * informers: pods are paired with their ReplicaSet (`joinOwner`), ReplicaSet
 * changes are mapped to their Deployment (`ownerKeys`), and every deployment
 * whose picture changed is printed once things have been quiet for half a
 * second (`debounceByKey`).
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

const kc = new KubeConfig();
kc.loadFromDefault();
const deployments = informer<V1Deployment>(kubeSource(kc, 'apps/v1/deployments'));
const replicaSets = informer<V1ReplicaSet>(kubeSource(kc, 'apps/v1/replicasets'), {
  indexers: { controller: byControllerUid },
});
const pods = informer<V1Pod>(kubeSource(kc, 'v1/pods'));

// ReplicaSet key → pod key → ready. joinOwner's upsert/remove keep it exact.
const podsByReplicaSet = new Map<string, Map<string, boolean>>();

const isReady = (pod: V1Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

const deploymentOf = (rs: V1ReplicaSet): string[] => {
  const ref = rs.metadata?.ownerReferences?.find((r) => r.controller === true && r.kind === 'Deployment');
  return ref === undefined ? [] : [`${rs.metadata?.namespace}/${ref.name}`];
};

const fromPods$ = pods.events$.pipe(
  joinOwner(replicaSets, { kind: 'ReplicaSet', apiVersion: 'apps/v1' }),
  mergeMap(({ type, ownerKey, child, owner }) => {
    const group = podsByReplicaSet.get(ownerKey) ?? new Map<string, boolean>();
    if (type === 'upsert') group.set(metaNamespaceKey(child), isReady(child));
    else group.delete(metaNamespaceKey(child));
    if (group.size === 0) podsByReplicaSet.delete(ownerKey);
    else podsByReplicaSet.set(ownerKey, group);
    // The ReplicaSet is redrawn with its deployment; until it is cached there is nothing to redraw.
    return owner === undefined ? [] : deploymentOf(owner);
  }),
);

const changed$ = merge(
  deployments.events$.pipe(touchedObjects(), map(metaNamespaceKey)),
  replicaSets.events$.pipe(ownerKeys({ kind: 'Deployment', apiVersion: 'apps/v1' })),
  fromPods$,
).pipe(debounceByKey(500));

function print(key: string): void {
  const deployment = deployments.store.getByKey(key);
  const uid = deployment?.metadata?.uid;
  if (uid === undefined) {
    console.log(`${key}: gone`);
    return;
  }
  const podReadiness = replicaSets.store
    .byIndex('controller', uid)
    .flatMap((rs) => [...(podsByReplicaSet.get(metaNamespaceKey(rs)) ?? [])]);
  const ready = podReadiness.filter(([, isPodReady]) => isPodReady).length;
  const notReady = podReadiness.filter(([, isPodReady]) => !isPodReady).map(([podKey]) => podKey);
  console.log(`${key}: ${ready}/${podReadiness.length} pods ready${notReady.length > 0 ? ` (waiting: ${notReady.join(', ')})` : ''}`);
}

// events$ is hot: subscribe before starting so the initial list is seen too.
const subscription = changed$.subscribe(print);
const all = [deployments, replicaSets, pods];
for (const each of all) each.start();

process.once('SIGINT', () => {
  subscription.unsubscribe();
  void Promise.all(all.map((each) => each.stop()));
});
