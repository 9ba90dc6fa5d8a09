import type { Observer, SchedulerLike } from 'rxjs';
import type { CachedLookup } from '../sources/cachedParts.js';
import type { BackoffOptions } from './backoff.js';
import type { StallOptions } from './watchRhythm.js';

/**
 * What reflect() emits: server facts in the order they were learned.
 * `Replace` follows every (re)list with the complete set of objects. With
 * `listDelivery: 'pages'` a paged list arrives instead as it downloads: a
 * `ReplacePage` per LIST page, then one `ReplaceEnd`. `first` marks a page
 * that starts a list (a new list, or one started over when its continue
 * token expired): what earlier pages listed no longer counts. At
 * `ReplaceEnd` every key not listed since the last `first` page is gone. A
 * list that fails part-way emits no `ReplaceEnd`; its pages were true
 * states of the server, and the next list starts with a `first` page.
 */
export type ReflectorEvent<T> =
  | { readonly type: 'Replace'; readonly items: readonly T[]; readonly resourceVersion: string }
  | { readonly type: 'ReplacePage'; readonly items: readonly T[]; readonly first: boolean }
  | { readonly type: 'ReplaceEnd'; readonly resourceVersion: string }
  | { readonly type: 'Added'; readonly obj: T; readonly resourceVersion: string }
  | { readonly type: 'Modified'; readonly obj: T; readonly resourceVersion: string }
  | { readonly type: 'Deleted'; readonly obj: T; readonly resourceVersion: string }
  | { readonly type: 'Bookmark'; readonly resourceVersion: string }
  | { readonly type: 'Resync' };

/** Running totals of what one reflect() subscription has done. */
export interface ReflectorCounters {
  /** LIST cycles started (paged or streaming), the first one included. */
  readonly lists: number;
  /** WATCH requests opened (streaming lists included). */
  readonly watches: number;
  /** LIST cycles after the first one. */
  readonly relists: number;
  /** Watch events received (ADDED, MODIFIED, DELETED, BOOKMARK), initial streamed events included. */
  readonly events: number;
  /** Watch lines or objects that could not be decoded. */
  readonly decodeErrors: number;
  /** Every error reported, decode errors included. */
  readonly errors: number;
  /**
   * LIST cycles after the first, by what led to each: a {@link RelistReason} when a watch ended in a way only a
   * relist mends, `'list-failed'` when the list before it failed. They add up to `relists`.
   */
  readonly relistsByReason: Readonly<Record<RelistReason | 'list-failed', number>>;
  /** Failures followed by a new request (a list or a watch, at once or after a wait), by kind. */
  readonly retriesByKind: Readonly<Record<RetryKind, number>>;
}

/** Why reflect() is about to list again. */
export type RelistReason = 'expired' | 'very-short-watch' | 'watch-failed';

/**
 * The kind of failure a retry follows; each kind a new request fixes has its own backoff, which grows only while
 * that kind repeats. `'server'` and `'throttled'` share client-go's backoff.
 * - `'watch-closed'`: the server closed a watch early (before its timeout, and before 30 s);
 * - `'very-short-watch'`: a watch closed within a second without any event (a `VeryShortWatchError`);
 * - `'expired'`: 410 Expired / Gone; a relist (or a streaming list from "now") follows;
 * - `'decode'`: a line or body that would not parse;
 * - `'stalled'`: a watch went silent ({@link WatchStalledError}, or the source's idle timeout);
 * - `'initial-events-incomplete'`: a streaming list ended before its end bookmark, or ran past its timeout without it;
 * - `'throttled'`: 429 (exactly `Retry-After` when the server gave it);
 * - `'server'`: 5xx, refused or reset connections, 401/403/404 and anything else.
 */
export type RetryKind =
  | 'watch-closed'
  | 'very-short-watch'
  | 'expired'
  | 'decode'
  | 'stalled'
  | 'initial-events-incomplete'
  | 'throttled'
  | 'server';

/** What reflect() is doing now. */
export type ReflectorState =
  | { readonly state: 'listing'; readonly mode: 'paged' | 'stream' }
  | { readonly state: 'watching'; readonly resourceVersion: string }
  /** Waiting before the next request; `error` is undefined after a watch the server closed early without one. */
  | { readonly state: 'backoff'; readonly error: unknown; readonly delayMs: number; readonly kind: RetryKind }
  | { readonly state: 'relisting'; readonly reason: RelistReason; readonly error: unknown }
  /** An error was met; the next status says what reflect() does about it (unless it was terminal). */
  | { readonly state: 'error'; readonly error: unknown; readonly terminal: boolean };

/**
 * A running reflect() subscription read at any moment rather than at its status reports, which come only when
 * the state changes (internal: the informer's metrics read it when scraped).
 */
export interface ReflectorProbe {
  /** The counters now. */
  counters(): ReflectorCounters;
  /** The resourceVersion the reflector would resume from now; `''` before the first list. */
  readonly lastSyncResourceVersion: string;
  /**
   * Changes the period of `Resync` ticks from now on (the informer lowers it when a handler asks for a shorter
   * one while running, S-11); a running ticker restarts at the new period, and 0 stops it.
   */
  setResyncPeriod(ms: number): void;
}

/** One status report: the state, and the counters at that moment. */
export type ReflectorStatus = ReflectorState & { readonly counters: ReflectorCounters };

