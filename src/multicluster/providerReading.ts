// The one reading of a provider that its informers and controllers share, which gives each of them the provider's sets
// in the order it gave them (MC-15). Internal.

import { Observable, ReplaySubject, share, type MonoTypeOperatorFunction } from 'rxjs';
import type { ClusterProvider } from './types.js';

// The reading of each provider, made at its first read: held by the provider object, so a provider let go of takes it along.
const readings = new WeakMap<ClusterProvider, ClusterProvider>();

/**
 * `provider` read once for all that read it at a time, and read afresh once none does. Its sets reach every reader in
 * the provider's order: a set given while the last one is still being told (a reader's reaction emitting it) waits
 * until the last one has reached every reader, where a multicasting provider would tell it first to the readers it
 * had yet to reach. A reader that comes meanwhile is given the latest set at once.
 */
export function readingOf(provider: ClusterProvider): ClusterProvider {
  let reading = readings.get(provider);
  if (reading === undefined) {
    reading = provider.pipe(inTurn(), share({ connector: () => new ReplaySubject(1), resetOnError: true, resetOnComplete: true, resetOnRefCountZero: true }));
    readings.set(provider, reading);
  }
  return reading;
}

/** The source's notifications one after another: one given while the last is being delivered waits until it has been. */
function inTurn<T>(): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      // What arrived while a delivery was under way, in order.
      const waiting: (() => void)[] = [];
      let delivering = false;
      const inOrder = (deliver: () => void): void => {
        waiting.push(deliver);
        if (delivering) return;
        delivering = true;
        try {
          for (let next = waiting.shift(); next !== undefined; next = waiting.shift()) next();
        } finally {
          delivering = false;
        }
      };
      const sub = source.subscribe({
        next: (value) => inOrder(() => subscriber.next(value)),
        error: (err: unknown) => inOrder(() => subscriber.error(err)),
        complete: () => inOrder(() => subscriber.complete()),
      });
      return () => {
        waiting.length = 0;
        sub.unsubscribe();
      };
    });
}
