import { controller, forgetGroup, type Controller } from '../controller/controller.js';
import type { ControllerOptions, ControllerSource, ErrorAction, ForSource, OwnsSource, ReconcileAction, ReconcileContext, WatchesSource } from '../controller/types.js';
import { WithdrawnError } from '../controller/WithdrawnError.js';
import { reportTo } from '../errors/reportTo.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import { checkPredicates } from '../operators/predicateFilter.js';
import { checkOptionNames, describeValue, functionOption, optionNames } from '../options/validate.js';
import { followSignals } from '../options/followSignals.js';
import { CONTROLLER_OPTIONS } from '../controller/options.js';
import type { KubeObject } from '../store/types.js';
import { splitClusterKey } from './clusterKey.js';
import { clusterOf, fleetSources, isMulti, type ClusterSource, type FleetEntry, type Member } from './fleetSources.js';
import type { MultiClusterInformer } from './multiClusterInformer.js';
import type { Cluster, ClusterProvider } from './types.js';

/**
 * What a multi-cluster reconcile is given: a single-cluster
 * `ReconcileContext` (its `key` and `store` are those of the cluster's
 * primary source, so a single-cluster reconcile works unchanged) and the
 * cluster, whose `kubeConfig` is how to write to it. `signal` also aborts
 * when the cluster leaves or its KubeConfig changes.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import { type ClusterReconcileContext } from 'rxkube/core';
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 *
 * async function reconcile(cm: V1ConfigMap, ctx: ClusterReconcileContext<V1ConfigMap>) {
 *   const configMaps = objectClient(ctx.cluster.kubeConfig, 'v1/configmaps', { namespace: cm.metadata?.namespace });
 *   await configMaps.patch(cm.metadata?.name ?? '', { metadata: { labels: { seen: 'yes' } } }, { signal: ctx.signal });
 * }
 * ```
 */
export interface ClusterReconcileContext<T> extends ReconcileContext<T> {
  /** The cluster whose key this is. */
  readonly cluster: Cluster;
}

/**
 * A multi-cluster reconcile function: as a `Reconciler`, with the cluster
 * in its context.
 *
 * ## Example
 * ```ts
 * import type { ClusterReconciler } from 'rxkube/core';
 * import type { V1Deployment } from '@kubernetes/client-node';
 *
 * const reconcile: ClusterReconciler<V1Deployment> = async (d, ctx) => {
 *   console.log(`${ctx.cluster.name}: ${ctx.key}`);
 *   return { requeueAfter: 600_000 };
 * };
 * ```
 */
export type ClusterReconciler<T> = (obj: T, ctx: ClusterReconcileContext<T>) => ReconcileAction | Promise<ReconcileAction>;

/**
 * Options of {@link multiClusterController}: every option of `controller()`
 * (derived from {@link ControllerOptions}, so none can be missing here), with
 * the fleet (`clusters`) and the multi-cluster forms of the sources, the
 * reconcile and the error policy. `fairBy` is the cluster, always.
 *
 * ## Example
 * ```ts
 * import { multiClusterController, type MultiClusterInformer } from 'rxkube';
 * import type { ClusterReconciler, MultiClusterControllerOptions } from 'rxkube/core';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: MultiClusterInformer<V1Deployment>;
 * declare const reconcile: ClusterReconciler<V1Deployment>;
 *
 * const opts = { for: deployments, reconcile, concurrency: 8, reconcileTimeoutMs: 60_000 } satisfies MultiClusterControllerOptions<V1Deployment>;
 * multiClusterController(opts).subscribe();
 * ```
 */
export type MultiClusterControllerOptions<T> = Omit<ControllerOptions<T>, 'for' | 'owns' | 'watches' | 'reconcile' | 'errorPolicy' | 'fairBy'> & {
  /**
   * The fleet. A cluster that leaves has its reconciles in flight aborted;
   * one whose KubeConfig changes too, and its keys run again with the new one.
   * @default the `for` informer's provider (required when `for` is a single-cluster source)
   */
  readonly clusters?: ClusterProvider;
  /**
   * The primary objects of each cluster (or one shared source for all); `{ source, predicates }` enqueues only
   * the changes the predicates pass, judged per cluster, as a controller's `for` (CR-113). Required.
   */
  readonly for: ClusterSource<T> | (Omit<ForSource<T>, 'source'> & { readonly source: ClusterSource<T> });
  /** Objects the primary objects own, per cluster; a change enqueues the owner's key in that cluster. @default [] */
  readonly owns?: readonly (Omit<OwnsSource, 'source'> & { /** The owned objects: per cluster, or one source for all. */ readonly source: ClusterSource<any> })[];
  /**
   * Other objects, mapped to primary keys (`namespace/name`) of one cluster
   * by a function that is told the cluster. A shared source's changes are
   * mapped once per cluster.
   * @default []
   */
  readonly watches?: readonly {
    /** The watched objects: per cluster, or one source for all. */
    readonly source: ClusterSource<any>;
    /** The primary keys of `cluster` to reconcile when `obj` changes (as a controller's `watches` mapper); what it throws is reported. */
    readonly map: (obj: any, cluster: Cluster) => Iterable<string> | string | undefined | null;
    /** Only changes that pass these are mapped, as a controller's `watches` predicates (CR-115), judged per cluster. @default [] */
    readonly predicates?: WatchesSource<any>['predicates'];
  }[];
  /** Brings one cluster in line with one primary object. Required. */
  readonly reconcile: ClusterReconciler<T>;
  /** As the controller's `errorPolicy`, with the cluster in the context. @default () => 'backoff' */
  readonly errorPolicy?: (error: Error, obj: T, ctx: ClusterReconcileContext<T>) => ErrorAction;
};

