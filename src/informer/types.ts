// The informer's public types, apart from the implementation (SharedInformer) and the informer() function, so that
// both import them and neither imports the other.

import type { Observable, SchedulerLike } from 'rxjs';
import type { ReadonlyIndexer } from '../store/indexer.js';
import type { Indexers, KeyFunc } from '../store/types.js';
import type { ReflectOptions, ReflectorCounters, ReflectorStatus } from '../reflector/types.js';
import type { SourceIdentity } from '../sources/types.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import type { EventHandler, HandlerOptions, Registration } from './registration.js';

export type { InformerEvent } from '../operators/informerEvent.js';

/**
 * The queue an informer uses between its watch and its store: `'perKey'`
 * (client-go's DeltaFIFO, the default) or `'ordered'` (client-go 1.36's
 * in-order queue with atomic relists). See `InformerOptions.fifo`.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource, type FifoMode } from 'rxkube';
 * import { KubeConfig } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const fifo: FifoMode = 'ordered';
 * const pods = informer(kubeSource(kc, 'v1/pods'), { fifo });
 * ```
 */
export type FifoMode = 'perKey' | 'ordered';

/** Options of {@link informer}. */
export interface InformerOptions<T> {
  /**
   * Extra indexes on the store, `name → obj => values`. A `namespace` index
   * (by `metadata.namespace`) is always there, as in client-go's informers.
   * More can be added while running with `store.addIndexers`.
   * @default { namespace: byNamespace }
   */
  readonly indexers?: Indexers<T>;
  /**
   * Runs once per object before it is queued, e.g. to drop fields the
   * controller never reads. Must return the object to keep (it may be the
   * same object, changed in place); what it throws is reported and that
   * object is skipped. Runs after `stripManagedFields`.
   * @default undefined
   */
  readonly transform?: (obj: T) => T;
  /**
   * Drop `metadata.managedFields` before caching. Server-side-apply
   * bookkeeping is often a third of an object's size and controllers
   * rarely read it; set false to keep it.
   * @default true
   */
  readonly stripManagedFields?: boolean;
  /**
   * Default resync period of handlers, in ms; 0 disables resync. A handler's
   * own `resyncPeriod` overrides it.
   * @default 0
   */
  readonly resyncPeriod?: number;
  /**
   * How long the cache may stay behind the server (from the first backoff or relist
   * after it was current until the next watch event, bookmark or completed
   * list) before `status().lagging` turns true, in ms (HI-58). Longer than a
   * backoff at its cap (30 s, up to 60 s with jitter) and than kube-apiserver's
   * bookmark interval (1 minute), so one unlucky wait after an outage, or a
   * quiet resource re-watched after a fault, is not taken for lag.
   * @default 120_000
   */
  readonly maxLagMs?: number;
  /** `'paged'` LIST or `'stream'` (a watch with `sendInitialEvents`, falling back to LIST). @default 'paged' */
  readonly initialList?: 'paged' | 'stream';
  /**
   * How events travel from the watch to the store and the handlers:
   * - `'perKey'`: client-go's classic DeltaFIFO. Pending events are grouped
   *   per key and each key keeps its place in line; a relist reaches the
   *   store page by page, so it never holds a whole list beside the cache.
   * - `'ordered'`: client-go 1.36's in-order, atomic-relist queue (RealFIFO
   *   with AtomicFIFO). Events are handled one by one in the order the server
   *   sent them, across keys; a relist is held whole and applied to the store
   *   in one step before any handler hears of it, so a handler reading the
   *   store sees the old list or the new one, never a mix. It costs a whole
   *   list's memory beside the cache during a relist (docs/semantics.md, PF-20).
   * @default 'perKey'
   */
  readonly fifo?: FifoMode;
  /** Deep-freeze cached objects so no handler can corrupt the cache. @default true */
  readonly freeze?: boolean;
  /** Store key function. @default metaNamespaceKey */
  readonly keyFunc?: KeyFunc<T>;
  /** Scheduler for timers (resync, backoff, handler slow-down); a TestScheduler makes them virtual. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** Passed through to the reflector (page size, backoff, watch timeouts, terminal errors). @default {} */
  readonly reflector?: Omit<ReflectOptions, 'resyncPeriod' | 'initialList' | 'listDelivery' | 'stripManagedFields' | 'cached' | 'scheduler' | 'status'>;
  /**
   * Receives every error the informer meets. When absent, errors go to the
   * subscribers of `errors$`, and when nobody subscribes there, to a
   * rate-limited line on stderr: no failure is silent. Pass `() => {}` to
   * silence them.
   * @default undefined (errors$ subscribers, else stderr)
   */
  readonly onError?: (err: Error) => void;
  /** A name for messages and status (`v1/pods in default`). @default the source's resource name, else 'informer' */
  readonly name?: string;
}

