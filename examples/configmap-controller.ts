/**
 * A controller that keeps one ConfigMap per Deployment: `<deployment>-info`,
 * owned by the deployment, holding a summary of it. It writes the ConfigMap
 * with server-side apply, as its field manager, and records an Event on the
 * deployment each time it creates or changes one. A finalizer on each
 * deployment makes sure the ConfigMap is deleted before the deployment goes,
 * even on a cluster where no garbage collector runs.
 *
 * It runs as a controller runs in a pod: through the manager, with leader
 * election on a Lease, `/healthz`, `/livez` and `/readyz` on
 * `--health-probe-bind-address` and `/metrics` on `--metrics-bind-address`;
 * SIGTERM drains it and hands the Lease over. `deploy/` has the image, the
 * Deployment and the RBAC it needs.
 *
 *   npm run example configmap-controller                    # the current kubeconfig context (in-cluster in a pod); Ctrl-C stops
 *   npm run example configmap-controller -- --simulator     # the built-in API server, with deployments coming and going
 *   npm run example configmap-controller -- --simulator --health-probe-bind-address 127.0.0.1:0 --metrics-bind-address 0
 *
 * It prints where it serves, its leadership, and one line per reconcile,
 * e.g. `reconciled default/web: created default/web-info (2 ms)`.
 */
import { hostname } from 'node:os';
import type { KubeConfig, V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import {
  controller,
  finalizer,
  informer,
  isNotFound,
  kubeSource,
  leaseLock,
  metaNamespaceKey,
  objectClient,
  ownerReference,
  recorder,
  runManager,
  type ApplyConfiguration,
  type Controller,
  type EventRecorder,
  type Informer,
  type ManagerEvent,
  type ObjectClient,
  type ReconcileContext,
  type ReconcileOutcome,
} from 'rxkube';
import { prometheusMetrics } from 'rxkube/metrics';
import type { ApiServer } from 'rxkube/testing';
import { exampleCluster } from './lib/cluster.js';

/** The finalizer this controller puts on every deployment it manages. */
export const FINALIZER = 'rxkube.example/configmap-cleanup';
/** The label on every ConfigMap it creates, so its informer reads only those. */
export const MANAGED_BY = 'app.kubernetes.io/managed-by';
const MANAGER = 'configmap-controller';

/** The ConfigMap's name for a deployment. */
export const infoName = (deploymentName: string): string => `${deploymentName}-info`;

/** What the ConfigMap of `d` must hold. */
export function desiredData(d: V1Deployment): Record<string, string> {
  return {
    deployment: d.metadata?.name ?? '',
    generation: String(d.metadata?.generation ?? 0),
    replicas: String(d.spec?.replicas ?? 1),
    images: (d.spec?.template?.spec?.containers ?? []).map((c) => c.image ?? '').join(','),
  };
}

/** The ConfigMap of `d`, as the controller applies it: only the fields it has an opinion on. */
function desiredConfigMap(d: V1Deployment): ApplyConfiguration<V1ConfigMap> {
  const metadata = { name: infoName(d.metadata?.name ?? ''), namespace: d.metadata?.namespace, labels: { [MANAGED_BY]: MANAGER } };
  // With `for`, a reference the garbage collector would not honour (another namespace) fails here, not in the cluster.
  const owner = ownerReference(d, { controller: true, blockOwnerDeletion: true, for: { metadata } });
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...metadata, ownerReferences: [owner] }, data: desiredData(d) };
}

/**
 * Whether `a` holds every key of `b` with its value. Keys someone else added are theirs: server-side apply
 * leaves fields it does not own alone, so the controller neither removes them nor counts them against itself.
 */
const holdsData = (a: Record<string, string> | undefined, b: Record<string, string>): boolean =>
  a !== undefined && Object.entries(b).every(([k, v]) => a[k] === v);

/** A running controller and the informers it reads. */
export interface ConfigMapController {
  readonly controller: Controller<V1Deployment>;
  readonly deployments: Informer<V1Deployment>;
  readonly configMaps: Informer<V1ConfigMap>;
  /** The Events it records; close it after the controller stops, to write the last ones. */
  readonly events: EventRecorder;
  /** The line to print for an outcome, with what its reconcile did. */
  describe(o: ReconcileOutcome<unknown>): string;
}

/**
 * Builds the controller; subscribing to `controller` runs it.
 *
 * @param kc the cluster.
 * @param opts how many reconciles at once, a signal that stops it gracefully, and whether reconciles wait for
 *   the caches to show the controller's own writes (on by default; `bench/readYourWrites.ts` turns it off to compare).
 * @returns the controller and its informers.
 */
