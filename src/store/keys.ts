import { DeletedFinalStateUnknown } from './DeletedFinalStateUnknown.js';
import type { KubeObject } from './types.js';

/**
 * The default store key of an object: `"namespace/name"`, or `"name"` for a
 * cluster-scoped object. A string is taken as an explicit key and returned
 * unchanged (client-go's `ExplicitKey`).
 *
 * Unlike client-go, an object without `metadata.name` is rejected rather than
 * keyed `""` or `"ns/"`, and so is a name or namespace holding a `/` (which
 * the API server never accepts): such keys would collide silently.
 *
 * ## Example
 * ```ts
 * import { metaNamespaceKey } from 'rxkube';
 * metaNamespaceKey({ metadata: { namespace: 'default', name: 'web' } }); // "default/web"
 * metaNamespaceKey({ metadata: { name: 'node-1' } });                    // "node-1"
 * ```
 *
 * @param obj a Kubernetes object, or an explicit key.
 * @returns the key.
 * @throws {TypeError} when the object has no `metadata` or no non-empty string `metadata.name`, or its name or namespace holds a `/`.
 */
export function metaNamespaceKey(obj: KubeObject | string): string {
  if (typeof obj === 'string') return obj;
  const meta = obj?.metadata;
  if (meta === null || typeof meta !== 'object') throw new TypeError('object has no metadata');
  const name = meta.name;
  if (typeof name !== 'string' || name.length === 0) throw new TypeError('object has no metadata.name');
  // No Kubernetes name or namespace holds a '/'; one that did would make "ns/x" and name "ns/x" the same key.
  if (name.includes('/')) throw new TypeError(`metadata.name ${JSON.stringify(name)} contains '/'`);
  const ns = meta.namespace;
  if (typeof ns !== 'string' || ns.length === 0) return name;
  if (ns.includes('/')) throw new TypeError(`metadata.namespace ${JSON.stringify(ns)} contains '/'`);
  return `${ns}/${name}`;
}

/**
 * Like {@link metaNamespaceKey}, but a `DeletedFinalStateUnknown` tombstone
 * is keyed by the key it carries.
 *
 * ## Example
 * ```ts
 * import { DeletedFinalStateUnknown } from 'rxkube';
 * import { deletionHandlingMetaNamespaceKey } from 'rxkube/core';
 * deletionHandlingMetaNamespaceKey(new DeletedFinalStateUnknown('default/web', undefined)); // "default/web"
 * ```
 *
 * @param obj an object, an explicit key, or a tombstone.
 * @returns the key.
 * @throws {TypeError} as {@link metaNamespaceKey} for an object without a name.
 */
export function deletionHandlingMetaNamespaceKey(obj: KubeObject | string | DeletedFinalStateUnknown<unknown>): string {
  return obj instanceof DeletedFinalStateUnknown ? obj.key : metaNamespaceKey(obj);
}

/**
 * Splits a key made by {@link metaNamespaceKey} into its parts: `"name"` →
 * namespace `""`; `"ns/name"` → both; anything with more slashes is rejected.
 *
 * ## Example
 * ```ts
 * import { splitMetaNamespaceKey } from 'rxkube';
 * splitMetaNamespaceKey('default/web'); // { namespace: 'default', name: 'web' }
 * splitMetaNamespaceKey('node-1');      // { namespace: '', name: 'node-1' }
 * ```
 *
 * @param key a store key.
 * @returns the namespace (`""` when cluster-scoped) and the name.
 * @throws {TypeError} `unexpected key format: "<key>"` for more than one `/`.
 */
export function splitMetaNamespaceKey(key: string): { readonly namespace: string; readonly name: string } {
  const slash = key.indexOf('/');
  if (slash === -1) return { namespace: '', name: key };
  if (key.indexOf('/', slash + 1) !== -1) throw new TypeError(`unexpected key format: ${JSON.stringify(key)}`);
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