// The controller's options but fairBy (always the cluster here), and the fleet.
const { fairBy: _fairBy, ...CONTROLLER_PASSED } = CONTROLLER_OPTIONS;
const OPTION_NAMES = optionNames<MultiClusterControllerOptions<unknown>>({ ...CONTROLLER_PASSED, clusters: true });

/**
 * Creates a controller over many clusters: `controller()` over the fleet's
 * sources, keyed `cluster/namespace/name`, with a work queue fair between
 * clusters (`fairBy` the cluster) and the cluster in the reconcile context.
 * It keeps every rule of a controller and adds: clusters' keys taken in
 * turn (MC-11); a cluster's keys reconciled once its sources synced, so one
 * that is down holds up only itself (LT-5); the reconcile given the
 * cluster's own key and store and `ctx.cluster.kubeConfig`, with
 * `ctx.signal` aborted when the cluster leaves or its KubeConfig changes
 * (MC-12, MC-13); outcome keys that name the cluster and `status().groups`
 * per cluster (MC-14).
 *
 * ## Example
 * ```ts
 * import { kubeconfigClusters, kubeSource, multiClusterController, multiClusterInformer, objectClient, splitClusterKey } from 'rxkube';
 *
 * const clusters = kubeconfigClusters();
 * const deployments = multiClusterInformer(clusters, (c) => kubeSource(c.kubeConfig, 'apps/v1/deployments'));
 * const c = multiClusterController({
 *   for: deployments,
 *   reconcile: async (d, ctx) => {
 *     const client = objectClient(ctx.cluster.kubeConfig, 'apps/v1/deployments', { namespace: d.metadata?.namespace });
 *     await client.patch(d.metadata?.name ?? '', { metadata: { annotations: { seen: 'yes' } } }, { signal: ctx.signal });
 *   },
 *   concurrency: 4,
 * });
 * c.subscribe((o) => console.log(splitClusterKey(o.key).cluster, o.type, o.key));
 * ```
 *
 * @param opts the fleet, the sources, the reconcile function and how to run it; `clusters` is required when `for` is a
 *   single-cluster source.
 * @returns the controller, idle until subscribed.
 * @throws {TypeError} when an option is missing or invalid.
 */
