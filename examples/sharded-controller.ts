/**
 * Three replicas of one sharded controller share the ConfigMaps of a
 * namespace: each holds a Lease, one of them labels every ConfigMap with the
 * replica that owns it, and each replica's informer asks the API server for
 * its own label only. Here the three run in one process for the show; in a
 * cluster each is a pod of a Deployment with its pod name as identity.
 *
 *   npm run example sharded-controller -- --simulator --duration 10s   # the built-in API server, 300 ConfigMaps
 *   npm run example sharded-controller                                 # the current kubeconfig context; Ctrl-C stops
 *
 * It prints who runs the sharder and, at the end, each replica's share and
 * how much of it it reconciled, e.g. `replica-a: 97 configmaps cached, 97 of
 * them reconciled`. A replica that joins a moment after the first may see a
 * few keys reconciled by the first before the ring makes them its own.
 */
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { informer, kubeSource, shardedController, type Informer } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import { exampleCluster } from './lib/cluster.js';

/** One replica's view: what its informer caches and what it reconciled. */
export interface ReplicaShare {
  readonly identity: string;
  /** Keys in its informer's store: its share, as the API server filtered it. */
  cached(): number;
  /** How many of those it reconciled at least once. */
  cachedAndReconciled(): number;
  /** Keys it reconciled at least once. */
  readonly reconciled: Set<string>;
}

/**
 * Runs `identities` as replicas of the sharded controller `configmap-checker`
 * over the ConfigMaps of `namespace`, until `signal` aborts; `left` resolves
 * once every replica has left (reconciles done, Leases released).
 */
export function runReplicas(
  kc: KubeConfig,
  opts: { readonly namespace: string; readonly identities: readonly string[]; readonly signal: AbortSignal; readonly log: (line: string) => void },
): { readonly shares: readonly ReplicaShare[]; readonly left: Promise<void> } {
  const shares: ReplicaShare[] = [];
  const left = opts.identities.map((identity) => {
    let cache: Informer<V1ConfigMap> | undefined;
    const reconciled = new Set<string>();
    shares.push({
      identity,
      cached: () => cache?.store.listKeys().length ?? 0,
      cachedAndReconciled: () => cache?.store.listKeys().filter((k) => reconciled.has(k)).length ?? 0,
      reconciled,
    });
    return new Promise<void>((resolve) => {
      shardedController<V1ConfigMap>({
        kc,
        resource: 'v1/configmaps',
        namespace: opts.namespace,
        controller: 'configmap-checker',
        identity,
        leaseNamespace: opts.namespace,
        // Short timings so the example settles in seconds; the defaults suit production.
        leaseDuration: 4_000,
        renewDeadline: 3_000,
        retryPeriod: 500,
        // The informer over this replica's share only: the API server applies the label selector.
        source: (labelSelector) => (cache = informer(kubeSource(kc, 'v1/configmaps', { namespace: opts.namespace, labelSelector }))),
        reconcile: (cm, ctx) => {
          // A real controller would check or fix something here.
          if (cm.data !== undefined) reconciled.add(ctx.key);
        },
        // The controller's own options apply to the controller each replica runs over its share.
        concurrency: 4,
        reconcileTimeoutMs: 10_000,
        signal: opts.signal,
      }).subscribe({
        next: (e) => {
          if (e.type === 'sharder' && e.leading) opts.log(`${identity} runs the sharder`);
          if (e.type === 'member') opts.log(`${identity} ${e.member ? 'joined' : 'left'} the ring`);
          // A next reads the outcomes, so failures are not reported elsewhere: log them.
          if (e.type === 'outcome' && e.outcome.type === 'failed') opts.log(`${identity}: ${e.outcome.key} failed: ${e.outcome.error.message}`);
        },
        // Its term could not go on (a source failed for good): it gave up its share, which the others take.
        error: (err: unknown) => {
          opts.log(`${identity} gave up its share: ${err instanceof Error ? err.message : String(err)}`);
          resolve();
        },
        complete: resolve,
      });
    });
  });
  return { shares, left: Promise.all(left).then(() => undefined) };
}

async function seed(server: ApiServer): Promise<void> {
  for (let i = 0; i < 300; i++) {
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `settings-${i}`, namespace: 'default' }, data: { n: String(i) } });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cluster = await exampleCluster(process.argv.slice(2), seed);
  const stop = new AbortController();
  const { shares, left } = runReplicas(cluster.kc, { namespace: 'default', identities: ['replica-a', 'replica-b', 'replica-c'], signal: stop.signal, log: (l) => console.log(l) });
  await cluster.done;
  // Read before leaving: a replica that left lets go of its cache.
  for (const s of shares) console.log(`${s.identity}: ${s.cached()} configmaps cached, ${s.cachedAndReconciled()} of them reconciled`);
  stop.abort();
  await left;
  await cluster.close();
}
