import type { ResourceType } from './resources.js';
import type { Storage } from './storage.js';

// What a namespace's and a CRD's deletion share: delete everything of some resources, as their
// controllers in kube-apiserver do, and say how much is still held by finalizers.

/**
 * Deletes every object of `types` (in `namespace`, when given) that is not
 * already being deleted, each store once however many resource versions
 * serve it, and counts what is still there: objects whose finalizers hold them.
 *
 * @param storage the simulator's storage.
 * @param types the resources to empty.
 * @param namespace only this namespace's objects; all of them when omitted.
 * @returns how many objects remain.
 */
export function deleteEvery(storage: Storage, types: Iterable<ResourceType>, namespace?: string): number {
  const stores = new Set<ResourceType>();
  let remaining = 0;
  for (const type of types) {
    // The versions of one CRD share one store: its objects are listed and deleted once.
    const store = type.storage ?? type;
    if (stores.has(store)) continue;
    stores.add(store);
    for (const o of storage.list(type, namespace)) {
      if ((o.obj['metadata'] as Record<string, unknown>)['deletionTimestamp'] === undefined) storage.delete(type, o.namespace, o.name);
      if (storage.get(type, o.namespace, o.name) !== undefined) remaining++;
    }
  }
  return remaining;
}
