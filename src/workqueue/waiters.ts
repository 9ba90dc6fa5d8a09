import type { SchedulerLike } from 'rxjs';
import { TurnBudget } from './turnBudget.js';

/** What `WorkQueue.get` resolves to: an item with the priority it waited at, or the news that the queue shut down and is empty. */
export type GetResult<T> =
  | { readonly shutdown: false; readonly item: T; readonly priority: number }
  | { readonly shutdown: true; readonly item?: undefined; readonly priority?: undefined };

const SHUT_DOWN: GetResult<never> = Object.freeze({ shutdown: true });

/** What the waiters need of their queue. */
interface ReadyItems<T> {
  /** How many items wait to be taken. */
  size(): number;
  /** Hands out the first ready item (the caller checked there is one). */
  take(): GetResult<T>;
  shuttingDown(): boolean;
}

/**
 * The callers of `WorkQueue.get` waiting for an item, served first come
 * first served, never more in one turn of the event loop than the
 * {@link TurnBudget} allows; once the queue shut down and is empty, each
 * learns so.
 */
export class Waiters<T> {
  readonly #queue: ReadyItems<T>;
  // Hand-outs since the event loop last turned, so workers that never await I/O cannot starve it.
  readonly #budget: TurnBudget;
  readonly #waiting: { readonly resolve: (result: GetResult<T>) => void; readonly detach: () => void }[] = [];
  // Set while a wake is deferred to the next turn of the event loop.
  #deferred = false;

  constructor(scheduler: SchedulerLike, queue: ReadyItems<T>) {
    this.#queue = queue;
    this.#budget = new TurnBudget(scheduler);
  }

  /** The next item, or a wait for one that `signal` stops (rejecting with its reason). */
  get(signal: AbortSignal | undefined): Promise<GetResult<T>> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const q = this.#queue;
    // Callers already waiting for the next turn go first.
    if (q.size() > 0 && this.#waiting.length === 0 && this.#budget.spend()) return Promise.resolve(q.take());
    if (q.size() === 0 && q.shuttingDown()) return Promise.resolve(SHUT_DOWN);
    if (q.size() > 0) this.#deferWake();
    return new Promise<GetResult<T>>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.#waiting.indexOf(waiter);
        if (i !== -1) this.#waiting.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter = { resolve, detach: () => signal?.removeEventListener('abort', onAbort) };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /** Serves the waiters from the ready items, as far as the budget of this turn goes. */
  wake(): void {
    const q = this.#queue;
    while (this.#waiting.length > 0 && q.size() > 0) {
      if (!this.#budget.spend()) {
        this.#deferWake();
        return;
      }
      const waiter = this.#waiting.shift()!;
      waiter.detach();
      waiter.resolve(q.take());
    }
    // Waiters outlive an empty queue only while it runs; once it shut down and is empty, each learns so.
    if (q.shuttingDown() && q.size() === 0) {
      for (const waiter of this.#waiting.splice(0)) {
        waiter.detach();
        waiter.resolve(SHUT_DOWN);
      }
    }
  }

  /** Serves the waiters after the event loop turned: the budget for this turn is spent. */
  #deferWake(): void {
    if (this.#deferred) return;
    this.#deferred = true;
    this.#budget.afterTurn(() => {
      this.#deferred = false;
      this.wake();
    });
  }
}
