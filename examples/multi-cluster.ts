/**
 * A controller over a fleet: it keeps a ConfigMap of a hub cluster
 * (`fleet/settings`) copied into every member cluster. Members are the
 * kubeconfigs held in Secrets on the hub (namespace `fleet`, label
 * `rxkube.example/member=true`, key `kubeconfig`), so a member joins when its
 * Secret is created and leaves when it is deleted, while the program runs.
 * A copy that someone edits or deletes in a member is put back.
 *
 *   npm run example multi-cluster                    # the hub is the current kubeconfig context; Ctrl-C stops
 *   npm run example multi-cluster -- --simulator     # a hub and three members on the built-in simulator
 *
 * It prints a line per member that joins or leaves and per copy written,
 * e.g. `m1: created fleet/settings at revision 1`.
 */
import { KubeConfig, type V1ConfigMap, type V1Secret } from '@kubernetes/client-node';
import {
  clusterKey,
  informer,
  isAlreadyExists,
  isNotFound,
  kubeSource,
  multiClusterController,
  multiClusterInformer,
  objectClient,
  secretClusters,
  splitClusterKey,
  type ClusterProvider,
  type Controller,
  type Informer,
  type MultiClusterInformer,
  type ReconcileOutcome,
} from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { exampleCluster } from './lib/cluster.js';

/** Where the ConfigMap and the member Secrets live, on the hub and in each member. */
export const NAMESPACE = 'fleet';
/** The hub ConfigMap that is copied. */
export const SOURCE = 'settings';
/** The label that marks member Secrets on the hub. */
export const MEMBER_LABEL = 'rxkube.example/member';
/** The label on every copy, naming what it copies, so each member's informer reads only copies. */
export const COPY_LABEL = 'rxkube.example/copy-of';

/** A running fleet controller and what it reads. */
export interface FleetCopier {
  readonly members: ClusterProvider;
  readonly hub: Informer<V1ConfigMap>;
  readonly copies: MultiClusterInformer<V1ConfigMap>;
  readonly controller: Controller<V1ConfigMap>;
  /** The line to print for an outcome (its key is `cluster/namespace/name`), or undefined when there is nothing to say (the copy was already right). */
  describe(o: ReconcileOutcome<V1ConfigMap>): string | undefined;
}

const sameData = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean =>
  JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());

/** What the ConfigMap's copy in a member must be. */
function copyOf(source: V1ConfigMap): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: source.metadata?.name, namespace: NAMESPACE, labels: { [COPY_LABEL]: SOURCE } }, data: { ...source.data } };
}

/**
 * Builds the controller; subscribing to `controller` runs it.
 *
 * @param hubKc the hub cluster.
 * @param opts a signal that stops the controller gracefully.
 * @returns the controller and its informers.
 */
export function fleetCopier(hubKc: KubeConfig, opts: { signal?: AbortSignal } = {}): FleetCopier {
  const members = secretClusters(hubKc, { namespace: NAMESPACE, labelSelector: `${MEMBER_LABEL}=true` });
  const hub = informer(kubeSource(hubKc, 'v1/configmaps', { namespace: NAMESPACE, fieldSelector: `metadata.name=${SOURCE}` }));
  const copies = multiClusterInformer(members, (c) => kubeSource(c.kubeConfig, 'v1/configmaps', { namespace: NAMESPACE, labelSelector: COPY_LABEL }));
  // What each reconcile wrote, by cluster and key, for its outcome's line.
  const notes = new Map<string, string>();

  const controller = multiClusterController({
    clusters: members,
    // The hub's ConfigMap is the primary object of every member: each member reconciles it into its own copy.
    for: hub,
    // A copy edited or deleted in a member brings that member's reconcile back.
    watches: [{ source: copies, map: (copy: V1ConfigMap) => `${NAMESPACE}/${copy.metadata?.labels?.[COPY_LABEL] ?? ''}` }],
    concurrency: 4,
    signal: opts.signal,
    reconcile: async (source, ctx) => {
      const where = clusterKey(ctx.cluster.name, ctx.key);
      const current = copies.store.getByKey(where);
      const desired = copyOf(source);
      const client = objectClient(ctx.cluster.kubeConfig, 'v1/configmaps', { namespace: NAMESPACE });
      const revision = source.data?.['revision'] ?? '?';
      if (current === undefined) {
        try {
          await client.create(desired, { signal: ctx.signal });
          notes.set(where, `created ${ctx.key} at revision ${revision}`);
        } catch (err) {
          if (isNotFound(err)) {
            // A real member may not have the namespace yet.
            await objectClient(ctx.cluster.kubeConfig, 'v1/namespaces').create({ metadata: { name: NAMESPACE } }, { signal: ctx.signal }).catch((e: unknown) => {
              if (!isAlreadyExists(e)) throw e;
            });
          }
          // The cache may be behind (the copy exists) or the namespace was missing: the next reconcile looks again.
          if (!isAlreadyExists(err) && !isNotFound(err)) throw err;
          return { requeueAfter: 0 };
        }
      } else if (!sameData(current.data, desired.data)) {
        // Guarded by the resourceVersion read: a 409 means someone wrote first, and the retry sees it.
        await client.replace({ ...desired, metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion } }, { signal: ctx.signal });
        notes.set(where, `updated ${ctx.key} to revision ${revision}`);
      }
      return undefined;
    },
  });

  const describe = (o: ReconcileOutcome<V1ConfigMap>): string | undefined => {
    const { cluster, key } = splitClusterKey(o.key);
    const note = notes.get(o.key);
    notes.delete(o.key);
    if (o.type === 'failed') return `${cluster}: failed ${key}: ${o.error.message}; ${o.requeueAfter === undefined ? 'not retried' : `retry in ${Math.round(o.requeueAfter)} ms`}`;
    if (o.type === 'gone') return `${cluster}: ${key} is gone from the hub`;
    return note === undefined ? undefined : `${cluster}: ${note}`;
  };
  return { members, hub, copies, controller, describe };
}

