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
  if (unfrozen(value)) freezeTree(value, 0);
  return value;
}

/**
 * How deep the walk recurses before it goes on with an explicit stack: recursion is a quarter faster on the
 * objects of every list and update, and Kubernetes objects seldom nest half this deep.
 */
const RECURSION_DEPTH = 64;

/** Freezes `node`, found unfrozen at `depth`, and what it holds: recursively, then with {@link freezeNode}'s stack. */
function freezeTree(node: object, depth: number): void {
  if (depth >= RECURSION_DEPTH) {
    freezeNode(node);
    return;
  }
  // Frozen before its members are walked, so a cycle back to it, or a second path to it, finds it frozen.
  Object.freeze(node);
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child: unknown = node[i];
      if (unfrozen(child)) freezeTree(child, depth + 1);
    }
    return;
  }
  for (const k in node) {
    const child = (node as Record<string, unknown>)[k];
    if (unfrozen(child)) freezeTree(child, depth + 1);
  }
}

/**
 * Freezes with an explicit stack, so an object nested a hundred thousand deep cannot overflow the call stack.
 * Each object is frozen when it is found and pushed once, so an object reached by many paths (a transform's shared
 * parts) is walked once; each is checked once per path that reaches it.
 */
function freezeNode(root: object): void {
  Object.freeze(root);
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as object;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) found(node[i], stack);
      continue;
    }
    for (const k in node) found((node as Record<string, unknown>)[k], stack);
  }
}

/** Freezes `child` and queues its members, when it is an object still to freeze. */
function found(child: unknown, stack: object[]): void {
  if (!unfrozen(child)) return;
  Object.freeze(child);
  stack.push(child);
}

/** An object still to freeze: not yet frozen, and no typed array (which cannot be). */
function unfrozen(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value);
}
