/**
 * A pod event logger: one line per pod that appears, changes in a way worth
 * telling (phase, node, readiness, restarts) or goes, built by piping the
 * informer — an Observable of add/update/delete events — through plain RxJS
 * operators.
 *
 *   npm run example pod-logger                                # the current kubeconfig context; Ctrl-C stops
 *   npm run example pod-logger -- --simulator --duration 10s  # the built-in API server, with pods coming and going
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { filter, first, map, mergeMap } from 'rxjs';
import { informer, kubeSource, unwrapTombstone, type InformerEvent } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import { exampleCluster } from './lib/cluster.js';

/** What the logger reports about a pod. */
interface PodFacts {
  readonly phase: string;
  readonly node: string;
  readonly ready: boolean;
  readonly restarts: number;
}

const factsOf = (pod: V1Pod): PodFacts => ({
  phase: pod.status?.phase ?? 'Unknown',
  node: pod.spec?.nodeName ?? '<unscheduled>',
  ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
  restarts: (pod.status?.containerStatuses ?? []).reduce((sum, c) => sum + c.restartCount, 0),
});

const keyOf = (pod: V1Pod): string => `${pod.metadata?.namespace}/${pod.metadata?.name}`;

/**
 * The log lines one event gives: `+ ns/name Pending on node-1`, `~ ns/name phase Pending → Running`
 * (one line per fact that changed), `- ns/name (was Running on node-1)`. An update that changed none of
 * the facts (a label, an annotation) gives no line.
 *
 * @param e an informer event.
 * @returns the lines, possibly none.
 */
export function describePodEvent(e: InformerEvent<V1Pod>): string[] {
  if (e.type === 'add') {
    const f = factsOf(e.obj);
    return [`+ ${keyOf(e.obj)} ${f.phase} on ${f.node}${f.ready ? ', ready' : ''}`];
  }
  if (e.type === 'delete') {
    const last = unwrapTombstone(e.obj);
    if (last === undefined) return ['- a pod whose last state is unknown'];
    const f = factsOf(last);
    return [`- ${keyOf(last)} (was ${f.phase} on ${f.node})`];
  }
  const before = factsOf(e.oldObj);
  const after = factsOf(e.obj);
  const changes = (Object.keys(after) as (keyof PodFacts)[])
    .filter((fact) => before[fact] !== after[fact])
    .map((fact) => `~ ${keyOf(e.obj)} ${fact} ${String(before[fact])} → ${String(after[fact])}`);
  return changes;
}

/**
 * Logs pod events until stopped. The initial list is summed up in one line
 * (`synced: 12 pods`) instead of a line per pod.
 *
 * @param kc the cluster.
 * @param print where lines go.
 * @returns `whenSynced()`, and `stop()`, which unsubscribes: the watch ends and its connection closes.
 */
export function logPods(kc: KubeConfig, print: (line: string) => void = console.log): { whenSynced(): Promise<void>; stop(): void } {
  const pods = informer(kubeSource(kc, 'v1/pods'));
  // Subscribing starts list and watch; the informer is the stream of its events.
  const subscription = pods
    .pipe(
      filter((e: InformerEvent<V1Pod>) => !(e.type === 'add' && e.isInInitialList)),
      mergeMap(describePodEvent),
    )
    .subscribe(print);
  const synced = pods.status$.pipe(first((s) => s.synced), map(() => pods.store.listKeys().length)).subscribe((n) => print(`synced: ${n} pods`));
  return {
    whenSynced: () => pods.whenSynced({ timeout: 30_000 }),
    stop() {
      synced.unsubscribe();
      subscription.unsubscribe();
    },
  };
}

/** A pod in `default`, scheduled on `node`. */
const pod = (name: string, node: string): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app: 'web' } },
  spec: { nodeName: node, containers: [{ name: 'main', image: 'busybox' }] },
  status: { phase: 'Pending' },
});

/** One step of a pod's life on the simulator: created, running, ready, restarted, deleted. */
async function lifeStep(server: ApiServer, step: number): Promise<void> {
  const name = `web-${Math.floor(step / 5)}`;
  const current = server.get<V1Pod>('v1/pods', 'default', name);
  switch (step % 5) {
    case 0:
      await server.create('v1/pods', pod(name, `node-${step % 3}`));
      return;
    case 1:
      await server.update('v1/pods', { ...current, status: { phase: 'Running', containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: false, restartCount: 0 }] } });
      return;
    case 2:
      await server.update('v1/pods', {
        ...current,
        status: { ...current?.status, conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: true, restartCount: 0 }] },
      });
      return;
    case 3:
      await server.update('v1/pods', { ...current, metadata: { ...current?.metadata, labels: { app: 'web', touched: 'yes' } } });
      return;
    default:
      await server.delete('v1/pods', 'default', name);
  }
}

if ((import.meta as { main?: boolean }).main) {
  const cluster = await exampleCluster(process.argv.slice(2), async (server) => {
    await server.create('v1/pods', pod('db-0', 'node-0'));
    await server.create('v1/pods', pod('db-1', 'node-1'));
  });
  const logger = logPods(cluster.kc);
  // On the simulator, once the cache is synced, pods go through their lives one step every 150 ms so the log moves.
  let step = 0;
  const simulator = cluster.simulator;
  if (simulator !== undefined) await Promise.race([logger.whenSynced(), cluster.done]);
  const life = simulator === undefined ? undefined : setInterval(() => void lifeStep(simulator, step++).catch((err: unknown) => console.error(err)), 150);
  await cluster.done;
  if (life !== undefined) clearInterval(life);
  logger.stop();
  await cluster.close();
}