/**
 * What is wrong in the fleet, as the servers have it: a member without the
 * copy, or with other data than the hub's ConfigMap. Empty once converged.
 *
 * @param hub the hub's ConfigMaps in the namespace.
 * @param members each member's ConfigMaps in the namespace, by member name.
 * @returns one line per problem.
 */
export function fleetProblems(hub: readonly V1ConfigMap[], members: ReadonlyMap<string, readonly V1ConfigMap[]>): string[] {
  const source = hub.find((cm) => cm.metadata?.name === SOURCE);
  if (source === undefined) return [`the hub has no ${NAMESPACE}/${SOURCE}`];
  const problems: string[] = [];
  for (const [name, cms] of members) {
    const copy = cms.find((cm) => cm.metadata?.name === SOURCE);
    if (copy === undefined) problems.push(`${name} has no copy`);
    else if (!sameData(copy.data, source.data)) problems.push(`${name} holds ${JSON.stringify(copy.data)}, not ${JSON.stringify(source.data)}`);
  }
  return problems;
}

/** A member Secret for the hub. */
export function memberSecret(name: string, kubeconfigYaml: string): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NAMESPACE, labels: { [MEMBER_LABEL]: 'true' } },
    data: { kubeconfig: Buffer.from(kubeconfigYaml).toString('base64') },
  };
}

/** Resolves once `done()` holds, or after `limitMs` (the caller says what is left). */
async function until(done: () => boolean, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

if ((import.meta as { main?: boolean }).main) {
  const servers = new Map<string, ApiServer>();
  const cluster = await exampleCluster(process.argv.slice(2), async (hubServer) => {
    await hubServer.create('v1/configmaps', { metadata: { name: SOURCE, namespace: NAMESPACE }, data: { color: 'blue', revision: '1' } });
    for (const name of ['m1', 'm2', 'm3']) servers.set(name, await startApiServer({ port: 0 }));
    for (const name of ['m1', 'm2']) await hubServer.create('v1/secrets', memberSecret(name, servers.get(name)?.kubeConfigYaml() ?? ''));
  });
  const stop = new AbortController();
  const fleet = fleetCopier(cluster.kc, { signal: stop.signal });
  // Joins and leaves, as the controller sees them.
  let present: string[] = [];
  const membership = fleet.members.subscribe((set) => {
    const names = set.map((c) => c.name);
    for (const n of names) if (!present.includes(n)) console.log(`joined ${n}`);
    for (const n of present) if (!names.includes(n)) console.log(`left ${n}`);
    present = names;
  });
  const ended = new Promise<void>((resolve, reject) => {
    fleet.controller.subscribe({
      next: (o) => {
        const line = fleet.describe(o);
        if (line !== undefined) console.log(line);
      },
      complete: resolve,
      error: reject,
    });
  });
  const hubServer = cluster.simulator;
  const problems = (): string[] =>
    hubServer === undefined
      ? []
      : fleetProblems(hubServer.list<V1ConfigMap>('v1/configmaps', NAMESPACE), new Map(present.map((n) => [n, servers.get(n)?.list<V1ConfigMap>('v1/configmaps', NAMESPACE) ?? []])));
  if (hubServer !== undefined) {
    // On the simulator the fleet changes under the controller, one step once the last has converged.
    const converged = (): boolean => problems().length === 0;
    await until(() => present.length === 2 && converged());
    const settings = hubServer.get<V1ConfigMap>('v1/configmaps', NAMESPACE, SOURCE);
    await hubServer.update('v1/configmaps', { ...settings, data: { color: 'green', revision: '2' } });
    console.log(`hub: ${NAMESPACE}/${SOURCE} now at revision 2`);
    await until(converged);
    await hubServer.create('v1/secrets', memberSecret('m3', servers.get('m3')?.kubeConfigYaml() ?? ''));
    await until(() => present.includes('m3') && converged());
    await hubServer.delete('v1/secrets', NAMESPACE, 'm2');
    await until(() => !present.includes('m2'));
    // Someone edits the copy in m1 by hand: it is put back.
    const copy = servers.get('m1')?.get<V1ConfigMap>('v1/configmaps', NAMESPACE, SOURCE);
    if (copy !== undefined) await servers.get('m1')?.update('v1/configmaps', { ...copy, data: { color: 'red', revision: 'x' } });
    console.log(`m1: ${NAMESPACE}/${SOURCE} edited by hand`);
    await until(converged);
  }
  await cluster.done;
  const status = fleet.controller.status();
  stop.abort();
  await ended;
  membership.unsubscribe();
  // Per cluster present: one that left stays in status().groups with its counts, which only grow.
  const groups = Object.entries(status.groups ?? {}).filter(([cluster]) => present.includes(cluster));
  console.log(`metrics: ${groups.map(([cluster, g]) => `${cluster} ${g.reconciles} reconciles`).join(', ') || 'no members'}`);
  if (hubServer !== undefined) {
    const left = problems();
    console.log(left.length === 0 ? `converged: ${present.join(', ')} each hold ${NAMESPACE}/${SOURCE} at revision 2` : `not converged: ${left.join('; ')}`);
    if (left.length > 0) process.exitCode = 1;
  }
  await Promise.all([...servers.values()].map((s) => s.close()));
  await cluster.close();
}