/** A handler's state as shown on `status$`. */
export interface HandlerStatus {
  readonly id: number;
  readonly depth: number;
  readonly processed: number;
  readonly synced: boolean;
}

/**
 * What an informer is doing, as emitted on `status$` and returned by
 * `status()`: `idle` before its first subscriber and after its last one
 * left, `running` in between, `failed` after an error nothing can heal. It
 * is also what `rxkube/metrics` exports (the Prometheus names are in
 * brackets, each with the label `resource="<name>"`): the counters cover
 * the informer's whole life, so a lifetime that ended keeps its counts and
 * they only grow, as Prometheus counters must.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource, type InformerStatus } from 'rxkube';
 * import { KubeConfig } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const pods = informer(kubeSource(kc, 'v1/pods'));
 * const s: InformerStatus = pods.status();
 * console.log(`${s.objects} cached, synced: ${s.synced}, ${s.counters.relists} relists, ${s.errors} errors`);
 * ```
 */
export interface InformerStatus {
  readonly state: 'idle' | 'running' | 'failed';
  /**
   * The first list of the current lifetime has been applied, and the informer has not failed: a failed
   * informer's cache is frozen for good, so it is not synced even if it was (LT-89) [rxkube_informer_synced].
   */
  readonly synced: boolean;
  /** The reflector's last status, once it has one. */
  readonly reflector: ReflectorStatus | undefined;
  /** Each handler registration; their `depth`s sum to [rxkube_informer_pending_notifications]. */
  readonly handlers: readonly HandlerStatus[];
  /** Errors met so far, everything sent on `errors$` [rxkube_informer_errors_total]. */
  readonly errors: number;
  /** Objects in the cache [rxkube_informer_objects]; as of the emission on `status$`, current from `status()` (LT-90). */
  readonly objects: number;
  /**
   * The reflector's counters over every lifetime [rxkube_informer_lists_total, _relists_total{reason},
   * _watches_total, _retries_total{reason}, _events_total, _decode_errors_total]; as of the emission on `status$`,
   * current from `status()` (LT-90).
   */
  readonly counters: ReflectorCounters;
  /**
   * The resourceVersion the informer would resume a watch from: the last list's, moved on by each event and bookmark
   * (client-go's LastSyncResourceVersion); `''` while idle [rxkube_informer_last_sync_resource_version, when numeric].
   * As of the emission on `status$`, current from `status()` (LT-90).
   */
  readonly lastSyncResourceVersion: string;
  /** The most recent of them. */
  readonly lastError: Error | undefined;
  /**
   * When the cache was last shown current with the server, in ms on the
   * informer's scheduler clock: a watch event or bookmark applied, or a list
   * completed (HI-57); undefined until the first list of this lifetime. A
   * watch that went silent while the reflector still says `watching` leaves
   * it standing still, which is what a liveness probe reads (MG-5). As of the
   * emission on `status$`; current from `status()`.
   */
  readonly currentAt: number | undefined;
  /**
   * When the cache fell behind: the first wait or relist after a failure
   * since it was last current; undefined while it is current. The
   * next watch event, bookmark or completed list ends the spell (HI-58).
   */
  readonly behindSince: number | undefined;
  /**
   * The cache has been behind for `maxLagMs` or more: the server is not
   * answering, or the informer cannot keep up with it. `/healthz` fails on it
   * (HI-58). `status$` emits when it turns true.
   */
  readonly lagging: boolean;
}

