import { reportTo } from '../errors/reportTo.js';
import { booleanOption, checkOptionNames, describeValue, functionOption, optionNames } from '../options/validate.js';
import type { OperatorFunction } from 'rxjs';
import { deletionHandlingMetaNamespaceKey } from '../store/keys.js';
import type { KeyFunc, KeyListerGetter } from '../store/types.js';
import { DeltaFifoQueue } from './deltaFifoQueue.js';
import { drainedQueue } from './drainedQueue.js';
import type { Deltas } from './types.js';
import type { ReflectorEvent } from '../reflector/types.js';

/** Options of {@link deltaFifo}. */
export interface DeltaFifoOptions<T> {
  /**
   * Read view of the store the consumer keeps up to date from what it is
   * handed (normally the informer's Indexer). `deltaFifo` needs it to turn a
   * relist into deletions for keys that disappeared, to resync, and to tell
   * a delete of a stored key from a delete of something never seen;
   * `orderedFifo` only to drop a `Deleted` for a key the store does not hold
   * when its turn comes (the consumer infers a relist's deletions itself).
   * @default undefined — then only keys still pending can be deleted, and `Resync` does nothing
   */
  readonly knownObjects?: KeyListerGetter<T>;
  /**
   * Computes an object's store key. Tombstones are always keyed by their own `key`.
   * @default deletionHandlingMetaNamespaceKey (`"namespace/name"`, or `"name"` when cluster-scoped)
   */
  readonly keyFunc?: KeyFunc<T>;
  /**
   * Whether a relist emits `Replaced` deltas (true) or `Sync` deltas (false,
   * client-go DeltaFIFO's default). rxkube's informer wants `Replaced`, so
   * that a relisted object is told apart from a periodic resync.
   * @default true
   */
  readonly emitDeltaTypeReplaced?: boolean;
  /**
   * Runs once per object before it is queued (e.g. to drop `managedFields`),
   * for objects from `Added`, `Modified`, `Deleted` and `Replace`. It does not
   * run on tombstones, nor on the stored objects a `Resync` re-delivers
   * (they were transformed when they arrived). It must not change the key.
   * If it throws, a `TransformError` goes to `onError` and that object
   * is not queued (in `orderedFifo`, a listed one is named in its list's
   * `kept`, so the consumer keeps its stored copy).
   * @default undefined (objects pass unchanged)
   */
  readonly transform?: (obj: T) => T;
  /**
   * Receives errors from user callbacks: `TransformError`, `KeyError`, and
   * whatever `knownObjects` or `onSynced` throw. The stream keeps running.
   * @default rxkube's error reporter (stderr, rate-limited; see `setErrorReporter`)
   */
  readonly onError?: (err: Error) => void;
  /**
   * Called once per subscription when the queue has synced: after the last
   * item of the first list was emitted (and so processed by a synchronous
   * consumer), at once for a first `Replace([])` with nothing to delete
   * (`deltaFifo`), or before the first emission when an
   * `Added`/`Modified`/`Deleted` arrives before any list.
   * @default undefined
   */
  readonly onSynced?: () => void;
}

