/**
 * One informer as the command watches it: the informer itself over a source
 * that counts list pages as they arrive, and the running figures the views
 * show (event rate, recent changes, sync time, list progress, errors).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { informer, type FifoMode, type Informer, type InformerStatus } from '../informer/index.js';
import type { ReflectorStatus } from '../reflector/index.js';
import { kubeSource, type ListerWatcher } from '../sources/index.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import { deletionHandlingMetaNamespaceKey, unwrapTombstone } from '../store/index.js';
import type { KubeObject } from '../store/types.js';
import type { CliResource } from './resources.js';
import { syncedOf } from '../informer/syncedOf.js';

/** What to watch. */
export interface SessionOptions {
  readonly kc: KubeConfig;
  readonly resource: CliResource;
  /** undefined for every namespace. */
  readonly namespace: string | undefined;
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
  /** Short backoff for the simulator, so recoveries are quick to watch. */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** The informer's queue. @default 'perKey' */
  readonly fifo?: FifoMode;
}

/** The last change seen for a key, for the table's LAST column and its order. */
export interface RecentChange {
  readonly type: InformerEvent<KubeObject>['type'];
  readonly at: number;
  /** The object, kept for deleted ones so they can be shown a little longer. */
  readonly obj: KubeObject;
}

/** How far the current list has got. */
export interface ListProgress {
  readonly pages: number;
  readonly objects: number;
  readonly startedAt: number;
}

/** How long per-second rates are averaged over. */
const RATE_WINDOW_S = 10;
/** How long deleted objects stay in the table. */
export const DELETED_SHOWN_MS = 5_000;

/** The informer and its figures; `start()` subscribes, `stop()` unsubscribes and so closes every request. */
export class WatchSession {
  readonly informer: Informer<KubeObject>;
  readonly resource: CliResource;
  readonly namespace: string | undefined;
  readonly startedAt = Date.now();
  adds = 0;
  updates = 0;
  deletes = 0;
  errors = 0;
  lastError: Error | undefined;
  /** ms from start to the first sync, once synced. */
  syncedAfterMs: number | undefined;
  status: InformerStatus | undefined;
  /** The current (or last) list cycle, counted page by page. */
  list: ListProgress | undefined;
  /** Per key, the last change; deleted keys are dropped after {@link DELETED_SHOWN_MS}. */
  readonly recent = new Map<string, RecentChange>();
  // Events per second over the last RATE_WINDOW_S seconds, as a ring of per-second buckets.
  readonly #buckets = new Array<number>(RATE_WINDOW_S).fill(0);
  #bucketSecond = Math.floor(Date.now() / 1000);
  // The subscriptions that keep the informer running; unsubscribing them stops it.
  readonly #subscriptions: Subscription[] = [];

  /**
   * Builds the source and informer; nothing is requested until `start()`.
   * Throws at once for a bad selector, namespace or server URL.
   *
   * @param opts what to watch.
   */
  constructor(opts: SessionOptions) {
    this.resource = opts.resource;
    this.namespace = opts.namespace;
    const { namespace, labelSelector, fieldSelector } = opts;
    const source = kubeSource(opts.kc, opts.resource.ref as 'v1/pods', { namespace, labelSelector, fieldSelector });
    // Each list() call is one page: counting them shows a large list's progress before the store is filled.
    const counted: ListerWatcher<KubeObject> = {
      supportsWatchList: source.supportsWatchList,
      list: async (listOpts, signal) => {
        if (listOpts.continue === undefined || listOpts.continue === '') this.list = { pages: 0, objects: 0, startedAt: Date.now() };
        const page = await source.list(listOpts, signal);
        if (this.list !== undefined) this.list = { ...this.list, pages: this.list.pages + 1, objects: this.list.objects + page.items.length };
        return page;
      },
      watch: (watchOpts, signal) => source.watch(watchOpts, signal),
      watchBatches: (watchOpts, signal) => source.watchBatches(watchOpts, signal),
    };
    this.informer = informer<KubeObject>(counted, {
      name: `${opts.resource.ref}${opts.namespace === undefined ? '' : ` in ${opts.namespace}`}`,
      ...(opts.backoff === undefined ? {} : { reflector: { backoff: opts.backoff } }),
      ...(opts.fifo === undefined ? {} : { fifo: opts.fifo }),
    });
  }