/** Options of {@link Informer.whenSynced}. */
export interface WhenSyncedOptions {
  /** Give up after this many ms, rejecting with the last error as `cause`. @default no limit */
  readonly timeout?: number;
  /** Give up when this aborts. @default undefined */
  readonly signal?: AbortSignal;
}

/** The informer's cache: read-only, except that indexes can be added at any time. */
export interface InformerStore<T> extends ReadonlyIndexer<T> {
  /** Adds index functions; objects already cached are indexed at once. Throws `IndexConflictError` for a taken name. */
  addIndexers(indexers: Indexers<T>): void;
}

/**
 * A live, indexed cache of one resource that is also the stream of its
 * changes: an `Observable<InformerEvent<T>>` whose subscriptions are its
 * lifetime. Starting is subscribing (a handler registration is a
 * subscription too), waiting is `whenSynced`, stopping is unsubscribing: the
 * first subscriber starts list and watch; each later one first gets the
 * cached objects as adds marked `isInInitialList`, then live events; when
 * the last one leaves, requests and timers end and the cache is emptied. An
 * error nothing can heal (400, 422) ends every subscription with that error.
 */
export interface Informer<T> extends Observable<InformerEvent<T>> {
  /** What the informer reads, for messages (`v1/pods in default`). */
  readonly name: string;
  /**
   * The source's {@link SourceIdentity} (cluster, resource, namespace and
   * selectors), when it has one, as `kubeSource` does: a controller matches
   * it with its own writes (RYW-2).
   */
  readonly identity: SourceIdentity | undefined;
  /**
   * The cache; empty while idle. Its `lastSyncResourceVersion()` is the
   * resourceVersion every cached object is at least as new as: that of the
   * last watch event, bookmark or complete list applied (S-40).
   */
  readonly store: InformerStore<T>;
  /**
   * The store's `lastSyncResourceVersion()` each time an event, bookmark or
   * list page has been applied (hot, no replay): what a read-your-writes
   * wait listens to (RYW-3).
   */
  readonly resourceVersion$: Observable<string>;
  /**
   * The status at each change of state, sync, reflector status, handlers (joining, leaving, a backlog
   * crossing 64, 128, …) and errors, and when `lagging` turns true. Watch events alone do not make it emit,
   * so a status from here holds `objects`, `counters`, `lastSyncResourceVersion` and `currentAt` as of
   * its emission; `status()` has them now (LT-90). Completes once the informer failed and its handler
   * calls in progress finished (LT-87).
   */
  readonly status$: Observable<InformerStatus>;
  /** The status now, with `currentAt`, `lagging`, `objects` and the counters current (they move with every watch event and the clock, which `status$` does not emit for). */
  status(): InformerStatus;
  /**
   * Every error the informer met: reflector faults, decode, transform, store and handler errors. Completes
   * once the informer failed and its handler calls in progress finished, so what they throw is still here (LT-87).
   */
  readonly errors$: Observable<Error>;
  /**
   * Resolves once synced. Rejects with a `CacheSyncError` whose `cause` is
   * the last error met when the timeout passes, the signal aborts, the
   * informer goes idle, or it is not running at all (nobody subscribed);
   * and once it has failed, whether or not it had synced (LT-89).
   */
  whenSynced(opts?: WhenSyncedOptions): Promise<void>;
  /**
   * Adds a handler with its own buffer (client-go's AddEventHandler). The
   * registration is a subscription: it starts the informer if idle, first
   * delivers an add for every cached object, and `unsubscribe()` ends it.
   * Throws the informer's failure if it has failed (S-35).
   */
  addHandler(handler: EventHandler<T>, opts?: HandlerOptions): Registration;
}