/**
 * Turns reflector events into per-key Deltas with client-go's DeltaFIFO
 * rules; the queue between `reflect()` and the informer's store.
 *
 * Each input event is queued and then the queue is drained synchronously,
 * oldest key first, before the next event is read. A key keeps its place in
 * line while it has pending deltas, and all of them are emitted together in
 * arrival order. Rules:
 * - `Added` / `Modified` queue `Added` / `Updated`; `Deleted` queues `Deleted`
 *   unless the key is neither pending nor in `knownObjects` (nothing to delete).
 * - Two `Deleted` in a row for one key collapse to one, keeping a real object
 *   over a `DeletedFinalStateUnknown` tombstone.
 * - `Replace(items)` queues `Replaced` (or `Sync`) for each item, then a
 *   `Deleted` tombstone for every pending or known key the list no longer
 *   has, holding the last state rxkube knew. A list delivered page by page
 *   (`ReplacePage`, then `ReplaceEnd`) is queued and drained page by page,
 *   so only one page is ever held beside the store; the tombstones follow
 *   `ReplaceEnd`.
 * - `Resync` queues `Sync` with the stored object for every known key that
 *   has nothing pending. `Bookmark` queues nothing.
 * - Every emitted Deltas carries `isInInitialList`: true until everything the
 *   first `Replace` queued has been emitted (client-go's
 *   `initialPopulationCount`); `onSynced` fires once when that flips.
 *
 * The consumer is expected to apply each Deltas to the store behind
 * `knownObjects` inside its `next` (the informer does). An event it pushes
 * back into the source from there is queued behind the current work and
 * merged per key, never emitted out of order; it must apply the current
 * Deltas before pushing, or a relist cannot see the key it is holding. Completion drains what is
 * pending and then completes; an error is forwarded at once and pending
 * deltas are dropped, as they are on unsubscribe.
 *
 * Deliberate differences from client-go's DeltaFIFO: `emitDeltaTypeReplaced`
 * defaults to true; a key or transform failure skips that one object instead
 * of failing the whole `Replace`; `onSynced` fires after the last initial
 * Deltas was processed, not when it was taken.
 *
 * ## Example
 * ```ts
 * import type { V1Pod } from '@kubernetes/client-node';
 * import { createIndexer, deltaFifo, reflect } from 'rxkube/core';
 * import type { ListerWatcher } from 'rxkube';
 * declare const pods: ListerWatcher<V1Pod>;
 *
 * const store = createIndexer<V1Pod>();
 * reflect<V1Pod>(pods)
 *   .pipe(deltaFifo({ knownObjects: store, onSynced: () => console.log('cache synced') }))
 *   .subscribe(({ key, deltas }) => {
 *     // What an informer does: the store's contents, not the delta type, pick add or update.
 *     for (const d of deltas) {
 *       if (d.type === 'Deleted') store.delete(d.obj);
 *       else if (store.getByKey(key) === undefined) store.add(d.obj as V1Pod);
 *       else store.update(d.obj as V1Pod);
 *     }
 *   });
 * ```
 *
 * @param options see {@link DeltaFifoOptions}; validated up front.
 * @returns an operator from `ReflectorEvent<T>` to `Deltas<T>`.
 * @throws TypeError when an option has the wrong type.
 */
export function deltaFifo<T>(options: DeltaFifoOptions<T> = {}): OperatorFunction<ReflectorEvent<T>, Deltas<T>> {
  const opts = validateOptions<T>(options);
  const report = (err: Error): void => reportTo(opts.onError, err);
  return drainedQueue<T, Deltas<T>>(
    'deltaFifo',
    () =>
      new DeltaFifoQueue<T>({
        keyFunc: opts.keyFunc ?? (deletionHandlingMetaNamespaceKey as KeyFunc<T>),
        knownObjects: opts.knownObjects,
        emitDeltaTypeReplaced: opts.emitDeltaTypeReplaced ?? true,
        transform: opts.transform,
        report,
      }),
    opts.onSynced,
    report,
  );
}

const OPTION_NAMES = optionNames<DeltaFifoOptions<unknown>>({
  knownObjects: true,
  keyFunc: true,
  emitDeltaTypeReplaced: true,
  transform: true,
  onError: true,
  onSynced: true,
});

function validateOptions<T>(options: unknown): DeltaFifoOptions<T> {
  const o = checkFifoOptions('deltaFifo', options, OPTION_NAMES, ['listKeys', 'getByKey']);
  booleanOption('deltaFifo', 'emitDeltaTypeReplaced', o['emitDeltaTypeReplaced'], true);
  return o as DeltaFifoOptions<T>;
}

/**
 * Checks the options both queues take, up front: a misspelt option (say `knowObjects`) would otherwise
 * silently change behaviour, and a `knownObjects` without the methods the queue calls would fail on its
 * first event.
 */
export function checkFifoOptions(where: string, options: unknown, names: readonly string[], knownNeeds: readonly ('listKeys' | 'getByKey')[]): Record<string, unknown> {
  const o = checkOptionNames(where, options, names);
  for (const name of ['keyFunc', 'transform', 'onError', 'onSynced'] as const) functionOption(where, name, o[name]);
  const known = o['knownObjects'] as Record<string, unknown> | null | undefined;
  if (known !== undefined && (typeof known !== 'object' || known === null || knownNeeds.some((m) => typeof known[m] !== 'function'))) {
    throw new TypeError(`${where}: option "knownObjects" must have ${knownNeeds.map((m) => (m === 'listKeys' ? 'listKeys()' : 'getByKey(key)')).join(' and ')}, got ${describeValue(known)}`);
  }
  return o;
}