/** Options of {@link reflect}. */
export interface ReflectOptions {
  /**
   * Emit `{ type: 'Resync' }` every this many milliseconds while watching; 0 turns resync off.
   * @default 0
   */
  readonly resyncPeriod?: number;
  /**
   * How the initial state (and every relist) is fetched: `'paged'` LIST with limit/continue, or `'stream'`
   * (a watch with `sendInitialEvents=true`), which falls back to paged lists when the server rejects it.
   * @default 'paged'
   */
  readonly initialList?: 'paged' | 'stream';
  /**
   * How a paged list reaches the stream: `'whole'`, one `Replace` once every page is in, or `'pages'`, a
   * `ReplacePage` per page as it arrives (the next page already downloading) and a `ReplaceEnd` when the list is
   * complete, so a consumer applies a list while it downloads and never holds it whole (`deltaFifo` and the informer
   * do). A streaming list (`initialList: 'stream'`) always ends in one `Replace`.
   * @default 'whole'
   */
  readonly listDelivery?: 'whole' | 'pages';
  /**
   * Ask the source to leave each object's `metadata.managedFields` out as it decodes it, without parsing it (a hint
   * passed with every list and watch request; `kubeSource` honours it, other sources may not, so a consumer that must
   * not see the field still removes it). The informer sets it when `stripManagedFields` is on.
   * @default false
   */
  readonly stripManagedFields?: boolean;
  /**
   * The object the consumer's cache holds under a namespace and name, deeply frozen: a hint passed with every watch
   * request, so that a MODIFIED event's unchanged members are taken from the cached object instead of parsed
   * (`kubeSource` honours it; docs/semantics.md PF-50). The informer does not set it yet.
   * @default none
   */
  readonly cached?: CachedLookup;
  /**
   * Items per LIST page; 0 asks for everything in one response. When set, it applies to every list, relists at a
   * pinned resourceVersion included (client-go's `WatchListPageSize`). Left unset, 500 is used, except that a relist
   * at a specific resourceVersion is made unpaged so the server can answer it from its watch cache.
   * @default 500
   */
  readonly pageSize?: number;
  /**
   * Retry delays on failures.
   * @default { initialMs: 800, factor: 2, maxMs: 30_000, jitter: 1.0, resetAfterMs: 120_000 }
   */
  readonly backoff?: Partial<BackoffOptions>;
  /**
   * Each watch asks the server to end it after a random time in [min, 2·min) seconds, spreading reconnects.
   * Unlike client-go, which ignores values under 5 minutes, any value from 1 second is kept: tests and simulators
   * want short watches, and some proxies cut long requests; the cost is more watch requests, which the caller chose.
   * @default 300
   */
  readonly minWatchTimeoutSeconds?: number;
  /**
   * Stall detection by rhythm: once a watch's events and bookmarks have arrived at a steady rhythm, a silence of
   * `missedBeats` times the longest recent interval (never under `minMs`) aborts the watch, reports a
   * {@link WatchStalledError} and re-watches from the last resourceVersion at once. Until a rhythm is known (it is
   * learnt over twice the deadline), only the source's own idle timeout applies. `false` turns it off.
   * @default { missedBeats: 4, minMs: 5000 }
   */
  readonly stallDetection?: Partial<StallOptions> | false;
  /**
   * Scheduler for every timer (backoff, Retry-After, resync) and for the clock; a virtual-time scheduler in tests.
   * @default asyncScheduler
   */
  readonly scheduler?: SchedulerLike;
  /**
   * Called with every error; return true to make it final: the observable then errors with it instead of retrying
   * (e.g. `isForbidden`). When given, it replaces the default classification entirely:
   * return true for 400/422 too if those should stay final. What the callback throws is reported and treated as
   * `false`.
   * @default undefined: a 400 BadRequest or 422 Invalid answer to a LIST or a plain WATCH is final (retrying cannot
   * change it; the same answer to a streaming list only falls back to paged lists), everything else is retried
   */
  readonly onTerminal?: (err: unknown) => boolean;
  /**
   * Source of randomness in [0, 1) for jitter and watch timeouts.
   * @default Math.random
   */
  readonly random?: () => number;
  /**
   * Receives a {@link ReflectorStatus} on every state change and every error (a Subject works). What its `next`
   * throws goes to rxjs's `config.onUnhandledError` and never stops the reflector.
   * @default undefined: every error then goes to the process's rate-limited stderr reporter (`reportError`)
   */
  readonly status?: Partial<Observer<ReflectorStatus>> | ((status: ReflectorStatus) => void);
}

/** {@link ReflectOptions} after validation, defaults filled in. */
export type ResolvedReflectOptions = Required<
  Pick<ReflectOptions, 'resyncPeriod' | 'initialList' | 'listDelivery' | 'stripManagedFields' | 'pageSize' | 'minWatchTimeoutSeconds' | 'scheduler' | 'random'>
> &
  Pick<ReflectOptions, 'onTerminal' | 'cached'> & {
    /** The caller chose pageSize: it then applies to every list. */
    readonly pageSizeExplicit: boolean;
    readonly backoff: BackoffOptions;
    /** undefined when stall detection is off. */
    readonly stall: StallOptions | undefined;
    /** An observer given as `status` reduced to its `next`. */
    readonly status: ((status: ReflectorStatus) => void) | undefined;
    /**
     * Whether the events emitted so far left work queued to run before the next one (PF-41): the informer's
     * handler drains. Always true for reflect() itself, which cannot know what its subscribers queue.
     */
    readonly workQueued: () => boolean;
  };