export function configMapController(kc: KubeConfig, opts: { concurrency?: number; signal?: AbortSignal; readYourWrites?: boolean } = {}): ConfigMapController {
  const deployments = informer(kubeSource(kc, 'apps/v1/deployments'));
  const configMaps = informer(kubeSource(kc, 'v1/configmaps', { labelSelector: `${MANAGED_BY}=${MANAGER}` }));
  // Every write names this controller as its field manager, so the fields it sets are told apart from others'.
  const configMapsIn = (namespace?: string): ObjectClient<V1ConfigMap> => objectClient(kc, 'v1/configmaps', { namespace, fieldManager: MANAGER });
  const deploymentsIn = (namespace?: string): ObjectClient<V1Deployment> => objectClient(kc, 'apps/v1/deployments', { namespace, fieldManager: MANAGER });
  const events = recorder(kc, { reportingController: `rxkube.example/${MANAGER}`, reportingInstance: process.env['POD_NAME'] ?? hostname() });
  // What each reconcile did, for the line printed with its outcome (one reconcile per key at a time).
  const notes = new Map<string, string>();

  const apply = async (d: V1Deployment, { signal }: ReconcileContext<V1Deployment>): Promise<undefined> => {
    const key = metaNamespaceKey(d);
    const desired = desiredConfigMap(d);
    const cmKey = `${d.metadata?.namespace}/${desired.metadata.name}`;
    const current = configMaps.store.getByKey(cmKey);
    const owner = current?.metadata?.ownerReferences?.find((r) => r.controller === true);
    if (current !== undefined && holdsData(current.data, desiredData(d)) && owner?.uid === d.metadata?.uid) {
      notes.set(key, 'unchanged');
      return undefined;
    }
    // Server-side apply: creates the ConfigMap or sets the fields this controller owns, whatever our cache holds.
    // With force, fields someone else changed by hand are taken back; data keys we no longer send are removed.
    await configMapsIn(d.metadata?.namespace).apply(desired, { force: true, signal });
    const did = current === undefined ? 'created' : 'updated';
    notes.set(key, `${did} ${cmKey}`);
    // publish returns at once; the Event is written in the background.
    events.publish(d, {
      type: 'Normal',
      reason: current === undefined ? 'ConfigMapCreated' : 'ConfigMapUpdated',
      action: 'Reconcile',
      note: `${did} ConfigMap ${cmKey} for generation ${d.metadata?.generation ?? 0}`,
    });
    return undefined;
  };

  const cleanup = async (d: V1Deployment, { signal }: ReconcileContext<V1Deployment>): Promise<undefined> => {
    const key = metaNamespaceKey(d);
    const name = infoName(d.metadata?.name ?? '');
    try {
      await configMapsIn(d.metadata?.namespace).delete(name, { signal });
      notes.set(key, `deleted ${d.metadata?.namespace}/${name}, finalizer removed`);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      notes.set(key, 'nothing to clean up, finalizer removed');
    }
    return undefined;
  };

  const ctl = controller({
    for: deployments,
    owns: [{ source: configMaps, kind: 'Deployment', apiVersion: 'apps/v1' }],
    concurrency: opts.concurrency ?? 2,
    signal: opts.signal,
    ...(opts.readYourWrites !== undefined && { readYourWrites: opts.readYourWrites }),
    // A reconcile makes two or three requests; one still running after 30 s is stuck, and /healthz says so.
    reconcileTimeoutMs: 30_000,
    // Within the pod's 30 s terminationGracePeriodSeconds, with time left to release the Lease.
    shutdownTimeoutMs: 20_000,
    reconcile: (d, ctx) => {
      notes.set(ctx.key, d.metadata?.deletionTimestamp ? 'being deleted, not ours to clean up' : 'finalizer added');
      return finalizer(deploymentsIn, FINALIZER, d, { apply, cleanup }, ctx);
    },
  });
  /**
   * One line for an outcome: `reconciled default/web: created default/web-info (2 ms)`,
   * `failed default/web: <error>; retry in 10 ms`, `gone default/web`.
   */
  const describe = (o: ReconcileOutcome<unknown>): string => {
    const note = notes.get(o.key);
    notes.delete(o.key);
    switch (o.type) {
      case 'reconciled':
        return `reconciled ${o.key}: ${note ?? 'done'} (${Math.round(o.durationMs)} ms)`;
      case 'failed':
        return `failed ${o.key}: ${o.error.message}; ${o.requeueAfter === undefined ? 'not retried' : `retry in ${Math.round(o.requeueAfter)} ms`}`;
      case 'gone':
        return `gone ${o.key}`;
    }
  };
  return { controller: ctl, deployments, configMaps, events, describe };
}

/**
 * What is wrong between the deployments and their ConfigMaps, as the server
 * has them: a live deployment without its finalizer, its ConfigMap, the
 * data the controller owns in it, or its owner; a ConfigMap whose deployment is gone; a deployment stuck in
 * deletion. Empty when the controller has converged.
 *
 * @param deployments every deployment.
 * @param configMaps every ConfigMap the controller manages.
 * @returns one line per problem.
 */
