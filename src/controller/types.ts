import type { Observable, SchedulerLike } from 'rxjs';
import type { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import type { KubeObject } from '../store/types.js';
import type { CallbackError } from '../errors/CallbackError.js';
import type { OwnerKeysOptions } from '../operators/ownerKeys.js';
import type { Predicate } from '../operators/predicates.js';
import type { LOW_PRIORITY } from '../workqueue/priority.js';
import type { SourceIdentity } from '../sources/types.js';
import type { RateLimiter } from '../workqueue/rateLimiters.js';
import type { ReconcileTimeoutError } from './ReconcileTimeoutError.js';
import type { TerminalError } from './TerminalError.js';

/**
 * What a controller reads: an informer, or anything shaped like one — a
 * stream of changes emitted after its store applied them, the store, and
 * whether the first list is in. `Informer<T>` is one.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource } from 'rxkube';
 * import { type ControllerSource } from 'rxkube/core';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const deployments: ControllerSource<V1Deployment> = informer(kubeSource(kc, 'apps/v1/deployments'));
 * ```
 */
export interface ControllerSource<T> extends Observable<InformerEvent<NoInfer<T>>> {
  /** The cache the stream keeps; reconciles read the primary object from it. */
  readonly store: {
    /** The cached object under `key`, if any. */
    getByKey(key: string): T | undefined;
    /** The key the cache files `obj` (or a tombstone) under. */
    keyOf(obj: NoInfer<T> | DeletedFinalStateUnknown<NoInfer<T>>): string;
    /** The resourceVersion every cached object has reached; with `identity`, lets reconciles wait for this process's writes (RYW-2). @default undefined */
    lastSyncResourceVersion?(): string;
  };
  /** Which cluster, resource and slice of it the cache mirrors, as an informer of `kubeSource` says (RYW-2). @default undefined (never waited for) */
  readonly identity?: SourceIdentity | undefined;
  /** Emits when the cache's resourceVersion moves; a read-your-writes wait listens to it, else looks every 10 ms (RYW-3). @default undefined */
  readonly resourceVersion$?: Observable<string>;
  /** The current status, then each change; reconciles start once every source's `synced` is true (CR-3). An informer's `status$` is one. */
  readonly status$: Observable<{ readonly synced: boolean }>;
  /** For messages. @default 'source' */
  readonly name?: string;
  /**
   * Qualifies every key one of this source's events enqueues (the primary
   * object's own key, an owner's key, a mapped key) with the part of a
   * composite source the event came from, as a multi-cluster controller's
   * sources put the event's cluster in front (LT-4); `store.getByKey` then
   * reads such keys.
   * @default undefined (keys as they are)
   */
  readonly scopeKey?: (key: string, event: InformerEvent<NoInfer<T>>) => string;
}

/**
 * Objects the primary objects own: each change of one enqueues the key of
 * its owner (the owner reference marked `controller: true`, by default),
 * as kube-rs's `Controller::owns` and controller-runtime's `Owns`.
 *
 * ## Example
 * ```ts
 * import { controller, informer, kubeSource } from 'rxkube';
 * import { type OwnsSource } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const owned: OwnsSource = { source: informer(kubeSource(kc, 'v1/configmaps')), kind: 'Deployment', apiVersion: 'apps/v1' };
 * ```
 */
export interface OwnsSource extends OwnerKeysOptions {
  /** The owned objects' informer. */
  readonly source: ControllerSource<KubeObject>;
  /** Only changes that pass these (as `predicateFilter`) enqueue the owner (CR-115). @default [] (every change) */
  readonly predicates?: readonly Predicate<KubeObject>[];
}

/**
 * The primary objects with predicates: only an added object, a deletion,
 * or an update for which a predicate's value changed enqueues the key, as
 * controller-runtime's `For(obj, builder.WithPredicates(...))` (CR-113).
 *
 * ## Example
 * ```ts
 * import { controller, generationChanged, labelsChanged, type Informer, type Reconciler } from 'rxkube';
 * import type { ForSource } from 'rxkube/core';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: Informer<V1Deployment>;
 * declare const reconcile: Reconciler<V1Deployment>;
 *
 * // Status writes (the controller's own among them) do not wake it: spec and label changes do.
 * const primary: ForSource<V1Deployment> = { source: deployments, predicates: [generationChanged, labelsChanged] };
 * controller({ for: primary, reconcile }).subscribe();
 * ```
 */
export interface ForSource<T> {
  /** The primary objects' informer. */
  readonly source: ControllerSource<T>;
  /** Only changes that pass these enqueue the key; deletions always do (CR-113, CR-114). @default [] (every change) */
  readonly predicates?: readonly Predicate<NoInfer<T>>[];
}

/**
 * Any other objects whose changes matter to some primary objects: `map`
 * says which keys (`namespace/name` of primary objects) to reconcile, as
 * kube-rs's `Controller::watches` and controller-runtime's
 * `EnqueueRequestsFromMapFunc`.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource } from 'rxkube';
 * import type { WatchesSource } from 'rxkube/core';
 * import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * declare function deploymentsUsing(secret: V1Secret): string[];
 *
 * // Every deployment in the secret's namespace that mounts it.
 * const secrets: WatchesSource<V1Secret> = {
 *   source: informer(kubeSource(kc, 'v1/secrets')),
 *   map: (secret) => deploymentsUsing(secret),
 * };
 * ```
 */
export interface WatchesSource<O> {
  /** The watched objects' informer. */
  readonly source: ControllerSource<O>;
  /**
   * The primary keys to reconcile when `obj` changes. It is called with the
   * added object, with both the old and the new object of an update, and
   * with the last known state of a deleted one; keys are enqueued once each.
   * `event` is the change `obj` comes from.
   * What it throws is reported and enqueues nothing.
   */
  readonly map: (obj: O, event: InformerEvent<O>) => Iterable<string> | string | undefined | null;
  /** Only changes that pass these (as `predicateFilter`) are mapped (CR-115). @default [] (every change) */
  readonly predicates?: readonly Predicate<O>[];
}

/**
 * What a reconcile asks for when it succeeds: `{ requeueAfter: ms }` to be
 * reconciled again after `ms` milliseconds (0: as soon as it is done), or
 * nothing (`undefined`) to wait for the next change (kube-rs's
 * `Action::requeue` and `Action::await_change`).
 *
 * ## Example
 * ```ts
 * import type { ReconcileAction } from 'rxkube/core';
 *
 * const again: ReconcileAction = { requeueAfter: 60_000 };
 * ```
 */
export type ReconcileAction = { readonly requeueAfter: number } | undefined | void;

/**
 * What the error policy decides for a failed reconcile: `'backoff'` requeues
 * after the rate limiter's delay (per-key exponential backoff), `{
 * requeueAfter: ms }` after a fixed delay, nothing drops the key until its
 * next change.
 *
 * ## Example
 * ```ts
 * import type { ErrorAction } from 'rxkube/core';
 *
 * const later: ErrorAction = { requeueAfter: 5_000 };
 * ```
 */
export type ErrorAction = ReconcileAction | 'backoff';

/**
 * What a reconcile is given beside the object.
 *
 * ## Example
 * ```ts
 * import type { ReconcileContext } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare function writeSomething(d: V1Deployment, opts: { signal: AbortSignal }): Promise<void>;
 *
 * async function reconcile(d: V1Deployment, ctx: ReconcileContext<V1Deployment>) {
 *   if (ctx.retries > 3) console.warn(`${ctx.key} failed ${ctx.retries} times in a row`);
 *   await writeSomething(d, { signal: ctx.signal });
 * }
 * ```
 */
export interface ReconcileContext<T> {
  /** The object's store key, `namespace/name`. */
  readonly key: string;
  /**
   * Aborts when the controller gives up waiting at shutdown
   * (`shutdownTimeoutMs`), at once when the runner lost its lease, or, with `reconcileTimeoutMs`, when this
   * reconcile has run that long (the reason is then a
   * {@link ReconcileTimeoutError}); pass it to requests.
   */
  readonly signal: AbortSignal;
  /** How many times in a row this key has failed and been retried with backoff. */
  readonly retries: number;
  /** The primary objects' store, to read anything else you need. */
  readonly store: ControllerSource<T>['store'];
}

/**
 * A reconcile function: brings the world in line with `obj`, read from the
 * primary store. Throw or reject to have it retried through the error
 * policy (a {@link TerminalError} is not retried); return `{ requeueAfter }`
 * to run again later. `obj` is the cached object itself, deep-frozen: copy
 * it (`structuredClone(obj)`) to change it.
 *
 * ## Example
 * ```ts
 * import type { Reconciler } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare function syncDependents(d: V1Deployment, signal: AbortSignal): Promise<void>;
 *
 * const reconcile: Reconciler<V1Deployment> = async (d, ctx) => {
 *   await syncDependents(d, ctx.signal);
 *   return { requeueAfter: 600_000 };
 * };
 * ```
 */
export type Reconciler<T> = (obj: T, ctx: ReconcileContext<T>) => ReconcileAction | Promise<ReconcileAction>;

/**
 * Decides what happens to a key whose reconcile failed (kube-rs's
 * `error_policy`). What it throws is reported and the key backs off.
 *
 * ## Example
 * ```ts
 * import { isConflict } from 'rxkube';
 * import { type ErrorPolicy } from 'rxkube/core';
 *
 * // A conflict is retried at once; anything else backs off.
 * const errorPolicy: ErrorPolicy<unknown> = (err) => (isConflict(err.cause ?? err) ? { requeueAfter: 0 } : 'backoff');
 * ```
 */
export type ErrorPolicy<T> = (error: Error, obj: T, ctx: ReconcileContext<T>) => ErrorAction;

/**
 * One reconcile's outcome, as the controller emits them.
 * - `reconciled`: `reconcile` returned; `requeueAfter` is the delay it asked
 *   for, if any.
 * - `failed`: it threw or rejected (or returned an invalid action, or ran
 *   longer than `reconcileTimeoutMs`); `requeueAfter` is the delay the
 *   error policy chose, if any; `terminal` says it threw a
 *   {@link TerminalError} and is not retried until it changes.
 * - `gone`: the key's object is no longer in the store, so nothing was
 *   called (kube-rs does not reconcile deleted objects; use a finalizer to
 *   act on deletion).
 *
 * ## Example
 * ```ts
 * import { controller, type Informer, type ReconcileOutcome, type Reconciler } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: Informer<V1Deployment>;
 * declare const reconcile: Reconciler<V1Deployment>;
 *
 * controller({ for: deployments, reconcile }).subscribe((o: ReconcileOutcome<unknown>) => {
 *   if (o.type === 'failed') console.warn(`${o.key}: ${o.error.message}`);
 * });
 * ```
 */
export type ReconcileOutcome<T> =
  | {
      readonly type: 'reconciled';
      readonly key: string;
      readonly obj: T;
      readonly requeueAfter: number | undefined;
      /** Milliseconds on the controller's clock. */
      readonly durationMs: number;
    }
  | {
      readonly type: 'failed';
      readonly key: string;
      readonly obj: T;
      readonly error: Error;
      readonly requeueAfter: number | undefined;
      readonly durationMs: number;
      /** Failures in a row of this key, this one included (0 after a terminal failure, which forgets them). */
      readonly retries: number;
      /** Whether it failed for good (a {@link TerminalError}): not requeued until the object changes. */
      readonly terminal: boolean;
    }
  | { readonly type: 'gone'; readonly key: string };

/**
 * Options of {@link controller}.
 *
 * ## Example
 * ```ts
 * import { controller, type ControllerOptions, type Informer, type Reconciler } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: Informer<V1Deployment>;
 * declare const reconcile: Reconciler<V1Deployment>;
 *
 * const opts: ControllerOptions<V1Deployment> = { for: deployments, reconcile, concurrency: 4, shutdownTimeoutMs: 10_000 };
 * controller(opts).subscribe();
 * ```
 */
export interface ControllerOptions<T> {
  /**
   * The primary objects: each change enqueues the object's key, and reconciles read it from this store.
   * `{ source, predicates }` enqueues only the changes the predicates pass (CR-113). Required.
   */
  readonly for: ControllerSource<T> | ForSource<T>;
  /** Objects owned by the primary objects; a change enqueues the owner's key. @default [] */
  readonly owns?: readonly OwnsSource[];
  /**
   * Other objects, mapped to primary keys by a function. Each entry may
   * watch a different type; annotate the mapper's parameter to type it.
   * @default []
   */
  readonly watches?: readonly WatchesSource<any>[];
  /** Brings the world in line with one primary object. Required. */
  readonly reconcile: Reconciler<T>;
  /**
   * What happens after a failed reconcile.
   * @default () => 'backoff' (the rate limiter's per-key exponential backoff; a success forgets the key's failures)
   */
  readonly errorPolicy?: ErrorPolicy<T>;
  /** Reconciles running at once; never two for the same key. @default 1 */
  readonly concurrency?: number;
  /**
   * Every object is reconciled again at the latest this many ms after its
   * last reconcile, whatever it returned (a periodic resync); 0 never.
   * @default 0
   */
  readonly resyncPeriod?: number;
  /**
   * How long shutdown waits for reconciles in flight before it aborts their
   * signal and stops anyway.
   * @default 30_000
   */
  readonly shutdownTimeoutMs?: number;
  /**
   * How long one reconcile may run (controller-runtime's
   * `ReconciliationTimeout`): then its `ctx.signal` aborts with a
   * {@link ReconcileTimeoutError} and it counts as failed at once (outcome,
   * metrics, error policy), even if it ignores the signal. The key is not
   * handed out again until that reconcile returns, and is listed in
   * `status().stuck` meanwhile. A number of ms >= 1.
   * @default undefined (no timeout)
   */
  readonly reconcileTimeoutMs?: number;
  /**
   * Live changes before backlog (controller-runtime's priority queue): keys
   * from initial lists and resyncs (an update whose resourceVersion did not
   * change), and the `resyncPeriod` requeue, go in at {@link LOW_PRIORITY};
   * live changes at 0; requeues and backoff keep the priority the key had.
   * So a change made while thousands of listed objects wait is reconciled
   * next, not after them. `false` makes every key equal (client-go's FIFO).
   * @default true
   */
  readonly priorityQueue?: boolean;
  /**
   * Shares the workers fairly between groups of keys (tenants, namespaces,
   * clusters): keys are grouped by what this returns, and while several
   * groups have keys waiting, the workers take from them in turn, each
   * group's most urgent key first, so one group's backlog never starves the
   * others (docs/semantics.md LT-1…LT-3). What it throws is reported and the
   * key waits in the group `''`. `status().groups` breaks the queue and
   * the reconciles down by group.
   * @default undefined (one line for every key)
   */
  readonly fairBy?: (key: string) => string;
  /** Stops the controller for good, gracefully, when it aborts; the outcomes then complete. @default undefined */
  readonly signal?: AbortSignal;
  /**
   * The delays of `'backoff'`.
   * @default defaultControllerRateLimiter({ scheduler }): 5 ms doubling per failure up to 1000 s, and 10 qps overall with a burst of 100
   */
  readonly rateLimiter?: RateLimiter<string>;
  /** Clock and timers (requeues, backoff, shutdown timeout); a VirtualTimeScheduler makes them virtual. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /**
   * Receives the controller's own errors (a mapper or error policy that
   * threw, a shutdown that timed out, an `owns` entry that matches no owner
   * reference). When absent they go to `errors$` subscribers, else to
   * `reportError`. Reconcile failures are outcomes; they come here too
   * (as {@link CallbackError}s, the first failure of a key at once, then at
   * most one per key per minute with a count) when nobody consumes the
   * outcomes — every subscriber subscribed without a `next` callback, as in
   * `c.subscribe()` — and always when terminal.
   * @default undefined (errors$ subscribers, else reportError)
   */
  readonly onError?: (err: Error) => void;
  /** For messages and the work queue's metrics. @default the primary source's name */
  readonly name?: string;
  /** Before reading an object, wait until the caches show this process's writes through `objectClient` (RYW-1); false turns it off. @default true */
  readonly readYourWrites?: boolean;
  /** How long that wait may last before the reconcile reads the cache anyway and the lag is reported (RYW-6). @default 5_000 */
  readonly readYourWritesTimeoutMs?: number;
}
