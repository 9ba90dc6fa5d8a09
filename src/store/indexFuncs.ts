import { labelKeyProblem } from './labelValidation.js';
import type { IndexFunc, KubeObject } from './types.js';
import { describeValue } from '../options/validate.js';

const NONE: readonly string[] = Object.freeze([]);

/** The name client-go gives the namespace index; `list({ namespace })` uses an index of this name built with {@link byNamespace}. */
export const namespaceIndex = 'namespace';

// One frozen one-element array per namespace, so indexing by namespace allocates nothing.
// Namespaces are few; the cap only guards against a pathological stream of names.
const namespaceValues = new Map<string, readonly string[]>();
const MAX_CACHED_NAMESPACES = 10_000;

/**
 * Indexes an object by its namespace: `["<namespace>"]`, or `[""]` for a
 * cluster-scoped object (client-go's `MetaNamespaceIndexFunc`). Register it
 * under {@link namespaceIndex} and `list({ namespace })` becomes a lookup
 * instead of a scan.
 *
 * ## Example
 * ```ts
 * import { byNamespace } from 'rxkube';
 * import { createIndexer, namespaceIndex } from 'rxkube/core';
 * const store = createIndexer({ indexers: { [namespaceIndex]: byNamespace } });
 * store.add({ metadata: { namespace: 'team-a', name: 'web' } });
 * store.byIndex(namespaceIndex, 'team-a'); // [the web object]
 * ```
 *
 * @param obj a Kubernetes object.
 * @returns its namespace as the only value.
 */
export const byNamespace: IndexFunc<KubeObject> = (obj: KubeObject): readonly string[] => {
  const ns = obj?.metadata?.namespace;
  const value = typeof ns === 'string' ? ns : '';
  let values = namespaceValues.get(value);
  if (values === undefined) {
    values = Object.freeze([value]);
    if (namespaceValues.size < MAX_CACHED_NAMESPACES) namespaceValues.set(value, values);
  }
  return values;
};

/**
 * Makes an index function that files an object under the value of one label;
 * objects without the label are not indexed.
 *
 * ## Example
 * ```ts
 * import { byLabel } from 'rxkube';
 * import { createIndexer } from 'rxkube/core';
 * const store = createIndexer({ indexers: { app: byLabel('app.kubernetes.io/name') } });
 * store.add({ metadata: { name: 'web-1', labels: { 'app.kubernetes.io/name': 'web' } } });
 * store.indexKeys('app', 'web'); // ["web-1"]
 * ```
 *
 * @param key the label key.
 * @returns the index function.
 * @throws {TypeError} when `key` is not a valid label key.
 */
export function byLabel(key: string): IndexFunc<KubeObject> {
  if (typeof key !== 'string') throw new TypeError(`byLabel: key must be a string, got ${describeValue(key)}`);
  const problem = labelKeyProblem(key);
  if (problem !== undefined) throw new TypeError(`byLabel: invalid key ${JSON.stringify(key)}: ${problem}`);
  return (obj: KubeObject): readonly string[] => {
    const labels = obj?.metadata?.labels;
    if (labels === undefined || labels === null || !Object.hasOwn(labels, key)) return NONE;
    const value: unknown = labels[key];
    return typeof value === 'string' ? [value] : NONE;
  };
}

/**
 * Indexes an object under the UID of every owner in
 * `metadata.ownerReferences`, so "what does this ReplicaSet own?" is one
 * lookup.
 *
 * ## Example
 * ```ts
 * import { byOwnerUid } from 'rxkube';
 * import { createIndexer } from 'rxkube/core';
 * import type { V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
 * declare const replicaSet: V1ReplicaSet;
 *
 * const pods = createIndexer<V1Pod>({ indexers: { owner: byOwnerUid } });
 * const owned = pods.byIndex('owner', replicaSet.metadata?.uid ?? '');
 * ```
 *
 * @param obj a Kubernetes object.
 * @returns the owners' UIDs (none when it has no owners).
 */
export const byOwnerUid: IndexFunc<KubeObject> = (obj: KubeObject): readonly string[] => {
  const refs = obj?.metadata?.ownerReferences;
  if (!Array.isArray(refs) || refs.length === 0) return NONE;
  if (refs.length === 1) {
    const uid: unknown = (refs[0] as { uid?: unknown } | undefined)?.uid;
    return typeof uid === 'string' && uid !== '' ? [uid] : NONE;
  }
  const out: string[] = [];
  for (const ref of refs as readonly ({ uid?: unknown } | undefined)[]) {
    const uid = ref?.uid;
    if (typeof uid === 'string' && uid !== '') out.push(uid);
  }
  return out;
};

/**
 * Indexes an object under the UID of its controller: the owner reference
 * with `controller: true` (at most one, as the API server enforces).
 *
 * ## Example
 * ```ts
 * import { byControllerUid } from 'rxkube';
 * import { createIndexer } from 'rxkube/core';
 * import type { V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
 * declare const replicaSet: V1ReplicaSet;
 *
 * const pods = createIndexer<V1Pod>({ indexers: { controller: byControllerUid } });
 * const managed = pods.byIndex('controller', replicaSet.metadata?.uid ?? '');
 * ```
 *
 * @param obj a Kubernetes object.
 * @returns the controller's UID, or nothing when no owner is the controller.
 */
export const byControllerUid: IndexFunc<KubeObject> = (obj: KubeObject): readonly string[] => {
  const refs = obj?.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return NONE;
  for (const ref of refs as readonly ({ uid?: unknown; controller?: unknown } | undefined)[]) {
    if (ref?.controller === true && typeof ref.uid === 'string' && ref.uid !== '') return [ref.uid];
  }
  return NONE;
};

/**
 * Makes an index function that files an object under the value at a dotted
 * path (`spec.nodeName`, `status.phase`, `spec.volumes.0.name`). Strings are
 * used as they are; numbers and booleans as their text; an array of such
 * scalars gives one value per element (so `spec.finalizers` or
 * `metadata.finalizers` index under each entry); a missing path, `null`, an
 * object or an array element that is not a scalar gives nothing.
 *
 * ## Example
 * ```ts
 * import { byField } from 'rxkube';
 * import { createIndexer } from 'rxkube/core';
 * const pods = createIndexer({ indexers: { node: byField('spec.nodeName') } });
 * pods.byIndex('node', 'node-1'); // pods scheduled on node-1
 * ```
 *
 * @param path the dotted path into the object.
 * @returns the index function.
 * @throws {TypeError} when `path` is empty or has an empty segment.
 */
export function byField(path: string): IndexFunc<unknown> {
  if (typeof path !== 'string') throw new TypeError(`byField: path must be a string, got ${describeValue(path)}`);
  const segments = path.split('.');
  if (segments.some((s) => s.length === 0)) throw new TypeError(`byField: path ${JSON.stringify(path)} has an empty segment`);
  return (obj: unknown): readonly string[] => {
    let cur: unknown = obj;
    for (let i = 0; i < segments.length; i++) {
      if (cur === null || typeof cur !== 'object') return NONE;
      const seg = segments[i] as string;
      if (!Object.hasOwn(cur, seg)) return NONE;
      cur = (cur as Record<string, unknown>)[seg];
    }
    const single = scalarText(cur);
    if (single !== undefined) return [single];
    if (!Array.isArray(cur)) return NONE;
    const out: string[] = [];
    for (const el of cur as readonly unknown[]) {
      const text = scalarText(el);
      if (text !== undefined) out.push(text);
    }
    return out;
  };
}

function scalarText(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(v);
    default:
      return undefined;
  }
}
