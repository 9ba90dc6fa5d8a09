import type { KubeObject } from '../store/types.js';

/**
 * Derives the value whose change matters from an object, a scalar compared
 * with `Object.is`. `undefined` means "cannot tell for this object" (for
 * instance a pod has no `generation`).
 */
export type Predicate<T> = (obj: T) => string | number | bigint | boolean | null | undefined;

/**
 * The object's `metadata.generation`, which the API server bumps on every
 * change to the spec (but not to status or metadata) of resources that
 * track it. Objects without a generation (pods, config maps) give
 * `undefined`, so this predicate alone lets them all through.
 *
 * ## Example
 * ```ts
 * import { appliedObjects, generationChanged, predicateFilter } from 'rxkube';
 * import type { Informer } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: Informer<V1Deployment>;
 * deployments.pipe(appliedObjects(), predicateFilter(generationChanged));
 * ```
 *
 * @param obj the object to read.
 * @returns the generation, or `undefined` when the object has none.
 */
export function generationChanged(obj: KubeObject): number | undefined {
  return obj.metadata?.generation;
}

/**
 * The object's `metadata.resourceVersion`, which changes on every write; it
 * drops only exact repeats such as resync updates.
 *
 * ## Example
 * ```ts
 * import { predicateFilter, resourceVersionChanged } from 'rxkube';
 * import type { Informer } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const pods: Informer<V1Pod>;
 * pods.pipe(predicateFilter(resourceVersionChanged));
 * ```
 *
 * @param obj the object to read.
 * @returns the resourceVersion, or `undefined` when the object has none.
 */
export function resourceVersionChanged(obj: KubeObject): string | undefined {
  return obj.metadata?.resourceVersion;
}

/**
 * The object's labels as one canonical string (key order does not matter;
 * no labels and an empty label map are the same value).
 *
 * ## Example
 * ```ts
 * import { appliedObjects, labelsChanged, predicateFilter } from 'rxkube';
 * import type { Informer } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const pods: Informer<V1Pod>;
 * pods.pipe(appliedObjects(), predicateFilter(labelsChanged));
 * ```
 *
 * @param obj the object to read.
 * @returns a string that changes exactly when the labels change.
 */
export function labelsChanged(obj: KubeObject): string {
  return canonicalMap(obj.metadata?.labels);
}

/**
 * The object's annotations as one canonical string (key order does not
 * matter; no annotations and an empty map are the same value).
 *
 * ## Example
 * ```ts
 * import { annotationsChanged, appliedObjects, predicateFilter } from 'rxkube';
 * import type { Informer } from 'rxkube';
 * import type { V1Service } from '@kubernetes/client-node';
 * declare const services: Informer<V1Service>;
 * services.pipe(appliedObjects(), predicateFilter(annotationsChanged));
 * ```
 *
 * @param obj the object to read.
 * @returns a string that changes exactly when the annotations change.
 */
export function annotationsChanged(obj: KubeObject): string {
  return canonicalMap(obj.metadata?.annotations);
}

function canonicalMap(map: Readonly<Record<string, string>> | undefined): string {
  if (map === undefined) return '[]';
  // Sorting by key makes two maps with the same entries equal whatever order the server serialised them in.
  return JSON.stringify(
    Object.keys(map)
      .sort()
      .map((key) => [key, map[key]]),
  );
}
