import { filter, map, pipe, type OperatorFunction } from 'rxjs';
import type { InformerEvent } from './informerEvent.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';

/**
 * Turns informer events into the object each one touched: the object of an
 * add or update, and the last known state of a deleted object.
 *
 * A delete inferred from a relist carries a `DeletedFinalStateUnknown`
 * tombstone; its last known state is emitted instead. A tombstone without a
 * last state has no object to emit and is skipped. Use this (kube-runtime's
 * `touched_objects`) when deletions matter too, for instance to map every
 * change of a child to its owner.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource, touchedObjects } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const pods = informer(kubeSource(kc, 'v1/pods'));
 * pods
 *   .pipe(touchedObjects())
 *   .subscribe((pod) => console.log('changed:', pod.metadata?.name));
 * ```
 *
 * @returns an operator from `InformerEvent<T>` to `T`.
 */
export function touchedObjects<T>(): OperatorFunction<InformerEvent<T>, T> {
  return pipe(
    map((event) => (event.type === 'delete' ? unwrapTombstone(event.obj) : event.obj)),
    // A tombstone with no last state is the only source of `undefined`; T itself may not be optional.
    filter((obj): obj is T => obj !== undefined),
  );
}
