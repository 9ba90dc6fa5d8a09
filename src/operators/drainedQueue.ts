// The operator both queues share: each event is queued and the queue is
// then drained at once, oldest first, before the next event is read (D-9).

import { Observable, type OperatorFunction } from 'rxjs';

/** A queue as {@link drainedQueue} drives it. */
export interface DrainedQueue<I> {
  readonly hasSynced: boolean;
  pop(): I | undefined;
  clear(): void;
  /** The item last popped was handed on, and processed by a synchronous consumer. */
  taken?(): void;
}

/**
 * An operator over a queue: each event is applied to it, then what it holds
 * is emitted before the next event is read. An event pushed back from inside
 * the consumer only queues, so the outer loop keeps the queue's order.
 * `onSynced` is called once per subscription, as soon as the queue says it
 * has synced. Completion drains what is pending, then completes; an error
 * (of the source, or an event `apply` refuses) drops what is queued and is
 * forwarded at once, as unsubscribing drops it.
 *
 * @param makeQueue a new queue for each subscription
 * @param apply queues one event; throws for an event the queue cannot take
 * @param onSynced called once per subscription when the queue has synced
 * @param report where a throwing `onSynced` goes
 * @returns the operator
 */
export function drainedQueue<E, I, Q extends DrainedQueue<I>>(
  makeQueue: () => Q,
  apply: (queue: Q, event: E) => void,
  onSynced: (() => void) | undefined,
  report: (err: Error) => void,
): OperatorFunction<E, I> {
  return (source) =>
    new Observable<I>((subscriber) => {
      const queue = makeQueue();
      // True while drain() is emitting: a reentrant event only queues, so the outer loop keeps the order.
      let draining = false;
      // The source completed while we were emitting; complete once the queue is empty.
      let completePending = false;
      // onSynced fires once per subscription, even though the queue stays synced.
      let syncedNotified = false;

      const notifySynced = (): void => {
        if (syncedNotified || !queue.hasSynced) return;
        syncedNotified = true;
        if (onSynced === undefined) return;
        try {
          onSynced();
        } catch (err) {
          report(err instanceof Error ? err : new Error(`onSynced threw: ${String(err)}`, { cause: err }));
        }
      };

      const drain = (): void => {
        if (draining) return;
        draining = true;
        try {
          for (;;) {
            if (subscriber.closed) return;
            notifySynced();
            const item = queue.pop();
            if (item === undefined) break;
            subscriber.next(item);
            queue.taken?.();
          }
          if (completePending) subscriber.complete();
        } finally {
          draining = false;
        }
      };

      const subscription = source.subscribe({
        next: (event) => {
          if (subscriber.closed) return;
          try {
            apply(queue, event);
          } catch (err) {
            // Only an event of unknown type gets here (user callbacks are guarded inside the queue).
            queue.clear();
            subscriber.error(err);
            return;
          }
          drain();
        },
        error: (err: unknown) => {
          queue.clear();
          subscriber.error(err);
        },
        complete: () => {
          completePending = true;
          drain();
        },
      });

      return () => {
        subscription.unsubscribe();
        queue.clear();
      };
    });
}
