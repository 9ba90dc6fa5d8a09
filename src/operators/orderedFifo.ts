import { reportTo } from '../errors/reportTo.js';
import { checkOptionNames, describeValue, functionOption, optionNames } from '../options/validate.js';
import type { OperatorFunction } from 'rxjs';
import { KeyError } from '../store/errors/KeyError.js';
import { deletionHandlingMetaNamespaceKey } from '../store/keys.js';
import type { KeyFunc, KeyListerGetter } from '../store/types.js';
import type { ReflectorEvent } from '../reflector/types.js';
import { drainedQueue } from './drainedQueue.js';
import { OrderedFifoQueue } from './orderedFifoQueue.js';
import type { OrderedFifoItem } from './orderedTypes.js';

/** Options of {@link orderedFifo}. */
export interface OrderedFifoOptions<T> {
  /**
   * Read view of the store the consumer keeps. Only used to drop a `Deleted`
   * event for a key the store does not hold when its turn comes: there is
   * nothing downstream to delete. The consumer works out a relist's
   * deletions itself, from its store.
   * @default undefined — every `Deleted` event is handed on
   */
  readonly knownObjects?: KeyListerGetter<T>;
  /**
   * Computes an object's key. Tombstones are keyed by their own `key`.
   * @default deletionHandlingMetaNamespaceKey (`"namespace/name"`, or `"name"` when cluster-scoped)
   */
  readonly keyFunc?: KeyFunc<T>;
  /**
   * Runs once per object as it enters the queue (watch events and listed
   * objects), never on tombstones. If it throws, a `TransformError` goes to
   * `onError` and that object is skipped; a listed one is named in its
   * list's `kept`, so the consumer keeps its stored copy.
   * @default undefined (objects pass unchanged)
   */
  readonly transform?: (obj: T) => T;
  /**
   * Receives errors from user callbacks (`TransformError`, `KeyError`, what
   * `knownObjects` or `onSynced` throw). The stream keeps running.
   * @default rxkube's error reporter (stderr, rate-limited; see `setErrorReporter`)
   */
  readonly onError?: (err: Error) => void;
  /**
   * Called once per subscription when the first list has been handed on and
   * processed by a synchronous consumer, or before the first emission when
   * a watch event arrives before any list.
   * @default undefined
   */
  readonly onSynced?: () => void;
}

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
  const keyFunc = opts.keyFunc ?? (deletionHandlingMetaNamespaceKey as KeyFunc<T>);
  const onSynced = opts.onSynced;
  const report = (err: Error): void => reportTo(opts.onError, err);

  return drainedQueue<ReflectorEvent<T>, OrderedFifoItem<T>, OrderedFifoQueue<T>>(
    () =>
      new OrderedFifoQueue<T>({
        keyFunc,
        knownObjects: opts.knownObjects,
        transform: opts.transform,
        report,
        keyError: (obj, cause) => new KeyError(obj, cause),
      }),
    apply,
    onSynced,
    report,
  );
}

function apply<T>(queue: OrderedFifoQueue<T>, event: ReflectorEvent<T>): void {
  switch (event.type) {
    case 'Added':
      queue.event('Added', event.obj);
      return;
    case 'Modified':
      queue.event('Updated', event.obj);
      return;
    case 'Deleted':
      queue.event('Deleted', event.obj);
      return;
    case 'Replace':
      queue.page(event.items, true);
      queue.end(event.resourceVersion);
      return;
    case 'ReplacePage':
      queue.page(event.items, event.first);
      return;
    case 'ReplaceEnd':
      queue.end(event.resourceVersion);
      return;
    case 'Resync':
      queue.resync();
      return;
    case 'Bookmark':
      // The consumer moves its resourceVersion after each event; nothing waits in the queue to be overtaken.
      return;
    default: {
      const unknownType: unknown = (event as { type?: unknown }).type;
      throw new TypeError(`orderedFifo: unknown ReflectorEvent type ${JSON.stringify(unknownType)}`);
    }
  }
}

const OPTION_NAMES = optionNames<OrderedFifoOptions<unknown>>({ knownObjects: true, keyFunc: true, transform: true, onError: true, onSynced: true });

function validateOptions<T>(options: unknown): OrderedFifoOptions<T> {
  const o = checkOptionNames('orderedFifo', options, OPTION_NAMES);
  for (const name of ['keyFunc', 'transform', 'onError', 'onSynced'] as const) functionOption('orderedFifo', name, o[name]);
  const known = o['knownObjects'];
  if (known !== undefined) {
    const k = known as { getByKey?: unknown } | null;
    if (typeof known !== 'object' || k === null || typeof k.getByKey !== 'function') {
      throw new TypeError(`orderedFifo: option "knownObjects" must have getByKey(key), got ${describeValue(known)}`);
    }
  }
  return o as OrderedFifoOptions<T>;
}
