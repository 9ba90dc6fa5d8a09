// One cluster of a multi-cluster informer as an Observable of its events,
// from its join to its leave: its informer, how healthy it is, and the
// hand-over when its KubeConfig changes (MC-2 … MC-6, LT-22). Internal.

import { Observable, Subscription, type SchedulerLike } from 'rxjs';
import type { Informer, InformerStatus } from '../informer/informer.js';
import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import type { Indexers, KubeObject, ReadonlyIndexer } from '../store/types.js';
import { ClusterError } from './ClusterError.js';
import type { ClusterChange } from './clusterChanges.js';
import { clusterKey } from './clusterKey.js';
import { Reachability } from './reachability.js';
import type { Cluster, ClusterDeleteReason, ClusterEvent } from './types.js';

/**
 * One cluster as a multi-cluster informer sees it, in `status$`. `state` is
 * `syncing` until its first list completes; `synced` while its cache is
 * complete and kept current (a short fault is retried without leaving it);
 * `unreachable` once its list or watch has failed for `unreachableAfterMs`
 * (its objects kept, stale, or dropped: `whileUnreachable`), still retried;
 * `failed` when it answered with an error retrying cannot change.
 *
 * ## Example
 * ```ts
 * import type { ClusterStatus } from 'rxkube/core';
 *
 * const line = (c: ClusterStatus) => `${c.name}: ${c.state}, ${c.objects} objects${c.lastError ? ` (${c.lastError.message})` : ''}`;
 * ```
 */
export interface ClusterStatus {
  readonly name: string;
  readonly state: 'syncing' | 'synced' | 'unreachable' | 'failed';
  /** Objects of this cluster in the multi-cluster store, as of this status (an event alone does not emit one: LT-28). */
  readonly objects: number;
  /** A new KubeConfig is being listed; the old connection serves until it has synced. */
  readonly replacing: boolean;
  /** The last error this cluster met. */
  readonly lastError: ClusterError | undefined;
  /** The last status the informer serving this cluster emitted on its `status$`: its `objects`, `counters` and `lastSyncResourceVersion` are as of that emission, not current (LT-90). */
  readonly informer: InformerStatus | undefined;
}

/** A cluster as the readers of its fleet (the store, `status$`, `cluster(name)`) see it, while it is present. */
export interface Member<T> {
  /** The store of the informer serving it; undefined when nothing of it is cached (failed). */
  readonly store: ReadonlyIndexer<T> | undefined;
  status(): ClusterStatus;
  /** Adds index functions to its store and to a replacement's. */
  addIndexers(indexers: Indexers<T>): void;
}

/** What a cluster needs from the multi-cluster informer it runs in. */
export interface Fleet<T> {
  /** The clusters present by name: each puts itself here at its join and takes itself out when it ends. */
  readonly members: Map<string, Member<T>>;
  /** Builds the informer of a cluster; may throw (a bad server URL). */
  build(cluster: Cluster): Informer<T>;
  report(err: Error): void;
  /** Something `status$` shows changed. */
  changed(): void;
  readonly scheduler: SchedulerLike;
  readonly unreachableAfterMs: number;
  readonly whileUnreachable: 'keep' | 'drop';
}

/** One informer serving a cluster, with the subscriptions that tie it to the cluster. */
interface Connection<T> {
  readonly informer: Informer<T>;
  // Errors, status, then events: ended in that order, since the informer going idle as its events end says nothing
  // about a connection being let go.
  readonly subs: Subscription;
  // The event subscription, which is what keeps the informer running; renewed when objects are dropped.
  events: Subscription;
  status: InformerStatus | undefined;
}

