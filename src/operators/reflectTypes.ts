import type { Observer, SchedulerLike } from 'rxjs';
import type { BackoffOptions } from './internal/backoff.js';

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
}

/** Why reflect() is about to list again. */
export type RelistReason = 'expired' | 'very-short-watch' | 'watch-failed';

/** What reflect() is doing now. */
export type ReflectorState =
  | { readonly state: 'listing'; readonly mode: 'paged' | 'stream' }
  | { readonly state: 'watching'; readonly resourceVersion: string }
  | { readonly state: 'backoff'; readonly error: unknown; readonly delayMs: number }
  | { readonly state: 'relisting'; readonly reason: RelistReason; readonly error: unknown }
  /** An error was met; the next status says what reflect() does about it (unless it was terminal). */
  | { readonly state: 'error'; readonly error: unknown; readonly terminal: boolean };

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
   * Items per LIST page; 0 asks for everything in one response.
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
   * @default 300
   */
  readonly minWatchTimeoutSeconds?: number;
  /**
   * Scheduler for every timer (backoff, Retry-After, resync) and for the clock; a virtual-time scheduler in tests.
   * @default asyncScheduler
   */
  readonly scheduler?: SchedulerLike;
  /**
   * Called with every error; return true to make it final: the observable then errors with it instead of retrying
   * (e.g. `err => err instanceof ForbiddenError`). What the callback throws is reported and treated as `false`.
   * @default undefined (nothing is final)
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
   * @default undefined
   */
  readonly status?: Partial<Observer<ReflectorStatus>> | ((status: ReflectorStatus) => void);
}

/** {@link ReflectOptions} after validation, defaults filled in. */
export interface ResolvedReflectOptions {
  readonly resyncPeriod: number;
  readonly initialList: 'paged' | 'stream';
  readonly pageSize: number;
  readonly backoff: BackoffOptions;
  readonly minWatchTimeoutSeconds: number;
  readonly scheduler: SchedulerLike;
  readonly onTerminal: ((err: unknown) => boolean) | undefined;
  readonly random: () => number;
  readonly status: ((status: ReflectorStatus) => void) | undefined;
}
