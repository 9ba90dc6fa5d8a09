// The sources a multi-cluster controller hands to controller(), one per entry (for, owns[i], watches[i]): the
// clusters stream mapped to each cluster's part and merged (LT-4). Internal, with no lifetime of its own.

import { catchError, combineLatest, concat, concatMap, concatWith, defer, filter, finalize, from, ignoreElements } from 'rxjs';
import { map, merge, NEVER, Observable, of, share, shareReplay, take, takeUntil, tap } from 'rxjs';
import type { ControllerSource } from '../controller/types.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import { syncedOf } from '../informer/syncedOf.js';
import { filterBy, predicateError } from '../operators/predicateFilter.js';
import type { Predicate } from '../operators/predicates.js';
import type { KubeObject } from '../store/types.js';
import { clusterChanges, eachCluster, type ClusterChange } from './clusterChanges.js';
import { ClusterError } from './ClusterError.js';
import { clusterKey, splitClusterKey } from './clusterKey.js';
import { readingOf } from './providerReading.js';
import type { MultiClusterInformer } from './multiClusterInformer.js';
import type { Cluster, ClusterProvider } from './types.js';

/**
 * Where a multi-cluster controller reads from: a multi-cluster informer (each
 * cluster's keys come from that cluster's part of it), or one
 * single-cluster source that every cluster shares (a hub cluster's objects,
 * say, to be applied in every member: each is reconciled once per cluster).
 *
 * ## Example
 * ```ts
 * import type { Informer, MultiClusterInformer } from 'rxkube';
 * import type { ClusterSource } from 'rxkube/core';
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 * declare const configMaps: MultiClusterInformer<V1ConfigMap>;
 * declare const hubConfigMaps: Informer<V1ConfigMap>;
 *
 * const perCluster: ClusterSource<V1ConfigMap> = configMaps; // one cache per cluster
 * const fromTheHub: ClusterSource<V1ConfigMap> = hubConfigMaps; // one cache, read for every cluster
 * ```
 */
export type ClusterSource<T> = MultiClusterInformer<T> | ControllerSource<T>;

/** A cluster present in the fleet, as the reconciles of the controller see it. */
export interface Member {
  readonly cluster: Cluster;
  // Aborted when the cluster leaves or its KubeConfig changes: reconciles in flight get it through their signal (MC-12).
  readonly abort: AbortController;
  /** The store of its part of the `for` source: what its reconciles read. */
  readonly store: ControllerSource<unknown>['store'];
}

/** An entry of the controller, before it is made a fleet source. */
export interface FleetEntry {
  readonly source: ClusterSource<unknown>;
  readonly predicates: readonly Predicate<unknown>[];
}

export function isMulti<T>(source: ClusterSource<T>): source is MultiClusterInformer<T> {
  return typeof (source as Partial<MultiClusterInformer<T>>).cluster === 'function';
}

/**
 * One cluster's part of a source: the cluster's view of a multi-cluster informer, made at each join and held by
 * nothing but the cluster's stream, so churning names keep nothing (LT-10); or the shared source itself.
 */
function partOf<T>(source: ClusterSource<T>, cluster: string): ControllerSource<T> {
  return isMulti(source) ? (source.cluster(cluster) as unknown as ControllerSource<T>) : source;
}

/** The fleet's sources for one controller: `members` is fed by the first entry's subscription (the `for` source's). */
export interface Fleet {
  readonly sources: readonly ControllerSource<unknown>[];
  readonly members: ReadonlyMap<string, Member>;
}

/**
 * Builds the sources of a multi-cluster controller: predicates judged per cluster (LT-4), events held back until the
 * cluster is ready (LT-5), `cluster-removed` deletes dropped (LT-7). `left` hears of each leave, once.
 */
