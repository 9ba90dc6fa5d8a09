import { filter, map, pipe, type OperatorFunction } from 'rxjs';
import type { InformerEvent } from './informerEvent.js';

/**
 * Turns informer events into the objects that now exist: the object of every
 * add and update, nothing for deletes.
 *
 * This is the stream a controller reconciling desired state usually wants
 * (kube-runtime's `applied_objects`): each value is the newest state the
 * cache holds for that object at the time of the event.
 *
 * ## Example
 * ```ts
 * import { appliedObjects, informer, kubeSource } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const deployments = informer(kubeSource(kc, 'apps/v1/deployments'));
 * deployments
 *   .pipe(appliedObjects())
 *   .subscribe((d) => console.log(d.metadata?.name, d.status?.readyReplicas));
 * ```
 *
 * @returns an operator from `InformerEvent<T>` to `T`.
 */
export function appliedObjects<T>(): OperatorFunction<InformerEvent<T>, T> {
  return pipe(
    filter((event): event is Extract<InformerEvent<T>, { type: 'add' | 'update' }> => event.type !== 'delete'),
    map((event) => event.obj),
  );
}
