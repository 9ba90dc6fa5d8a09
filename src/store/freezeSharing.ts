// Freezing an object that replaces another, reusing the parts the two have in
// common. Internal: the indexer stores objects this way when it freezes them.

import { deepFreeze } from './deepFreeze.js';

/**
 * How deep the comparison goes; below it a new part is frozen as it is. A
 * recursion this deep is safe on any stack, and Kubernetes objects seldom
 * nest half as deep.
 */
const MAX_DEPTH = 64;

/**
 * Deep-freezes `nu`, the object that replaces `old` under the same key,
 * taking from `old` every part equal to the new one: an unchanged subtree
 * (plain objects and arrays, equal key by key and in length) becomes old's
 * own, already frozen, and an equal string becomes old's instance (PF-49).
 * `nu` itself stays the object stored; only its parts are swapped, before
 * anyone else sees it. What the two share then lives once, and the new
 * copies die young: an update keeps a few hundred bytes new instead of a
 * whole object, so far less is promoted to the old generation.
 *
 * Shares nothing, and freezes `nu` as {@link deepFreeze} does, when there is
 * no `old` or `nu` is already frozen. Only plain objects and arrays are
 * compared, and only when `old`'s are frozen; anything else (a Date, a Map,
 * a class instance a transform made) is new. Cycles a transform made end at
 * the depth bound, where the rest is frozen whole.
 *
 * @param nu the new object, not yet seen by anyone but the store
 * @param old the frozen object it replaces, if any
 */
export function freezeSharing(nu: object, old: unknown): void {
  if (old === undefined || old === nu || Object.isFrozen(nu)) {
    deepFreeze(nu);
    return;
  }
  // The root stays `nu` even when everything under it is equal: the caller stores and hands on that object.
  if (share(nu, old, 0) === old) deepFreeze(nu);
}

/** `nu`'s value in the store: `old` when the two are equal, else `nu` with its equal parts taken from `old`, frozen. */
function share(nu: unknown, old: unknown, depth: number): unknown {
  if (typeof nu !== 'object' || nu === null) return nu === old ? old : nu;
  if (nu === old || Object.isFrozen(nu)) return nu;
  if (!comparable(nu) || !comparable(old) || Array.isArray(nu) !== Array.isArray(old) || !Object.isFrozen(old) || depth >= MAX_DEPTH) {
    return deepFreeze(nu);
  }
  const into = nu as Record<string | number, unknown>;
  const from = old as Record<string | number, unknown>;
  let same = true;
  if (Array.isArray(nu)) {
    const length = nu.length;
    if (length !== (old as unknown[]).length) same = false;
    for (let i = 0; i < length; i++) {
      const v = into[i];
      const was = from[i];
      const s = share(v, was, depth + 1);
      if (s !== v) into[i] = s;
      if (s !== was) same = false;
    }
  } else {
    let keys = 0;
    for (const k in into) {
      keys++;
      const v = into[k];
      const was = from[k];
      const s = share(v, was, depth + 1);
      if (s !== v) into[k] = s;
      if (s !== was) same = false;
    }
    if (same) {
      let oldKeys = 0;
      for (const _ in from) oldKeys++;
      same = oldKeys === keys;
    }
  }
  return same ? old : Object.freeze(nu);
}

/** A plain object or array, as JSON gives: what the comparison may look into. */
function comparable(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return true;
  return Object.getPrototypeOf(value) === Object.prototype;
}