export function multiClusterController<T>(
  opts: MultiClusterControllerOptions<T> & { readonly for: MultiClusterInformer<T> | (Omit<ForSource<T>, 'source'> & { readonly source: MultiClusterInformer<T> }) },
): Controller<T>;
export function multiClusterController<T>(
  opts: MultiClusterControllerOptions<T> & { readonly for: ControllerSource<T> | ForSource<T>; readonly clusters: ClusterProvider },
): Controller<T>;
export function multiClusterController<T>(opts: MultiClusterControllerOptions<T>): Controller<T> {
  const where = 'multiClusterController';
  const o = checkOptionNames(where, opts, OPTION_NAMES) as unknown as MultiClusterControllerOptions<T>;
  const { clusters, for: forOption, owns, watches, reconcile, errorPolicy, ...rest } = o;
  // `for` is a source, or `{ source, predicates }` as a controller's (CR-113).
  const entry = forOption as { source?: unknown; subscribe?: unknown; predicates?: unknown } | undefined;
  const wrapped = typeof entry === 'object' && entry !== null && typeof entry.subscribe !== 'function' && 'source' in entry;
  const primary = (wrapped ? entry.source : entry) as ClusterSource<T> | undefined;
  if (typeof primary !== 'object' || primary === null || typeof primary.subscribe !== 'function') {
    throw new TypeError(`${where}: option "for" must be a multi-cluster informer or an informer, got ${describeValue(primary)}`);
  }
  const provider = clusters ?? (isMulti(primary) ? primary.clusters : undefined);
  if (typeof (provider as Partial<ClusterProvider> | undefined)?.subscribe !== 'function') {
    throw new TypeError(`${where}: option "clusters" must be an Observable of cluster sets (it is required when "for" is a single-cluster source), got ${describeValue(provider)}`);
  }
  checkList(where, 'owns', owns, (e) => typeof (e as { source?: { subscribe?: unknown } } | null)?.source?.subscribe === 'function', '{ source, kind?, apiVersion? }');
  checkList(where, 'watches', watches, (e) => {
    const w = e as { source?: { subscribe?: unknown }; map?: unknown } | null;
    return typeof w?.source?.subscribe === 'function' && typeof w.map === 'function';
  }, '{ source, map(obj, cluster) }');
  if (typeof reconcile !== 'function') throw new TypeError(`${where}: option "reconcile" must be a function, got ${describeValue(reconcile)}`);
  functionOption(where, 'errorPolicy', errorPolicy);
  // Predicates are applied per cluster by the fleet's sources, not by the controller over the merged stream (LT-4).
  const ownsList = owns ?? [];
  const watchesList = watches ?? [];
  const entries = [
    { at: 'for', source: primary as ClusterSource<unknown>, predicates: (wrapped ? (entry.predicates as ForSource<T>['predicates']) : undefined) ?? [] },
    ...ownsList.map((e, i) => ({ at: `owns[${i}]`, source: e.source, predicates: e.predicates ?? [] })),
    ...watchesList.map((w, i) => ({ at: `watches[${i}]`, source: w.source, predicates: w.predicates ?? [] })),
  ];
  entries.forEach((e) => checkPredicates(`${where}: ${e.at}.predicates`, e.predicates));
  const report = (err: Error): void => reportTo(o.onError, err);
  const { sources, members } = fleetSources(
    provider as ClusterProvider,
    entries as readonly FleetEntry[],
    report,
    // A cluster that left takes its per-cluster counts with it (LT-14).
    (name) => forgetGroup(built as Controller<unknown>, name),
  );
  const [forSource, ...others] = sources as [ControllerSource<T>, ...ControllerSource<any>[]];
  /** The cluster of a key, its key within the cluster, and the context a multi-cluster reconcile is given. */
  const localContext = (ctx: ReconcileContext<T>, member: Member): ClusterReconcileContext<T> => {
    const { key } = splitClusterKey(ctx.key);
    return { ...ctx, key, store: member.store as ReconcileContext<T>['store'], cluster: member.cluster };
  };
  const built: Controller<T> = controller<T>({
    ...rest,
    for: forSource,
    owns: ownsList.map(({ source: _source, predicates: _predicates, ...ownerOptions }, i) => ({ ...ownerOptions, source: others[i] as ControllerSource<KubeObject> })),
    watches: watchesList.map((w, i) => ({
      source: others[ownsList.length + i] as ControllerSource<unknown>,
      map: (obj: unknown, event: InformerEvent<unknown>) => {
        const member = members.get(clusterOf(event));
        return member === undefined ? [] : w.map(obj, member.cluster);
      },
    })),
    fairBy: (key) => splitClusterKey(key).cluster,
    reconcile: async (obj, ctx) => {
      const name = splitClusterKey(ctx.key).cluster;
      const member = members.get(name);
      // The cluster left while its key waited: the key goes with it (MC-13).
      if (member === undefined) throw new WithdrawnError(`cluster ${JSON.stringify(name)} left`, false, undefined);
      const stopped = (err: unknown): WithdrawnError => new WithdrawnError(`cluster ${JSON.stringify(name)} stopped`, members.has(name), err);
      // Follows the reconcile's and the cluster's signals until the reconcile ends.
      const both = followSignals(ctx.signal, member.abort.signal);
      let action: ReconcileAction;
      try {
        action = await reconcile(obj, { ...localContext(ctx, member), signal: both.signal });
      } catch (err) {
        // What the cluster's leave or new KubeConfig made fail is not news; a replaced cluster's key runs again.
        throw member.abort.signal.aborted ? stopped(err) : err;
      } finally {
        both.release();
      }
      // Its cluster was replaced meanwhile (what it wrote went through the old KubeConfig: the key runs again) or left
      // (nothing to count for a cluster whose counts are gone): withdrawn either way (MC-13, LT-12).
      if (member.abort.signal.aborted) throw stopped(undefined);
      return action;
    },
    ...(errorPolicy !== undefined && {
      errorPolicy: (err: Error, obj: T, ctx: ReconcileContext<T>) => {
        const member = members.get(splitClusterKey(ctx.key).cluster);
        return member === undefined ? undefined : errorPolicy(err, obj, localContext(ctx, member));
      },
    }),
  });
  return built;
}

/** An optional array option, each entry checked. */
function checkList(where: string, name: string, value: unknown, ok: (entry: unknown) => boolean, shape: string): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new TypeError(`${where}: option "${name}" must be an array, got ${describeValue(value)}`);
  value.forEach((entry: unknown, i) => {
    if (!ok(entry)) throw new TypeError(`${where}: ${name}[${i}] must be ${shape} with a (multi-cluster) informer as source, got ${describeValue(entry)}`);
  });
}