/** The events of `cluster` from its join on, and what its later changes make of them (LT-22). */
export function clusterMember<T extends KubeObject>(cluster: Cluster, changes: Observable<ClusterChange>, fleet: Fleet<T>): Observable<ClusterEvent<T>> {
  return new Observable<ClusterEvent<T>>((subscriber) => {
    const name = cluster.name;
    // Every key of this cluster starts so; computed once rather than per event.
    const prefix = clusterKey(name, '');
    // The connection whose store and events are the cluster's; undefined once failed for good.
    let current: Connection<T> | undefined;
    // A connection with a new KubeConfig, listing until it can take over.
    let next: Connection<T> | undefined;
    let state: ClusterStatus['state'] = 'syncing';
    let lastError: ClusterError | undefined;
    // Whether the current connection's cluster answers; replaced with the connection.
    let reachability: Reachability | undefined;
    // Set while the objects of an unreachable cluster are dropped, until it syncs again.
    let dropped = false;

    const member: Member<T> = {
      get store() {
        return current?.informer.store;
      },
      status: () => ({ name, state, objects: current?.informer.store.size ?? 0, replacing: next !== undefined, lastError, informer: current?.status }),
      addIndexers: (indexers) => [current, next].forEach((conn) => conn?.informer.store.addIndexers(indexers)),
    };

    const error = (err: ClusterError): void => {
      lastError = err;
      fleet.report(err);
    };

    /** Every object of the cluster now, by its key in the cluster. */
    const entries = (): [string, T][] => {
      const store = current?.informer.store;
      return (store?.listKeys() ?? []).flatMap((key): [string, T][] => {
        const obj = store?.getByKey(key);
        return obj === undefined ? [] : [[key, obj]];
      });
    };

    const announceGone = (gone: [string, T][], reason: ClusterDeleteReason): void => {
      for (const [key, obj] of gone) subscriber.next({ type: 'delete', obj, cluster: name, key: prefix + key, reason });
    };

    const close = (conn: Connection<T> | undefined): void => conn?.subs.unsubscribe();

    /** The current connection is gone or replaced: its clock stops, a new connection gets its own. */
    const stopClock = (): void => {
      reachability?.dispose();
      reachability = undefined;
    };

    const closeAll = (): void => {
      stopClock();
      close(next);
      close(current);
      next = current = undefined;
    };

    /** Builds and starts a connection, placed by `place` before it starts so that no event of it is missed. */
    const connect = (to: Cluster, place: (conn: Connection<T>) => void): void => {
      let informer: Informer<T>;
      try {
        informer = fleet.build(to);
      } catch (err) {
        error(new ClusterError(name, `could not build its informer: ${(err as Error).message}`, err));
        if (current === undefined) state = 'failed';
        return;
      }
      const conn: Connection<T> = { informer, subs: new Subscription(), events: Subscription.EMPTY, status: undefined };
      place(conn);
      // errors$ first: with a subscriber there, the informer's errors come here rather than to stderr.
      conn.subs.add(informer.errors$.subscribe((err) => error(new ClusterError(name, next === conn ? `(new KubeConfig) ${err.message}` : err.message, err))));
      conn.subs.add(informer.status$.subscribe((s) => onStatus(conn, s)));
      listen(conn);
    };

    const listen = (conn: Connection<T>): void => {
      conn.subs.add((conn.events = conn.informer.subscribe({
        next: (e) => {
          // A replacement's events stay silent until it takes over; the take-over says what differs.
          if (conn !== current) return;
          // An event is the cluster answering, whether or not the informer's status moved (MC-4).
          reachability?.heard();
          let key: string;
          try {
            key = prefix + conn.informer.store.keyOf(e.obj);
          } catch (err) {
            error(new ClusterError(name, `an object could not be keyed: ${(err as Error).message}`, err));
            return;
          }
          subscriber.next(e.type === 'delete' ? { ...e, cluster: name, key, reason: 'deleted' } : { ...e, cluster: name, key });
        },
        error: (err: unknown) => onFailed(conn, err),
      })));
    };

    const onStatus = (conn: Connection<T>, s: InformerStatus): void => {
      conn.status = s;
      if (conn === next) {
        if (s.synced) takeOver();
        else fleet.changed();
        return;
      }
      if (conn !== current) return;
      reachability ??= new Reachability(fleet.scheduler, fleet.unreachableAfterMs, () => unreachable(conn), () => answered(conn));
      if (reachability.observe(s)) dropped = false;
      // Unreachable until it answers; then syncing until its cache is complete again (after a drop, the relist).
      state = reachability.unreachable ? 'unreachable' : s.synced ? 'synced' : 'syncing';
      fleet.changed();
    };

    const onFailed = (conn: Connection<T>, err: unknown): void => {
      const failure = new ClusterError(name, `failed for good (it is retried only when its KubeConfig changes): ${(err as Error)?.message ?? String(err)}`, err);
      if (conn === next) {
        close(conn);
        next = undefined;
        error(failure);
        return;
      }
      if (conn !== current) return;
      const gone = entries();
      stopClock();
      close(conn);
      current = undefined;
      state = 'failed';
      error(failure);
      announceGone(gone, 'cluster-failed');
      // A replacement already listing may still take over.
      if (next?.status?.synced === true) takeOver();
    };

    /** The cluster answered outside a status change: it is reachable again. */
    const answered = (conn: Connection<T>): void => {
      if (conn !== current) return;
      dropped = false;
      if (state === 'unreachable') state = conn.status?.synced === true ? 'synced' : 'syncing';
      fleet.changed();
    };

    /** The current connection has failed for unreachableAfterMs without a watch since (MC-4). */
    const unreachable = (conn: Connection<T>): void => {
      if (conn !== current) return;
      const cause = lastError?.cause;
      state = 'unreachable';
      error(new ClusterError(name, `unreachable for ${fleet.unreachableAfterMs} ms; still retrying${cause instanceof Error ? ` (last error: ${cause.message})` : ''}`, cause));
      if (fleet.whileUnreachable === 'drop' && !dropped) {
        dropped = true;
        const gone = entries();
        // Unsubscribing empties the informer's cache (and ends its requests); subscribing again lists afresh, with backoff.
        conn.events.unsubscribe();
        announceGone(gone, 'cluster-unreachable');
        reachability?.restart();
        if (current === conn) listen(conn);
      }
      fleet.changed();
    };

    /** The replacement has synced: it becomes the cluster, and only what differs is announced (MC-5). */
    const takeOver = (): void => {
      const replacement = next;
      if (replacement === undefined || subscriber.closed) return;
      const before = new Map(entries());
      const old = current;
      next = undefined;
      current = replacement;
      stopClock();
      dropped = false;
      state = 'synced';
      close(old);
      const store = replacement.informer.store;
      for (const [key, was] of before) {
        const now = store.getByKey(key);
        const gone = (): void => subscriber.next({ type: 'delete', obj: new DeletedFinalStateUnknown(key, was), cluster: name, key: prefix + key, reason: 'deleted' });
        if (now === undefined) gone();
        else if (now.metadata?.uid !== was.metadata?.uid) {
          gone();
          subscriber.next({ type: 'add', obj: now, isInInitialList: false, cluster: name, key: prefix + key });
        } else if (now.metadata?.resourceVersion !== was.metadata?.resourceVersion) {
          subscriber.next({ type: 'update', oldObj: was, obj: now, cluster: name, key: prefix + key });
        }
      }
      for (const key of store.listKeys()) {
        const obj = before.has(key) ? undefined : store.getByKey(key);
        if (obj !== undefined) subscriber.next({ type: 'add', obj, isInInitialList: false, cluster: name, key: prefix + key });
      }
      fleet.changed();
    };

    fleet.members.set(name, member);
    const later = changes.subscribe({
      next: (change) => {
        if (change.type === 'replace') {
          // The KubeConfig changed: list with the new one; it takes over once synced. One that cannot even build an informer leaves the old serving.
          close(next);
          next = undefined;
          connect(change.cluster, (conn) => (next = conn));
          fleet.changed();
        } else if (change.type === 'leave') {
          // Torn down before anything is said, then every object announced gone (MC-3).
          const gone = entries();
          fleet.members.delete(name);
          closeAll();
          announceGone(gone, 'cluster-removed');
          subscriber.complete();
        }
      },
      error: (err: unknown) => subscriber.error(err),
    });
    connect(cluster, (conn) => (current = conn));
    return () => {
      later.unsubscribe();
      closeAll();
      if (fleet.members.get(name) === member) fleet.members.delete(name);
    };
  });
}
