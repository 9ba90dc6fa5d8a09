import type { SchedulerLike, Subscription } from 'rxjs';
import { WaitingHeap } from './waitingHeap.js';
import { timerDelay } from '../options/timerDelay.js';

// Node fires a timer of more than 2^31 - 1 ms after 1 ms; longer waits are taken in steps.

/**
 * The waiting side of a delaying queue: items wait in a heap by ready time
 * and one timer, for the earliest of them, hands each to `onReady` when its
 * time has come on the scheduler's clock. client-go's waiting loop also wakes
 * every 10 s as a safety net; a timer re-armed at every change needs none.
 */
export class DelayedAdds<T> {
  // Reads the clock and runs the one timer.
  readonly #scheduler: SchedulerLike;
  // Where a ready item goes: the queue's add(), with its dedup, at the item's priority.
  readonly #onReady: (item: T, priority: number) => void;
  // The items waiting for their time, one entry per item.
  readonly #waiting = new WaitingHeap<T>();
  // The timer for the earliest entry, and a counter that tells a stale timer from the current one.
  #timer: Subscription | undefined;
  #generation = 0;

  constructor(scheduler: SchedulerLike, onReady: (item: T, priority: number) => void) {
    this.#scheduler = scheduler;
    this.#onReady = onReady;
  }

  /** Makes `item` ready `delayMs` from now; an item already waiting keeps the earlier time and the higher priority. */
  schedule(item: T, delayMs: number, priority: number): void {
    if (this.#waiting.schedule(item, this.#scheduler.now() + delayMs, priority)) this.#arm();
  }

  /** Drops the entry of `item`, if any; the timer follows the new earliest entry, or stops when none is left. */
  cancel(item: T): void {
    if (this.#waiting.remove(item)) this.#arm();
  }

  /** Drops every waiting item and cancels the timer. */
  clear(): void {
    this.#waiting.clear();
    this.#arm();
  }

  #arm(): void {
    this.#timer?.unsubscribe();
    this.#timer = undefined;
    const readyAt = this.#waiting.peekReadyAt();
    if (readyAt === undefined) return;
    const generation = ++this.#generation;
    const delay = timerDelay(readyAt - this.#scheduler.now());
    const timer = this.#scheduler.schedule(() => {
      if (generation !== this.#generation) return;
      this.#timer = undefined;
      // A timer that woke early (or a long wait taken in steps) finds nothing ready and re-arms.
      for (const { item, priority } of this.#waiting.takeReady(this.#scheduler.now())) this.#onReady(item, priority);
      this.#arm();
    }, delay);
    // A scheduler that ran the work inside schedule() has already armed the next timer.
    if (generation === this.#generation) this.#timer = timer;
  }
}
