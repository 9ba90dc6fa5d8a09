// The one reading of a provider that its informers and controllers share, which gives each of them the provider's sets
// in the order it gave them (MC-15). Internal.

import { Observable, ReplaySubject, share } from 'rxjs';
import type { Cluster, ClusterProvider } from './types.js';

// The reading of each provider, made at its first read: held by the provider object, so a provider let go of takes it along.
const readings = new WeakMap<ClusterProvider, ClusterProvider>();

/**
 * `provider` read once for all that read it at a time, and read afresh once none does. Its sets reach every reader in
 * the provider's order: a set given while the last one is still being told (a reader's reaction emitting it) waits
 * until the last one has reached every reader, where a multicasting provider would tell it first to the readers it
 * had yet to reach. A reader that comes meanwhile is given the latest set at once, and that replay is told in the same
 * turn: a set the newcomer gives while it hears the replay waits for the replay to end, as it would for a delivery.
 */
export function readingOf(provider: ClusterProvider): ClusterProvider {
  let reading = readings.get(provider);
  if (reading === undefined) {
    const turn = new Turn();
    const shared = new Observable<readonly Cluster[]>((subscriber) =>
      provider.subscribe({
        next: (set) => turn.run(() => subscriber.next(set)),
        error: (err: unknown) => turn.run(() => subscriber.error(err)),
        complete: () => turn.run(() => subscriber.complete()),
      }),
    ).pipe(share({ connector: () => new ReplaySubject(1), resetOnError: true, resetOnComplete: true, resetOnRefCountZero: true }));
    reading = new Observable((subscriber) => turn.now(() => shared.subscribe(subscriber)));
    readings.set(provider, reading);
  }
  return reading;
}

/**
 * One reading's deliveries, one after another: what comes while one is under way (a delivery, or a reader's
 * subscription with its replay) waits until it has ended, then runs in the order it came.
 */
class Turn {
  /** What came while a delivery was under way, in order. */
  readonly #waiting: (() => void)[] = [];
  #busy = false;

  /** Runs `deliver` now, or after what is under way and what waits before it. */
  run(deliver: () => void): void {
    this.#waiting.push(deliver);
    if (!this.#busy) this.#drain();
  }

  /**
   * Runs `fn` at once, as part of the turn: inside a delivery it is part of that delivery; otherwise what it sets off
   * waits until it returns.
   */
  now<R>(fn: () => R): R {
    if (this.#busy) return fn();
    this.#busy = true;
    let out: R;
    try {
      out = fn();
    } finally {
      this.#busy = false;
    }
    if (this.#waiting.length > 0) this.#drain();
    return out;
  }

  #drain(): void {
    this.#busy = true;
    try {
      for (let next = this.#waiting.shift(); next !== undefined; next = this.#waiting.shift()) next();
    } finally {
      this.#busy = false;
    }
  }
}
