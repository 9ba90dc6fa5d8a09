import { asyncScheduler, Observable, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { CallbackError } from '../errors/CallbackError.js';
import { reportError } from '../errors/reportError.js';
import { deletionHandlingMetaNamespaceKey, metaNamespaceKey } from '../store/keys.js';
import type { KubeObject } from '../store/types.js';
import { isInformerEvent } from './predicateFilter.js';
import { describeValue } from '../options/validate.js';
import { timerDelay } from '../options/timerDelay.js';

/** The newest value of one key, waiting out its quiet period. */
interface Pending<T> {
  readonly value: T;
  timer?: Subscription;
}

/**
 * Like rxjs's `debounceTime`, but per key: a value is emitted once its key
 * has been quiet for `dueTime`, and only the newest value of a burst is
 * emitted. Keys do not delay each other, so a storm of pod events for one
 * ReplicaSet does not hold back the others.
 *
 * - On completion the pending values are emitted at once, oldest due first,
 *   then the completion.
 * - On error the pending values are dropped and the error is forwarded, as
 *   `debounceTime` does.
 * - Unsubscribing cancels every pending timer and drops the pending values.
 * - If `keyOf` throws, the failure is reported through
 *   rxkube's error reporter (`setErrorReporter`) as a `CallbackError` and the value is emitted at once, undebounced:
 *   a value is never lost to a bad key.
 *
 * ## Example
 * ```ts
 * import { debounceByKey, ownerKeys } from 'rxkube';
 * import type { Informer } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const pods: Informer<V1Pod>;
 * declare function reconcile(replicaSetKey: string): void;
 *
 * // Reconcile each ReplicaSet at most once per 200 ms burst of pod changes.
 * pods
 *   .pipe(ownerKeys({ kind: 'ReplicaSet' }), debounceByKey(200))
 *   .subscribe((rsKey) => reconcile(rsKey));
 * ```
 *
 * @param dueTime quiet time per key, in milliseconds (in the scheduler's time); `0` or more.
 * @param keyOf the key of a value.
 *   @default a string is its own key; an `InformerEvent` is keyed by its object's
 *   `namespace/name` (a tombstone by the key it carries); an object by its `namespace/name`.
 * @param scheduler the scheduler that runs the timers.
 *   @default asyncScheduler
 * @returns an operator emitting each key's newest value after it went quiet.
 * @throws {TypeError} when `dueTime`, `keyOf` or `scheduler` is invalid.
 */
export function debounceByKey<T>(
  dueTime: number,
  keyOf: (value: T) => unknown = defaultKeyOf,
  scheduler: SchedulerLike = asyncScheduler,
): MonoTypeOperatorFunction<T> {
  if (typeof dueTime !== 'number' || !Number.isFinite(dueTime) || dueTime < 0) {
    throw new TypeError(`debounceByKey: dueTime must be a finite number >= 0, got ${describeValue(dueTime)}`);
  }
  if (typeof keyOf !== 'function') {
    throw new TypeError(`debounceByKey: keyOf must be a function, got ${describeValue(keyOf)}`);
  }
  if (typeof scheduler !== 'object' || scheduler === null || typeof scheduler.schedule !== 'function') {
    throw new TypeError(`debounceByKey: scheduler must be an rxjs SchedulerLike, got ${describeValue(scheduler)}`);
  }

  return (source) =>
    new Observable<T>((subscriber) => {
      // Insertion order is due order: a restarted key is deleted and re-inserted, so a flush emits oldest due first.
      const pending = new Map<unknown, Pending<T>>();

      const clear = (): void => {
        for (const entry of pending.values()) entry.timer?.unsubscribe();
        pending.clear();
      };

      const subscription = source.subscribe({
        next: (value) => {
          let key: unknown;
          try {
            key = keyOf(value);
          } catch (error) {
            reportKeyError(error);
            subscriber.next(value);
            return;
          }
          const previous = pending.get(key);
          if (previous !== undefined) {
            previous.timer?.unsubscribe();
            pending.delete(key);
          }
          const entry: Pending<T> = { value };
          // Registered before scheduling: a synchronous scheduler may run the timer inside schedule().
          pending.set(key, entry);
          entry.timer = scheduler.schedule(() => {
            if (pending.get(key) !== entry) return;
            pending.delete(key);
            subscriber.next(entry.value);
          }, timerDelay(dueTime));
        },
        error: (error: unknown) => {
          clear();
          subscriber.error(error);
        },
        complete: () => {
          const values = [...pending.values()].map((entry) => entry.value);
          clear();
          for (const value of values) subscriber.next(value);
          subscriber.complete();
        },
      });

      return () => {
        subscription.unsubscribe();
        clear();
      };
    });
}

function defaultKeyOf(value: unknown): unknown {
  if (typeof value === 'string') return value;
  if (isInformerEvent<KubeObject>(value)) return deletionHandlingMetaNamespaceKey(value.obj);
  return metaNamespaceKey(value as KubeObject);
}

function reportKeyError(error: unknown): void {
  reportError(new CallbackError('debounceByKey', 'keyOf threw, the value was emitted undebounced', error));
}
