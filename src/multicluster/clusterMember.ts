// One cluster inside a multi-cluster informer: its informer, how healthy it
// is, and the hand-over when its KubeConfig changes (MC-2 … MC-6). Internal.

import { Subscription, type SchedulerLike } from 'rxjs';
import type { Informer, InformerStatus } from '../informer/informer.js';
import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import type { InformerEvent } from '../informer/InformerEvent.js';
import type { Indexers, KubeObject, ReadonlyIndexer } from '../store/types.js';
import { ClusterError } from './ClusterError.js';
import { Reachability } from './reachability.js';
import { clusterKey } from './clusterKey.js';
import type { Cluster, ClusterDeleteReason, ClusterEvent } from './types.js';

/**
 * Where one cluster stands:
 * - `syncing`: its first list has not completed (nor has it failed for long);
 * - `synced`: its cache is complete and being kept current (a short fault
 *   is retried without leaving this state);
 * - `unreachable`: its list or watch has failed for `unreachableAfterMs`
 *   and is being retried; its objects are kept, stale, or dropped
 *   (`whileUnreachable`);
 * - `failed`: it answered with an error retrying cannot change.
 *
 * ## Example
 * ```ts
 * import type { ClusterState } from 'rxkube/core';
 *
 * const usable = (state: ClusterState) => state === 'synced' || state === 'unreachable'; // unreachable: stale but kept
 * ```
 */
export type ClusterState = 'syncing' | 'synced' | 'unreachable' | 'failed';

/**
 * One cluster as a multi-cluster informer sees it, in `status$`.
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
  readonly state: ClusterState;
  /** Objects of this cluster in the multi-cluster store. */
  readonly objects: number;
  /** A new KubeConfig is being listed; the old connection serves until it has synced. */
  readonly replacing: boolean;
  /** The last error this cluster met. */
  readonly lastError: ClusterError | undefined;
  /** The status of the informer serving this cluster. */
  readonly informer: InformerStatus | undefined;
}

/** What a member needs from the informer that holds it. */
export interface MemberHost<T> {
  /** Builds the informer of a cluster; may throw (a bad server URL). */
  build(cluster: Cluster): Informer<T>;
  emit(event: ClusterEvent<T>): void;
  report(err: Error): void;
  /** Something `status$` shows changed. */
  changed(): void;
  readonly scheduler: SchedulerLike;
  readonly unreachableAfterMs: number;
  readonly whileUnreachable: 'keep' | 'drop';
}

/** One informer serving a cluster, with the subscriptions that tie it to the member. */
interface Connection<T> {
  readonly cluster: Cluster;
  readonly informer: Informer<T>;
  // Errors and status: held for the connection's whole life.
  readonly watching: Subscription;
  // The event subscription, which is what keeps the informer running; renewed when objects are dropped.
  events: Subscription;
  status: InformerStatus | undefined;
}

/** A cluster of a multi-cluster informer, from its join to its leave. */
export class ClusterMember<T extends KubeObject> {
  readonly name: string;
  readonly #host: MemberHost<T>;
  // The connection whose store and events are the cluster's; undefined once failed for good or removed.
  #current: Connection<T> | undefined;
  // A connection with a new KubeConfig, listing until it can take over.
  #next: Connection<T> | undefined;
  #state: ClusterState = 'syncing';
  #lastError: ClusterError | undefined;
  // Whether the current connection's cluster answers; replaced with the connection.
  #reachability: Reachability | undefined;
  // Set while the objects of an unreachable cluster are dropped, until it syncs again.
  #dropped = false;
  #removed = false;

  constructor(cluster: Cluster, host: MemberHost<T>) {
    this.name = cluster.name;
    this.#host = host;
    this.#connect(cluster, (conn) => (this.#current = conn));
  }

  get state(): ClusterState {
    return this.#state;
  }

  /** The cluster's store, or undefined when nothing of it is cached (failed). */
  get store(): ReadonlyIndexer<T> | undefined {
    return this.#current?.informer.store;
  }

  /** Whether its cache is complete now. */
  hasSynced(): boolean {
    return this.#current?.informer.hasSynced() === true;
  }

  /** Whether it no longer holds up `whenSynced`: synced, or known to be unreachable or failed. */
  get settled(): boolean {
    return this.#state !== 'syncing';
  }

  get lastError(): ClusterError | undefined {
    return this.#lastError;
  }

  status(): ClusterStatus {
    return {
      name: this.name,
      state: this.#state,
      objects: this.store?.size ?? 0,
      replacing: this.#next !== undefined,
      lastError: this.#lastError,
      informer: this.#current?.status,
    };
  }

