/**
 * Whether an informer's cache is current with the server, and since when it
 * is not: the evidence behind `status().currentAt`, `behindSince` and
 * `lagging` (HI-57, HI-58).
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { timerDelay } from '../options/timerDelay.js';
import type { ReflectorEvent, ReflectorStatus } from '../reflector/types.js';

/** How long a cache may stay behind before the informer reports it lagging, in ms. */
export const DEFAULT_MAX_LAG_MS = 120_000;

/** What the informer's status shows of its cache's currency. */
export interface CurrencyView {
  readonly currentAt: number | undefined;
  readonly behindSince: number | undefined;
  readonly lagging: boolean;
}

/**
 * Follows the reflector: a watch event, a bookmark or a completed list shows
 * the cache current; a failure after that (a backoff or a relist) starts a
 * spell of being behind, which the next such evidence ends. A spell
 * longer than `maxLagMs` is lagging; `onLagging` runs once when it becomes
 * so, from a timer on the informer's scheduler, so `status$` can say it.
 */
export class Currency {
  /** The informer's clock. */
  readonly #scheduler: SchedulerLike;
  /** The bound after which a spell behind is lagging. */
  readonly #maxLagMs: number;
  /** Told when a spell behind passes the bound. */
  readonly #onLagging: () => void;
  /** When the cache was last shown current; undefined until the first list of a lifetime. */
  #currentAt: number | undefined;
  /** When the current spell behind began; undefined while current. */
  #behindSince: number | undefined;
  /** Fires when the spell behind passes the bound. */
  #timer: Subscription | undefined;

  constructor(scheduler: SchedulerLike, maxLagMs: number, onLagging: () => void) {
    this.#scheduler = scheduler;
    this.#maxLagMs = maxLagMs;
    this.#onLagging = onLagging;
  }

  /** A reflector event went to the store: list ends, watch events and bookmarks show it current. */
  event(event: ReflectorEvent<unknown>): void {
    switch (event.type) {
      case 'Added':
      case 'Modified':
      case 'Deleted':
      case 'Bookmark':
      case 'Replace':
      case 'ReplaceEnd':
        this.#current();
        return;
      default:
        return;
    }
  }

  /**
   * The reflector's state changed: a wait or a relist after the cache was
   * current starts a spell behind. An error alone does not: one the watch
   * skips (an unusable event) is followed by more watching, and on a quiet
   * resource the next arrival may be minutes away.
   */
  status(status: ReflectorStatus): void {
    const failing = status.state === 'backoff' || status.state === 'relisting';
    if (!failing || this.#currentAt === undefined || this.#behindSince !== undefined) return;
    this.#behindSince = this.#scheduler.now();
    this.#timer = this.#scheduler.schedule(() => {
      this.#timer = undefined;
      this.#onLagging();
    }, timerDelay(this.#maxLagMs));
  }

  /** The view now. */
  view(): CurrencyView {
    const since = this.#behindSince;
    return {
      currentAt: this.#currentAt,
      behindSince: since,
      lagging: since !== undefined && this.#scheduler.now() - since >= this.#maxLagMs,
    };
  }

  /** The lifetime ended: nothing is known of the next one. */
  reset(): void {
    this.#stopTimer();
    this.#currentAt = undefined;
    this.#behindSince = undefined;
  }

  #current(): void {
    this.#currentAt = this.#scheduler.now();
    if (this.#behindSince === undefined) return;
    this.#behindSince = undefined;
    this.#stopTimer();
  }

  #stopTimer(): void {
    this.#timer?.unsubscribe();
    this.#timer = undefined;
  }
}
