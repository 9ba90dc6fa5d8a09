import { mergeMap, pipe, type OperatorFunction } from 'rxjs';
import type { InformerEvent } from './informerEvent.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../store/types.js';
import { booleanOption, describeValue } from '../options/validate.js';

/** Which owner references of a child count, for `ownerKeys` and `joinOwner`. */
export interface OwnerKeysOptions {
  /**
   * Only owners of this kind, e.g. `'ReplicaSet'`.
   * @default any kind
   */
  readonly kind?: string;
  /**
   * Only owners of this API group, written as an apiVersion (`'apps/v1'`,
   * `'v1'` for the core group). The version part is ignored, as
   * controller-runtime does: a reference written as `apps/v1beta2` names the
   * same object as one written as `apps/v1`.
   * @default any group
   */
  readonly apiVersion?: string;
  /**
   * Only the owner reference marked `controller: true` (there is at most
   * one). Set to `false` to follow every matching owner reference.
   * @default true
   */
  readonly controllerOnly?: boolean;
  /**
   * Whether the owner kind is namespaced. Owner keys are `namespace/name`
   * with the child's namespace (Kubernetes only lets a namespaced object own
   * children in its own namespace); set to `false` for cluster-scoped owners,
   * whose key is the bare name.
   * @default true
   */
  readonly namespaced?: boolean;
}

/** One owner a child points at: its store key and the UID the reference names. */
export interface OwnerPointer {
  readonly key: string;
  readonly uid: string;
}

/** Options after validation, with defaults applied and `apiVersion` reduced to its group. */
export type ResolvedOwnerOptions = Pick<OwnerKeysOptions, 'kind'> &
  Required<Pick<OwnerKeysOptions, 'controllerOnly' | 'namespaced'>> & { readonly group: string | undefined };

/**
 * Maps each child event to the store key of the child's controlling owner,
 * so a change to a pod can trigger its ReplicaSet (controller-runtime's
 * `EnqueueRequestForOwner`).
 *
 * - add / delete: the owner keys of the object (a tombstone's last state; a
 *   tombstone without one yields nothing);
 * - update: the owner keys of the old and of the new object, each once, old
 *   ones first — when a child is re-parented both owners hear about it;
 * - a child with no matching owner reference yields nothing.
 *
 * Keys are emitted one by one, in reference order, so the result pipes
 * straight into `debounceByKey` or a work queue.
 *
 * ## Example
 * ```ts
 * import { debounceByKey, informer, kubeSource, ownerKeys } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const pods = informer(kubeSource(kc, 'v1/pods'));
 * pods
 *   .pipe(ownerKeys({ kind: 'ReplicaSet', apiVersion: 'apps/v1' }), debounceByKey(100))
 *   .subscribe((rsKey) => console.log('reconcile replicaset', rsKey)); // "default/web-7d4f8b"
 * ```
 *
 * @param options which owner references count; see {@link OwnerKeysOptions}.
 * @returns an operator from the child's `InformerEvent<T>` to owner keys.
 * @throws {TypeError} when an option has the wrong type.
 */
export function ownerKeys<T extends KubeObject>(options?: OwnerKeysOptions): OperatorFunction<InformerEvent<T>, string> {
  const resolved = resolveOwnerOptions('ownerKeys', options);
  return pipe(
    mergeMap((event: InformerEvent<T>) => {
      switch (event.type) {
        case 'add':
          return ownerPointers(event.obj, resolved).map((owner) => owner.key);
        case 'update':
          return [
            ...new Set(
              [...ownerPointers(event.oldObj, resolved), ...ownerPointers(event.obj, resolved)].map((owner) => owner.key),
            ),
          ];
        case 'delete':
          return ownerPointers(unwrapTombstone(event.obj), resolved).map((owner) => owner.key);
      }
    }),
  );
}

/**
 * Validates owner options and applies their defaults.
 * @internal shared with joinOwner; not part of the public surface.
 */
export function resolveOwnerOptions(operator: string, options: OwnerKeysOptions | undefined): ResolvedOwnerOptions {
  if (options === undefined) return { kind: undefined, group: undefined, controllerOnly: true, namespaced: true };
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${operator}: options must be an object, got ${describeValue(options)}`);
  }
  const { kind, apiVersion } = options;
  if (kind !== undefined && (typeof kind !== 'string' || kind.length === 0)) {
    throw new TypeError(`${operator}: options.kind must be a non-empty string, got ${describeValue(kind)}`);
  }
  if (apiVersion !== undefined && (typeof apiVersion !== 'string' || !/^([^/\s]+\/)?[^/\s]+$/.test(apiVersion))) {
    throw new TypeError(
      `${operator}: options.apiVersion must look like "group/version" or "version", got ${describeValue(apiVersion)}`,
    );
  }
  const controllerOnly = booleanOption(operator, 'controllerOnly', options.controllerOnly, true);
  const namespaced = booleanOption(operator, 'namespaced', options.namespaced, true);
  return { kind, group: apiVersion === undefined ? undefined : groupOf(apiVersion), controllerOnly, namespaced };
}

/**
 * The owners of `child` that match `options`, each once, in reference order.
 * @internal shared with joinOwner; not part of the public surface.
 */
export function ownerPointers(child: KubeObject | undefined, options: ResolvedOwnerOptions): OwnerPointer[] {
  const meta = child?.metadata;
  const refs = meta?.ownerReferences;
  if (meta === undefined || refs === undefined) return [];
  const namespace = options.namespaced && meta.namespace ? meta.namespace : undefined;
  const pointers: OwnerPointer[] = [];
  const keys = new Set<string>();
  for (const ref of refs) {
    if (options.controllerOnly && ref.controller !== true) continue;
    if (options.kind !== undefined && ref.kind !== options.kind) continue;
    if (options.group !== undefined && groupOf(ref.apiVersion ?? '') !== options.group) continue;
    if (typeof ref.name !== 'string' || ref.name.length === 0) continue;
    const key = namespace === undefined ? ref.name : `${namespace}/${ref.name}`;
    if (keys.has(key)) continue;
    keys.add(key);
    pointers.push({ key, uid: ref.uid });
  }
  return pointers;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}