  /** The KubeConfig changed: list with the new one; it takes over once synced (MC-5). */
  replace(cluster: Cluster): void {
    if (this.#removed) return;
    if (this.#next !== undefined) this.#close(this.#next);
    this.#next = undefined;
    // A KubeConfig that cannot even build an informer leaves the old connection serving.
    this.#connect(cluster, (conn) => (this.#next = conn));
    this.#host.changed();
  }

  /** Adds index functions to the cluster's store and to a replacement's. */
  addIndexers(indexers: Indexers<T>): void {
    this.#current?.informer.store.addIndexers(indexers);
    this.#next?.informer.store.addIndexers(indexers);
  }

  /** The cluster left: requests and timers end, and its objects leave as deletions (MC-3). */
  remove(): void {
    this.#removed = true;
    const entries = this.#entries();
    this.#closeAll();
    for (const [key, obj] of entries) this.#emitDelete(key, obj, 'cluster-removed');
  }

  /** The multi-cluster informer stopped: end everything without a word (nobody is listening). */
  close(): void {
    this.#removed = true;
    this.#closeAll();
  }

  // ------------------------------------------------------------ connections

  /** Builds and starts a connection, placed by `place` before it starts so that no event of it is missed. */
  #connect(cluster: Cluster, place: (conn: Connection<T>) => void): void {
    let inf: Informer<T>;
    try {
      inf = this.#host.build(cluster);
    } catch (err) {
      this.#error(new ClusterError(this.name, `could not build its informer: ${(err as Error).message}`, err));
      if (this.#current === undefined) this.#setState('failed');
      return;
    }
    const conn: Connection<T> = { cluster, informer: inf, watching: new Subscription(), events: Subscription.EMPTY, status: undefined };
    place(conn);
    // errors$ first: with a subscriber there, the informer's errors come here rather than to stderr.
    conn.watching.add(inf.errors$.subscribe((err) => this.#error(new ClusterError(this.name, this.#next === conn ? `(new KubeConfig) ${err.message}` : err.message, err))));
    conn.watching.add(inf.status$.subscribe((s) => this.#onStatus(conn, s)));
    this.#subscribe(conn);
  }

  #subscribe(conn: Connection<T>): void {
    conn.events = conn.informer.subscribe({
      next: (event) => this.#onEvent(conn, event),
      error: (err: unknown) => this.#onFailed(conn, err),
    });
  }

  #close(conn: Connection<T>): void {
    conn.events.unsubscribe();
    conn.watching.unsubscribe();
  }

  #closeAll(): void {
    this.#stopClock();
    if (this.#next !== undefined) this.#close(this.#next);
    if (this.#current !== undefined) this.#close(this.#current);
    this.#next = undefined;
    this.#current = undefined;
  }

  #onEvent(conn: Connection<T>, e: InformerEvent<T>): void {
    // A replacement's events stay silent until it takes over; the take-over says what differs.
    if (conn !== this.#current) return;
    // An event is the cluster answering, whether or not the informer's status moved (MC-4).
    this.#reachability?.heard();
    let key: string;
    try {
      key = clusterKey(this.name, conn.informer.store.keyOf(e.obj));
    } catch (err) {
      this.#error(new ClusterError(this.name, `an object could not be keyed: ${(err as Error).message}`, err));
      return;
    }
    if (e.type === 'delete') this.#host.emit({ ...e, cluster: this.name, key, reason: 'deleted' });
    else this.#host.emit({ ...e, cluster: this.name, key });
  }

  #onStatus(conn: Connection<T>, s: InformerStatus): void {
    conn.status = s;
    if (conn === this.#next) {
      if (s.synced) this.#takeOver();
      else this.#host.changed();
      return;
    }
    if (conn !== this.#current) return;
    this.#reachability ??= new Reachability(
      this.#host.scheduler,
      this.#host.unreachableAfterMs,
      () => this.#unreachable(conn),
      () => this.#answered(conn),
    );
    if (this.#reachability.observe(s)) this.#dropped = false;
    // Unreachable until it answers; then syncing until its cache is complete again (after a drop, the relist).
    this.#setState(this.#reachability.unreachable ? 'unreachable' : s.synced ? 'synced' : 'syncing');
    this.#host.changed();
  }

  #onFailed(conn: Connection<T>, err: unknown): void {
    const failure = new ClusterError(this.name, `failed for good (it is retried only when its KubeConfig changes): ${(err as Error)?.message ?? String(err)}`, err);
    if (conn === this.#next) {
      this.#close(conn);
      this.#next = undefined;
      this.#error(failure);
      return;
    }
    if (conn !== this.#current) return;
    const entries = this.#entries();
    this.#stopClock();
    this.#close(conn);
    this.#current = undefined;
    this.#setState('failed');
    this.#error(failure);
    for (const [key, obj] of entries) this.#emitDelete(key, obj, 'cluster-failed');
    // A replacement already listing may still take over.
    if (this.#next?.informer.hasSynced() === true) this.#takeOver();
  }

  /** The cluster answered outside a status change: it is reachable again. */
  #answered(conn: Connection<T>): void {
    if (conn !== this.#current) return;
    this.#dropped = false;
    if (this.#state === 'unreachable') this.#setState(conn.informer.hasSynced() ? 'synced' : 'syncing');
    this.#host.changed();
  }

  /** The current connection has failed for unreachableAfterMs without a watch since (MC-4). */
  #unreachable(conn: Connection<T>): void {
    if (conn !== this.#current) return;
    const cause = this.#lastError?.cause;
    this.#setState('unreachable');
    this.#error(new ClusterError(this.name, `unreachable for ${this.#host.unreachableAfterMs} ms; still retrying${cause instanceof Error ? ` (last error: ${cause.message})` : ''}`, cause));
    if (this.#host.whileUnreachable === 'drop' && !this.#dropped) {
      this.#dropped = true;
      const entries = this.#entries();
      // Unsubscribing empties the informer's cache (and ends its requests); subscribing again lists afresh, with backoff.
      conn.events.unsubscribe();
      for (const [key, obj] of entries) this.#emitDelete(key, obj, 'cluster-unreachable');
      this.#reachability?.restart();
      if (this.#current === conn) this.#subscribe(conn);
    }
    this.#host.changed();
  }

  /** The replacement has synced: it becomes the cluster, and only what differs is announced. */
  #takeOver(): void {
    const next = this.#next;
    if (next === undefined || this.#removed) return;
    const old = this.#current;
    const before = this.#entries();
    this.#next = undefined;
    this.#current = next;
    this.#stopClock();
    this.#dropped = false;
    this.#setState('synced');
    if (old !== undefined) this.#close(old);
    const store = next.informer.store;
    const seen = new Set<string>();
    for (const [key, was] of before) {
      seen.add(key);
      const now = store.getByKey(key);
      const ck = clusterKey(this.name, key);
      if (now === undefined) this.#host.emit({ type: 'delete', obj: new DeletedFinalStateUnknown(key, was), cluster: this.name, key: ck, reason: 'deleted' });
      else if (now.metadata?.uid !== was.metadata?.uid) {
        this.#host.emit({ type: 'delete', obj: new DeletedFinalStateUnknown(key, was), cluster: this.name, key: ck, reason: 'deleted' });
        this.#host.emit({ type: 'add', obj: now, isInInitialList: false, cluster: this.name, key: ck });
      } else if (now.metadata?.resourceVersion !== was.metadata?.resourceVersion) {
        this.#host.emit({ type: 'update', oldObj: was, obj: now, cluster: this.name, key: ck });
      }
    }
    for (const key of store.listKeys()) {
      if (seen.has(key)) continue;
      const obj = store.getByKey(key);
      if (obj !== undefined) this.#host.emit({ type: 'add', obj, isInInitialList: false, cluster: this.name, key: clusterKey(this.name, key) });
    }
    this.#host.changed();
  }

  // ------------------------------------------------------------ helpers

  /** Every object of the cluster now, by its key in the cluster. */
  #entries(): [string, T][] {
    const store = this.store;
    if (store === undefined) return [];
    const out: [string, T][] = [];
    for (const key of store.listKeys()) {
      const obj = store.getByKey(key);
      if (obj !== undefined) out.push([key, obj]);
    }
    return out;
  }

  #emitDelete(key: string, obj: T, reason: ClusterDeleteReason): void {
    this.#host.emit({ type: 'delete', obj, cluster: this.name, key: clusterKey(this.name, key), reason });
  }

  /** The current connection is gone or replaced: its clock stops, a new connection gets its own. */
  #stopClock(): void {
    this.#reachability?.dispose();
    this.#reachability = undefined;
  }

  #setState(state: ClusterState): void {
    this.#state = state;
  }

  #error(err: ClusterError): void {
    this.#lastError = err;
    this.#host.report(err);
  }
}
