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
 * taking from `old` every unchanged subtree (plain objects and arrays, equal
 * key by key and in length): the new object holds old's own, already frozen
 * (PF-49). `nu` itself stays the object stored; only its parts are swapped,
 * before anyone else sees it. What the two share then lives once, and the
 * new copies die young: an update keeps only what changed as new objects,
 * so far less is promoted to the old generation.
 *
 * Shares nothing, and freezes `nu` as {@link deepFreeze} does, when there is
 * no `old`, `old` is not frozen, or `nu` already is. Only plain objects and
 * arrays are compared; anything else (a Date, a Map, a class instance a
 * transform made) is new. `old` is taken as frozen all through, as
 * everything the store freezes is. Cycles a transform made end at the depth
 * bound, where the rest is frozen whole.
 *
 * @param nu the new object, not yet seen by anyone but the store
 * @param old the frozen object it replaces, if any
 */
export function freezeSharing(nu: object, old: unknown): void {
  if (old === nu || typeof old !== 'object' || old === null || !Object.isFrozen(old) || Object.isFrozen(nu)) {
    deepFreeze(nu);
    return;
  }
  if (share(nu, old, 0) !== old) return;
  // Everything is equal (a relist or resync of an unchanged object): the root stays `nu`, since the caller stores
  // and hands on that object, and takes every part from `old`, as a root that differs would.
  const into = nu as Record<string | number, unknown>;
  const from = old as Record<string | number, unknown>;
  if (Array.isArray(nu)) for (let i = 0; i < nu.length; i++) take(into, from, i);
  else for (const k in into) take(into, from, k);
  Object.freeze(nu);
}

/**
 * `nu`'s value in the store: `old` when the two are equal, else `nu`, frozen, with its equal parts taken from
 * `old`. Each check here runs for every object of every update, so primitives are compared where they are read
 * (never passed down), and what `old` is made of is taken on trust (frozen, as the store keeps it). A part is
 * written into `nu` only once `nu` is known to differ: the parts of an equal subtree are dropped with it.
 */
function share(nu: object, old: unknown, depth: number): unknown {
  // A part of `nu` that is already frozen (a transform may reuse one) is compared like any other: `take` cannot write
  // into it, so it keeps its own parts, and it is not asked for one by one for every part of every update.
  if (nu === old || typeof old !== 'object' || old === null || depth >= MAX_DEPTH) return deepFreeze(nu);
  const array = Array.isArray(nu);
  if (!plain(nu, array) || !plain(old, array)) return deepFreeze(nu);
  const into = nu as Record<string | number, unknown>;
  const from = old as Record<string | number, unknown>;
  let same = true;
  if (array) {
    const length = (nu as unknown[]).length;
    if (length !== (old as unknown[]).length) same = false;
    for (let i = 0; i < length; i++) {
      if (equalAt(into, from, i, depth)) {
        if (!same) take(into, from, i);
      } else if (same) {
        same = false;
        for (let j = 0; j < i; j++) take(into, from, j);
      }
    }
  } else {
    let keys = 0;
    for (const k in into) {
      keys++;
      if (equalAt(into, from, k, depth)) {
        if (!same) take(into, from, k);
      } else if (same) {
        same = false;
        for (const j in into) {
          if (j === k) break;
          take(into, from, j);
        }
      }
    }
    if (same) {
      let oldKeys = 0;
      for (const _ in from) oldKeys++;
      if (oldKeys !== keys) {
        same = false;
        for (const j in into) take(into, from, j);
      }
    }
  }
  return same ? old : Object.freeze(nu);
}

/** Whether `into[k]` equals `from[k]`; a differing part of `into` comes back frozen, with its own equal parts taken. */
function equalAt(into: Record<string | number, unknown>, from: Record<string | number, unknown>, k: string | number, depth: number): boolean {
  const v = into[k];
  const was = from[k];
  if (typeof v !== 'object' || v === null) {
    if (v !== was) return false;
    // -0 and 0 are === but not the same value; JSON can carry either.
    if (v === 0) return Object.is(v, was);
    // What `from` only inherits (a method of Object.prototype) or lacks (undefined) is no member of it.
    return (v !== undefined && typeof v !== 'function') || Object.hasOwn(from, k);
  }
  return share(v, was, depth + 1) === was;
}

/**
 * Puts `from[k]` in place of `into[k]`, which {@link equalAt} found equal to it. A member that cannot be set (a
 * getter, a read-only property a transform made, a frozen part) keeps its own part, frozen. An equal string is taken
 * too: the parse made a copy of every long one, and in a part that changed (the metadata of every update) those
 * copies would otherwise be kept, each surviving the young generation to be promoted and later collected. The write
 * is a plain assignment, which throws in this module's strict code where it cannot be made; `Reflect.set`, which says
 * so without throwing, is a slower call on the path of every update.
 */
function take(into: Record<string | number, unknown>, from: Record<string | number, unknown>, k: string | number): void {
  const was = from[k];
  if (typeof was !== 'object' || was === null) {
    if (typeof was === 'string') {
      try {
        into[k] = was;
      } catch {
        // Kept as it is: a string needs no freezing.
      }
    }
    return;
  }
  const v = into[k];
  if (v === was) return;
  try {
    into[k] = was;
  } catch {
    deepFreeze(v);
  }
}

/** A plain object or array, as JSON gives: one the comparison may look into. */
function plain(value: object, array: boolean): boolean {
  return Object.getPrototypeOf(value) === (array ? Array.prototype : Object.prototype);
}
