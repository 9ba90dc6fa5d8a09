// The operator both queues share: each event is queued and the queue is
// then drained at once, oldest first, before the next event is read (D-9).

import { Observable, type OperatorFunction } from 'rxjs';
import type { ReflectorEvent } from '../reflector/types.js';

/** A queue as {@link drainedQueue} drives it: what each reflector event asks of it, and how it is emptied. */
interface DrainedQueue<T, I> {
  readonly hasSynced: boolean;
  event(type: 'Added' | 'Updated' | 'Deleted', obj: T): void;
  /** A `first` page starts a list over; `Replace` is one first page and its end. */
  replacePage(items: readonly T[], first: boolean): void;
  replaceEnd(resourceVersion: string): void;
  resync(): void;
  pop(): I | undefined;
  clear(): void;
  /** The item last popped was handed on, and processed by a synchronous consumer. */
  taken?(): void;
}

/**
 * An operator over a queue: each reflector event is applied to it, then what it holds
 * is emitted before the next event is read. An event pushed back from inside
 * the consumer only queues, so the outer loop keeps the queue's order.
 * `onSynced` is called once per subscription, as soon as the queue says it
 * has synced. Completion drains what is pending, then completes; an error
 * (of the source, or an event of unknown type) drops what is queued and is
 * forwarded at once, as unsubscribing drops it.
 *
 * @param where the operator's name, for the error an unknown event type gets
 * @param makeQueue a new queue for each subscription
 * @param onSynced called once per subscription when the queue has synced
 * @param report where a throwing `onSynced` goes
 * @returns the operator
 */
export function drainedQueue<T, I>(
  where: string,
  makeQueue: () => DrainedQueue<T, I>,
  onSynced: (() => void) | undefined,
  report: (err: Error) => void,
): OperatorFunction<ReflectorEvent<T>, I> {
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
            apply(where, queue, event);
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

function apply<T>(where: string, queue: DrainedQueue<T, unknown>, event: ReflectorEvent<T>): void {
  switch (event.type) {
    case 'Added':
    case 'Deleted':
      queue.event(event.type, event.obj);
      return;
    case 'Modified':
      queue.event('Updated', event.obj);
      return;
    case 'Replace':
      queue.replacePage(event.items, true);
      queue.replaceEnd(event.resourceVersion);
      return;
    case 'ReplacePage':
      queue.replacePage(event.items, event.first);
      return;
    case 'ReplaceEnd':
      queue.replaceEnd(event.resourceVersion);
      return;
    case 'Resync':
      queue.resync();
      return;
    case 'Bookmark':
      // A resourceVersion checkpoint changes no object, and the consumer moves its resourceVersion after each event.
      return;
    default: {
      const unknownType: unknown = (event as { type?: unknown }).type;
      throw new TypeError(`${where}: unknown ReflectorEvent type ${JSON.stringify(unknownType)}`);
    }
  }
}
