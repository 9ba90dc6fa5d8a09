import { CallbackError } from '../errors/CallbackError.js';

// After a key's failure is reported, its next ones within this window are only counted.
export const FAILURE_REPORT_INTERVAL_MS = 60_000;

/** What is remembered of a key whose failure was reported. */
interface Reported {
  // When the last report of this key went out, on the controller's clock.
  at: number;
  // Failures since then that were held back.
  held: number;
}

/**
 * Reconcile failures that reach the controller's error channel, limited per
 * key: the first failure of a key is reported at once, later ones at most
 * once a minute, saying how many were held back meanwhile. So a key that
 * fails on every retry writes a line a minute, not one per backoff step,
 * and a thousand failing keys still each get their first line.
 */
export class FailureReports {
  // The controller's name, in every message.
  readonly #name: string;
  // The controller's clock, so virtual time drives the window.
  readonly #now: () => number;
  // Where a report goes: the controller's error channel.
  readonly #report: (err: Error) => void;
  // Keys reported within the window, or with failures held back.
  readonly #keys = new Map<string, Reported>();
  // The size at which stale entries are swept, so memory follows the failing keys, not every key that ever failed.
  #sweepAt = 1024;

  constructor(name: string, now: () => number, report: (err: Error) => void) {
    this.#name = name;
    this.#now = now;
    this.#report = report;
  }

  /** A reconcile of `key` failed with `error`; `terminal` failures say they will not be retried. */
  failed(key: string, error: Error, terminal: boolean): void {
    const now = this.#now();
    const last = this.#keys.get(key);
    if (last !== undefined && now - last.at < FAILURE_REPORT_INTERVAL_MS) {
      last.held++;
      return;
    }
    const held = last?.held ?? 0;
    this.#keys.set(key, { at: now, held: 0 });
    if (this.#keys.size >= this.#sweepAt) this.#sweep(now);
    const more = held > 0 ? ` (${held} more failure${held === 1 ? '' : 's'} of it in the last ${Math.round((now - (last?.at ?? now)) / 1000)} s not reported)` : '';
    const what = terminal ? 'failed for good (TerminalError; not retried until it changes)' : 'failed';
    this.#report(new CallbackError('controller', `the reconcile of ${key} by ${this.#name} ${what}${more}`, error));
  }

  /** `key` is fine again (or gone): it is forgotten once its window passed with nothing held back. */
  settled(key: string): void {
    const last = this.#keys.get(key);
    if (last !== undefined && last.held === 0 && this.#now() - last.at >= FAILURE_REPORT_INTERVAL_MS) this.#keys.delete(key);
  }

  #sweep(now: number): void {
    for (const [key, r] of this.#keys) if (r.held === 0 && now - r.at >= FAILURE_REPORT_INTERVAL_MS) this.#keys.delete(key);
    this.#sweepAt = Math.max(1024, this.#keys.size * 2);
  }
}
