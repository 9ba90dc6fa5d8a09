import type { StoredObject } from './storedObject.js';
import type { ResourceType } from './resources.js';

// How the storage's keys are laid out and read: etcd's order, namespaces as key ranges, and the view of a
// resource at an older resourceVersion.

/** A read-only view of one resource at one resourceVersion, keys in etcd order. */
export interface Snapshot {
  readonly rv: number;
  readonly keys: readonly string[];
  /** The object under `keys[i]`. */
  at(i: number): StoredObject | undefined;
}

/** The store key of an object: `ns/name`, or `name` for cluster-scoped resources. */
export function objectKey(type: ResourceType, namespace: string, name: string): string {
  return type.namespaced ? `${namespace}/${name}` : name;
}

/** The index range `[from, to)` of keys in `namespace` (all keys when undefined). */
export function keyRange(keys: readonly string[], type: ResourceType, namespace: string | undefined): [number, number] {
  if (namespace === undefined || !type.namespaced) return [0, keys.length];
  // '0' is the character after '/', so [ns/, ns0) holds exactly the namespace's keys.
  return [lowerBound(keys, `${namespace}/`), lowerBound(keys, `${namespace}0`)];
}

/** First index whose key is ≥ `key`. */
export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The view at `rv` of a resource whose current view is `current`, given
 * `overlay`: for every key written after `rv`, its version at `rv`
 * (undefined where it did not exist then). Every object is read now, while
 * the table still matches `overlay`: the view is kept for later pages, and a
 * later write must not show through it.
 *
 * @param getCurrent the current version of a key.
 */
export function pastSnapshot(rv: number, current: Snapshot, overlay: ReadonlyMap<string, StoredObject | undefined>, getCurrent: (key: string) => StoredObject | undefined): Snapshot {
  const extra = [...overlay.keys()].filter((k) => getCurrent(k) === undefined).sort();
  const keys: string[] = [];
  const objects: StoredObject[] = [];
  let i = 0;
  let j = 0;
  while (i < current.keys.length || j < extra.length) {
    const a = current.keys[i];
    const b = extra[j];
    const fromCurrent = b === undefined || (a !== undefined && a < b);
    const k = fromCurrent ? a : b;
    if (k === undefined) break;
    const o = overlay.has(k) ? overlay.get(k) : getCurrent(k);
    if (fromCurrent) i++;
    else j++;
    if (o === undefined) continue;
    keys.push(k);
    objects.push(o);
  }
  return { rv, keys, at: (n) => objects[n] };
}