export function fleetSources(provider: ClusterProvider, entries: readonly FleetEntry[], report: (err: Error) => void, left: (name: string) => void): Fleet {
  const members = new Map<string, Member>();
  // The provider's sets as the entries of the latest run read them: made by the `for` entry, which the controller
  // subscribes first (its keys before those of owns and watches); the entries after it are given the latest set, as a
  // provider that replays it would give them. Read through the reading the informers of the provider share, so that
  // every reader is given the sets in the provider's order (MC-15). Never complete: the last set holds (MC-1).
  let reading: ClusterProvider | undefined;
  const read = (): ClusterProvider => readingOf(provider).pipe(concatWith(NEVER), shareReplay({ bufferSize: 1, refCount: true }));
  const ready = (name: string): Observable<unknown> =>
    combineLatest(entries.map((e) => syncedOf(partOf(e.source, name)))).pipe(
      filter((synced) => synced.every(Boolean)),
      take(1),
    );
  const sources = entries.map(({ source, predicates }, index): ControllerSource<unknown> => {
    const feedsMembers = index === 0;
    /** One cluster's events while it is present; the `for` entry also keeps its member (MC-12). */
    const cluster = (joined: Cluster, later: Observable<ClusterChange>): Observable<Tagged> => {
      const name = joined.name;
      const part = partOf(source, name);
      let member: Member | undefined;
      const enter = (cluster: Cluster): void => {
        if (feedsMembers) members.set(name, (member = { cluster, abort: new AbortController(), store: part.store }));
      };
      const end = (why: string): void => {
        member?.abort.abort(new ClusterError(name, `stopped: ${why}`));
        // A later run's subscription may overlap a draining one: each ends its own member.
        if (member !== undefined && members.get(name) === member) members.delete(name);
        member = undefined;
      };
      const leave = later.pipe(
        tap((change) => {
          end(change.type === 'leave' ? 'it left the fleet' : 'its KubeConfig changed');
          if (change.type !== 'leave') enter(change.cluster);
          else if (feedsMembers) left(name);
        }),
        filter((change) => change.type === 'leave'),
      );
      // Counted: the readiness watch ends with the cluster's stream, synced or not (LT-10).
      const synced = ready(name).pipe(shareReplay({ bufferSize: 1, refCount: true }));
      const partEvents = (part as Observable<InformerEvent<unknown>>).pipe(filter((e) => !(e.type === 'delete' && (e as { reason?: string }).reason === 'cluster-removed')));
      const store = part.store as ControllerSource<unknown>['store'] & { list?: () => unknown[] };
      return defer(() => {
        enter(joined);
        // Keys of what a cache that cannot be listed gave before the cluster was ready (LT-11).
        const held = new Set<string>();
        const hold = (e: InformerEvent<unknown>): void => {
          // A delete needs no key: the object is not in the cache when the keys are read.
          if (!feedsMembers || store.list !== undefined || e.type === 'delete') return;
          try {
            held.add(store.keyOf(e.obj));
          } catch (err) {
            report(new ClusterError(name, `its ${part.name ?? 'source'} gave an object with no key; it waits for its next change`, err));
          }
        };
        // The `for` entry replays the cluster's cache once it is ready: the events it held back are in it (LT-5), or,
        // for a cache that cannot be listed, the objects still there under the keys it held (LT-11).
        const cache = (): unknown[] => {
          const keys = [...held];
          held.clear();
          return store.list?.() ?? keys.map((key) => store.getByKey(key)).filter((obj) => obj !== undefined);
        };
        const replay = concat(synced.pipe(ignoreElements()), defer(() => from(cache())), NEVER).pipe(
          map((obj): InformerEvent<unknown> => ({ type: 'add', obj, isInInitialList: true })),
        );
        // The events first, so what the source gives as it is subscribed is held before the replay reads the keys; the
        // source's end ends the holding: nothing held is given after it.
        return merge(whenReady(partEvents.pipe(tap({ complete: () => held.clear() })), synced, hold), feedsMembers ? replay : NEVER);
      }).pipe(
        passing({ source, predicates }, name, report),
        // A cluster view's events say their cluster already; a shared source's are copied once per cluster.
        map((e): Tagged => ((e as Partial<Tagged>).cluster === name ? (e as Tagged) : { ...e, cluster: name })),
        catchError((err: unknown) => {
          report(new ClusterError(name, `its ${part.name ?? 'source'} failed`, err));
          return NEVER;
        }),
        takeUntil(leave),
        finalize(() => end('the controller stopped')),
      );
    };
    // Only the `for` source reports what is wrong with the provider's sets: once is enough. A provider's error ends
    // the controller (MC-1).
    const events = defer(() => {
      if (feedsMembers || reading === undefined) reading = read();
      const changes = clusterChanges(reading, feedsMembers ? report : () => {}).pipe(concatMap((set) => set), share());
      return eachCluster(changes, cluster);
    });
    return Object.assign(events, {
      name: source.name ?? 'source',
      // Read by cluster key, keyed within one cluster (a shared source keys an object alike in every cluster).
      store: {
        getByKey: (key: string) => source.store.getByKey(isMulti(source) ? key : splitClusterKey(key).key),
        keyOf: (obj: unknown) => (isMulti(source) ? splitClusterKey(source.store.keyOf('_', obj)).key : source.store.keyOf(obj)),
      },
      // Readiness is per cluster (LT-5): the controller's own gate does not wait for the fleet.
      status$: concat(of({ synced: true }), NEVER),
      scopeKey: (key: string, event: InformerEvent<unknown>) => clusterKey(clusterOf(event), key),
    });
  });
  return { sources, members };
}

/**
 * `events` once `ready` has emitted; each one before is given to `hold`. `events` is subscribed first, so what it gives
 * as it is subscribed (a late subscriber's replay of a cache the `for` entry replays itself at readiness) is held too.
 */
function whenReady<E>(events: Observable<E>, ready: Observable<unknown>, hold: (e: E) => void): Observable<E> {
  return defer(() => {
    let open = false;
    const passes = (e: E): boolean => {
      if (!open) hold(e);
      return open;
    };
    return merge(events.pipe(filter(passes)), ready.pipe(take(1), tap(() => (open = true)), ignoreElements()));
  });
}

/** An event with the cluster it came from, which `scopeKey` puts in front of its keys. */
type Tagged = InformerEvent<unknown> & { readonly cluster: string };

/** The cluster a fleet source's event came from. */
export function clusterOf(event: InformerEvent<unknown>): string {
  return (event as Tagged).cluster;
}

/** The entry's predicates over one cluster's events, with `predicateFilter`'s rules (CR-113…CR-115). */
function passing(entry: FleetEntry, cluster: string, report: (err: Error) => void): (events: Observable<InformerEvent<unknown>>) => Observable<InformerEvent<unknown>> {
  if (entry.predicates.length === 0) return (events) => events;
  const where = `multiClusterController: the predicates of ${entry.source.name ?? 'a source'} in cluster ${JSON.stringify(cluster)}`;
  const f = filterBy(entry.predicates as readonly Predicate<KubeObject>[], (err) => report(predicateError(where, err)));
  return (events) => f(events as unknown as Observable<InformerEvent<KubeObject>>) as unknown as Observable<InformerEvent<unknown>>;
}
