/**
 * The callers waiting in `whenSynced` for one informer: each settles when
 * the informer syncs, its timeout passes, its signal aborts, or the informer
 * goes idle, stops or fails (docs/semantics.md S-2). Internal.
 */
import type { BehaviorSubject } from 'rxjs';
import type { CacheSyncError, CacheSyncFailure } from './CacheSyncError.js';
import { timerDelay } from '../options/timerDelay.js';

interface SyncWaiter {
  fail(reason: CacheSyncFailure, detail: string): void;
}

/** The pending `whenSynced` calls of one informer. */
export class SyncWaiters {
  readonly #waiters = new Set<SyncWaiter>();
  /** Whether the informer has synced. */
  readonly #synced: BehaviorSubject<boolean>;
  /** The error a failed wait rejects with. */
  readonly #error: (reason: CacheSyncFailure, detail: string) => CacheSyncError;

  constructor(synced: BehaviorSubject<boolean>, error: (reason: CacheSyncFailure, detail: string) => CacheSyncError) {
    this.#synced = synced;
    this.#error = error;
  }

  /**
   * Waits for the informer to sync; the caller has checked that it is running and not synced yet.
   *
   * @param timeout ms before rejecting with reason `timeout`, or undefined for none
   * @param signal rejects with reason `aborted` when it aborts
   * @returns a promise that resolves once synced
   */
  wait(timeout: number | undefined, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (): void => {
        this.#waiters.delete(waiter);
        sub.unsubscribe();
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: SyncWaiter = {
        fail: (reason, detail) => {
          settle();
          reject(this.#error(reason, detail));
        },
      };
      const onAbort = (): void => waiter.fail('aborted', 'the signal aborted');
      const sub = this.#synced.subscribe((synced) => {
        if (!synced) return;
        queueMicrotask(settle);
        resolve();
      });
      if (this.#synced.value) return;
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeout !== undefined) timer = setTimeout(() => waiter.fail('timeout', `not within ${timeout} ms`), timerDelay(timeout));
    });
  }

  /** Rejects every pending wait. */
  failAll(reason: CacheSyncFailure, detail: string): void {
    for (const w of [...this.#waiters]) w.fail(reason, detail);
  }
}
