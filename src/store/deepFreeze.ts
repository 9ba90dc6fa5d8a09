// Deep freezing of stored objects. Internal: the indexer freezes what it
// stores so a handler cannot corrupt the cache by mutating what it is given.

/**
 * Freezes `value` and everything reachable from it, in place, and returns it.
 * A subtree that is already frozen is skipped: rxkube only ever freezes
 * deeply, so this makes re-storing a stored object (resync, relist of an
 * unchanged object, an update sharing parts with the old one) almost free.
 * Typed arrays cannot be frozen and are left alone; Map, Set and Date keep
 * their internal state mutable, as `Object.freeze` cannot reach it.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) freezeNode(value);
  return value;
}

function freezeNode(node: object): void {
  if (ArrayBuffer.isView(node)) return;
  Object.freeze(node);
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child: unknown = node[i];
      if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) freezeNode(child);
    }
    return;
  }
  for (const k in node) {
    const child: unknown = (node as Record<string, unknown>)[k];
    if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) freezeNode(child);
  }
}
