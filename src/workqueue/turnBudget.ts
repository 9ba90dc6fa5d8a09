import { VirtualTimeScheduler, type SchedulerLike, type Subscription } from 'rxjs';

// A run of hand-outs without a turn of the event loop in between ends after this long on the queue's clock…
export const TURN_MS = 5;
// …or after this many items, whatever the clock says.
export const TURN_ITEMS = 1000;
// The clock is read once per this many hand-outs.
const CLOCK_EVERY = 16;

/**
 * How much work a queue hands out in one turn of the event loop. A promise
 * that resolves at once resumes its awaiter in a microtask, so a worker
 * whose work never awaits I/O (or that re-adds its item each time) would
 * loop in microtasks for ever: no I/O callback, timer or shutdown would run.
 * The budget counts hand-outs since the last turn; once it is spent, the
 * queue hands out the next item only after the loop turned, so it turns at
 * least every {@link TURN_MS} ms or {@link TURN_ITEMS} items.
 *
 * On a real clock a turn is detected by a `setImmediate` marker, and the
 * queue waits for one with `setImmediate` (a timer would add a millisecond
 * each time). Under a `VirtualTimeScheduler` time moves only when the test
 * flushes the scheduler, which is its turn of the loop: the budget starts
 * over whenever the clock moved, and a spent budget waits for the next
 * flush (or a real turn, whichever comes first).
 */
export class TurnBudget {
  // The queue's clock and, under virtual time, what a turn is.
  readonly #scheduler: SchedulerLike;
  readonly #virtual: boolean;
  // When the current run of hand-outs began; undefined once the event loop turned.
  #since: number | undefined;
  #count = 0;
  // Bound once: the marker is scheduled at the start of every run of hand-outs.
  readonly #reset = (): void => {
    this.#since = undefined;
  };

  constructor(scheduler: SchedulerLike) {
    this.#scheduler = scheduler;
    this.#virtual = scheduler instanceof VirtualTimeScheduler;
  }

  /** Counts one hand-out; false (counting nothing) when the queue must wait for the event loop to turn first. */
  spend(): boolean {
    if (this.#virtual) {
      const now = this.#scheduler.now();
      if (now !== this.#since) {
        this.#since = now;
        this.#count = 0;
      }
    } else if (this.#since === undefined) {
      this.#since = this.#scheduler.now();
      this.#count = 0;
      // Runs in the check phase of the next turn: once it ran, the loop did turn.
      setImmediate(this.#reset);
    }
    if (this.#count >= TURN_ITEMS) return false;
    // Reading a real clock can cost a system call (in some VMs), so it is read every CLOCK_EVERY items only.
    if (!this.#virtual && this.#count % CLOCK_EVERY === CLOCK_EVERY - 1 && this.#scheduler.now() - (this.#since as number) >= TURN_MS) return false;
    this.#count++;
    return true;
  }

  /**
   * Runs `fn` once, after a turn of the event loop, with the budget fresh.
   * Under virtual time the scheduler's next flush also counts as the turn,
   * whichever comes first: a spec driving workers by flushing the clock and
   * one awaiting `get()` both go on.
   */
  afterTurn(fn: () => void): void {
    let action: Subscription | undefined;
    let ran = false;
    const run = (): void => {
      if (ran) return;
      ran = true;
      clearImmediate(immediate);
      action?.unsubscribe();
      this.#since = undefined;
      fn();
    };
    const immediate = setImmediate(run);
    if (this.#virtual && !ran) action = this.#scheduler.schedule(run, 0);
  }
}