export function convergenceProblems(deployments: readonly V1Deployment[], configMaps: readonly V1ConfigMap[]): string[] {
  const problems: string[] = [];
  const cms = new Map(configMaps.map((cm) => [metaNamespaceKey(cm), cm]));
  const live = new Set<string>();
  for (const d of deployments) {
    const key = metaNamespaceKey(d);
    if (d.metadata?.deletionTimestamp) {
      problems.push(`${key} is still being deleted (finalizers ${JSON.stringify(d.metadata.finalizers ?? [])})`);
      continue;
    }
    const cmKey = `${d.metadata?.namespace}/${infoName(d.metadata?.name ?? '')}`;
    live.add(cmKey);
    if (!(d.metadata?.finalizers ?? []).includes(FINALIZER)) problems.push(`${key} has no finalizer ${FINALIZER}`);
    const cm = cms.get(cmKey);
    if (cm === undefined) problems.push(`${key} has no ConfigMap ${cmKey}`);
    else if (!holdsData(cm.data, desiredData(d))) problems.push(`${cmKey} holds ${JSON.stringify(cm.data)}, not all of ${JSON.stringify(desiredData(d))}`);
    else if (cm.metadata?.ownerReferences?.find((r) => r.controller === true)?.uid !== d.metadata?.uid) problems.push(`${cmKey} is not owned by ${key}`);
  }
  for (const cmKey of cms.keys()) if (!live.has(cmKey)) problems.push(`${cmKey} outlived its deployment`);
  return problems;
}

/** Resolves once the server shows no problem, or after `limitMs` (the caller prints what is left). */
async function untilConverged(server: ApiServer, problems: (server: ApiServer) => string[], limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (problems(server).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** A deployment for the simulator. */
export function sampleDeployment(name: string, replicas: number, image: string, namespace = 'default'): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
    },
  };
}

/** The Lease the replicas elect a leader on. */
export const LEASE = 'configmap-controller';

/** One line for what the manager reports besides outcomes; undefined for nothing worth a line. */
function describeEvent(e: Exclude<ManagerEvent, { type: 'reconcile' }>): string | undefined {
  switch (e.type) {
    case 'serving':
      return `serving ${e.server} on ${e.url}`;
    case 'leadership':
      return e.leading ? `leading (lease ${LEASE})` : e.leader === undefined ? undefined : `following ${e.leader}`;
    case 'stopping':
      return `stopping: ${e.reason}`;
  }
}

if ((import.meta as { main?: boolean }).main) {
  const cluster = await exampleCluster(
    process.argv.slice(2),
    async (server) => {
      for (const [name, replicas, image] of [['web', 3, 'nginx:1.27'], ['api', 2, 'api:4.1'], ['db', 1, 'postgres:17'], ['cache', 2, 'redis:7']] as const) {
        await server.create('apps/v1/deployments', sampleDeployment(name, replicas, image));
      }
    },
    { 'metrics-bind-address': ':8080', 'health-probe-bind-address': ':8081', 'service-account-dir': '' },
  );
  const { kc, flags } = cluster;
  const running = configMapController(kc);
  // In a pod, the Lease lives in the pod's namespace (the service account's).
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  // The manager registers the controller, its informers and the leader election with it.
  const metrics = prometheusMetrics();
  const stop = new AbortController();
  const exit = runManager({
    controllers: [running.controller],
    leaderElection: { lock: leaseLock(kc, { namespace, name: LEASE }) },
    metrics,
    metricsBindAddress: flags['metrics-bind-address'],
    healthProbeBindAddress: flags['health-probe-bind-address'],
    signal: stop.signal,
    onEvent: (e) => {
      const line = e.type === 'reconcile' ? running.describe(e.outcome) : describeEvent(e);
      if (line !== undefined) console.log(line);
    },
  });
  const simulator: ApiServer | undefined = cluster.simulator;
  const problems = (server: ApiServer): string[] =>
    convergenceProblems(server.list<V1Deployment>('apps/v1/deployments'), server.list<V1ConfigMap>('v1/configmaps'));
  // On the simulator, once the seeded deployments have their ConfigMaps, deployments come, change and go for a moment.
  const churn = simulator === undefined ? undefined : untilConverged(simulator, problems, 10_000).then(() =>
    simulator.churn({ resource: 'apps/v1/deployments', creates: 4, updates: 10, deletes: 3, perSecond: 30, namePrefix: 'churn-', seed: 7 }),
  );
  // SIGTERM and SIGINT reach the manager directly; --duration (or a fatal end) ends the wait here.
  const code = await Promise.race([exit, cluster.done.then(() => undefined)]);
  (await churn)?.stop();
  // With --duration on the simulator, the last writes of the churn get their reconciles before the controller stops.
  if (code === undefined && simulator !== undefined) await untilConverged(simulator, problems, 5_000);
  stop.abort();
  const exitCode = await exit;
  await running.events.close();
  const s = running.controller.status();
  console.log(`stopped: ${s.reconciles} reconciles, ${s.errors} failed, ${s.requeues} requeued, p50 ${s.durationP50Ms ?? 0} ms, p99 ${s.durationP99Ms ?? 0} ms`);
  const e = running.events.status();
  console.log(`events: ${e.published} published, ${e.written} written, ${e.rateLimited} rate-limited, ${e.failed} failed`);
  if (simulator !== undefined) {
    const left = problems(simulator);
    console.log(left.length === 0 ? `converged: ${simulator.list('apps/v1/deployments').length} deployments, each with its ConfigMap` : `not converged: ${left.join('; ')}`);
  }
  await cluster.close();
  process.exit(exitCode);
}