  /** The reflector's last status. */
  get reflector(): ReflectorStatus | undefined {
    return this.status?.reflector;
  }

  /** Watch requests after the first: each is a reconnect. */
  get reconnects(): number {
    return Math.max(0, (this.reflector?.counters.watches ?? 0) - 1);
  }

  /**
   * Live events per second (the initial list left out), averaged over the
   * last ten seconds, or since the first sync when that is shorter; 0 until
   * then. The adds of a large initial list would otherwise read as a burst
   * of changes for the first ten seconds.
   */
  rate(now = Date.now()): number {
    this.#roll(now);
    if (this.syncedAfterMs === undefined) return 0;
    const elapsed = Math.min(RATE_WINDOW_S, Math.max(1, (now - this.startedAt - this.syncedAfterMs) / 1000));
    return this.#buckets.reduce((a, b) => a + b, 0) / elapsed;
  }

  /**
   * Subscribes: list and watch begin.
   *
   * @param onEvent called after each event was counted.
   * @param onError called with each error the informer survived, and with the one that ended it (`fatal`).
   */
  start(onEvent: (e: InformerEvent<KubeObject>) => void, onError: (err: Error, fatal: boolean) => void): void {
    this.#subscriptions.push(
      this.informer.status$.subscribe((s) => (this.status = s)),
      this.informer.errors$.subscribe((err) => {
        this.errors++;
        this.lastError = err;
        onError(err, false);
      }),
      syncedOf(this.informer).subscribe((synced) => {
        if (synced && this.syncedAfterMs === undefined) this.syncedAfterMs = Date.now() - this.startedAt;
      }),
      this.informer.subscribe({
        next: (e) => {
          this.#count(e);
          onEvent(e);
        },
        error: (err: unknown) => onError(err instanceof Error ? err : new Error(String(err)), true),
      }),
    );
  }

  /** Unsubscribes everything: the informer stops and its sockets close. */
  stop(): void {
    for (const s of this.#subscriptions.splice(0)) s.unsubscribe();
  }

  /** Forgets deleted objects shown long enough. */
  prune(now = Date.now()): void {
    for (const [key, change] of this.recent) if (change.type === 'delete' && now - change.at > DELETED_SHOWN_MS) this.recent.delete(key);
  }

  #count(e: InformerEvent<KubeObject>): void {
    const now = Date.now();
    if (e.type === 'add') this.adds++;
    else if (e.type === 'update') this.updates++;
    else this.deletes++;
    // The initial list is not news: only live changes count in the rate and go to the top of the table.
    if (e.type === 'add' && e.isInInitialList) return;
    this.#roll(now);
    this.#buckets[this.#bucketSecond % RATE_WINDOW_S] = (this.#buckets[this.#bucketSecond % RATE_WINDOW_S] ?? 0) + 1;
    const key = deletionHandlingMetaNamespaceKey(e.obj);
    const obj = unwrapTombstone(e.obj);
    // A tombstone without a last state has nothing to show.
    if (obj === undefined) this.recent.delete(key);
    else {
      // Re-inserted so the Map's order is the order of changes: two in the same millisecond keep theirs.
      this.recent.delete(key);
      this.recent.set(key, { type: e.type, at: now, obj });
    }
  }

  #roll(now: number): void {
    const second = Math.floor(now / 1000);
    for (let s = this.#bucketSecond + 1; s <= second && s <= this.#bucketSecond + RATE_WINDOW_S; s++) this.#buckets[s % RATE_WINDOW_S] = 0;
    if (second > this.#bucketSecond) this.#bucketSecond = second;
  }
}
