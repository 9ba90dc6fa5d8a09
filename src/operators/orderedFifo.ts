import { reportTo } from '../errors/reportTo.js';
import { optionNames } from '../options/validate.js';
import { checkFifoOptions, type DeltaFifoOptions } from './deltaFifo.js';
import type { OperatorFunction } from 'rxjs';
import { deletionHandlingMetaNamespaceKey } from '../store/keys.js';
import type { KeyFunc } from '../store/types.js';
import type { ReflectorEvent } from '../reflector/types.js';
import { drainedQueue } from './drainedQueue.js';
import { OrderedFifoQueue } from './orderedFifoQueue.js';
import type { OrderedFifoItem } from './orderedTypes.js';

/**
 * Options of {@link orderedFifo}: those of `deltaFifo` but `emitDeltaTypeReplaced` (a relist is handed on
 * whole, as one `ReplacedAll`).
 */
export type OrderedFifoOptions<T> = Omit<DeltaFifoOptions<T>, 'emitDeltaTypeReplaced'>;

/**
 * Turns reflector events into items in the order the server sent them,
 * with every relist handed on whole: client-go's RealFIFO with atomic
 * events (the InOrderInformers and AtomicFIFO feature gates), the queue of
 * an informer made with `fifo: 'ordered'`.
 *
 * - `Added` / `Modified` / `Deleted` each become one `Deltas` holding one
 *   delta (`Added`, `Updated`, `Deleted`), in arrival order across all keys;
 *   nothing is merged, so a key may come many times. A `Deleted` for a key
 *   `knownObjects` does not hold when its turn comes is dropped.
 * - A list, whether one `Replace` or `ReplacePage`s then `ReplaceEnd`, is
 *   held until its end and handed on as one `ReplacedAll` carrying every
 *   listed object: the consumer replaces its store in one step and infers
 *   the deletions. A list that never ends (the source errors, completes or
 *   moves on to watch events first) is dropped whole.
 * - `Resync` becomes one `SyncAll`; `Bookmark` queues nothing.
 * - `isInInitialList` is true on everything taken before the first list
 *   has been processed; `onSynced` fires once when that flips.
 *
 * Each event is queued and the queue drained synchronously before the next
 * is read; an event the consumer pushes back from inside `next` is queued
 * behind the current work. An error is forwarded at once and what is queued
 * is dropped, as on unsubscribe; completion drains first.
 *
 * Deliberate differences from client-go: a key or transform failure skips
 * that one object instead of failing the whole list; a delete of a key the
 * store does not hold is dropped rather than announced.
 *
 * ## Example
 * ```ts
 * import type { V1Pod } from '@kubernetes/client-node';
 * import { createIndexer, orderedFifo, reflect } from 'rxkube/core';
 * import type { ListerWatcher } from 'rxkube';
 * declare const pods: ListerWatcher<V1Pod>;
 *
 * const store = createIndexer<V1Pod>();
 * reflect<V1Pod>(pods)
 *   .pipe(orderedFifo({ knownObjects: store }))
 *   .subscribe((item) => {
 *     if ('deltas' in item) {
 *       for (const d of item.deltas) {
 *         if (d.type === 'Deleted') store.delete(d.obj);
 *         else if (store.getByKey(item.key) === undefined) store.add(d.obj as V1Pod);
 *         else store.update(d.obj as V1Pod);
 *       }
 *     } else if (item.type === 'ReplacedAll') {
 *       // One step: a reader sees the old list or the new one, never a mix.
 *       store.replace(item.items, item.resourceVersion);
 *     }
 *   });
 * ```
 *
 * @param options see {@link OrderedFifoOptions}; validated up front.
 * @returns an operator from `ReflectorEvent<T>` to `OrderedFifoItem<T>`.
 * @throws TypeError when an option has the wrong type.
 */
export function orderedFifo<T>(options: OrderedFifoOptions<T> = {}): OperatorFunction<ReflectorEvent<T>, OrderedFifoItem<T>> {
  const opts = validateOptions<T>(options);
  const report = (err: Error): void => reportTo(opts.onError, err);
  return drainedQueue<T, OrderedFifoItem<T>>(
    'orderedFifo',
    () =>
      new OrderedFifoQueue<T>({
        keyFunc: opts.keyFunc ?? (deletionHandlingMetaNamespaceKey as KeyFunc<T>),
        knownObjects: opts.knownObjects,
        transform: opts.transform,
        report,
      }),
    opts.onSynced,
    report,
  );
}

const OPTION_NAMES = optionNames<OrderedFifoOptions<unknown>>({ knownObjects: true, keyFunc: true, transform: true, onError: true, onSynced: true });

function validateOptions<T>(options: unknown): OrderedFifoOptions<T> {
  return checkFifoOptions('orderedFifo', options, OPTION_NAMES, ['getByKey']) as OrderedFifoOptions<T>;
}
