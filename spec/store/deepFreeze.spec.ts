import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../src/store/deepFreeze.js';

/** Every object and array reachable from `value`, each once. */
function nodes(value: unknown, seen = new Set<object>()): Set<object> {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || seen.has(v) || ArrayBuffer.isView(v)) continue;
    seen.add(v);
    for (const child of Object.values(v)) stack.push(child);
  }
  return seen;
}

/** An object nested `depth` deep, alternating objects and arrays, with a leaf object at the bottom. */
function nested(depth: number): { root: Record<string, unknown>; leaf: Record<string, unknown> } {
  const leaf: Record<string, unknown> = { name: 'leaf', list: [1, { x: 2 }] };
  let node: unknown = leaf;
  for (let d = 0; d < depth; d++) node = d % 2 === 0 ? [node, 'pad'] : { child: node, n: d };
  return { root: { top: node }, leaf };
}

describe('deepFreeze', () => {
  it('property: freezes every object and array of any JSON value, and returns it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        expect(deepFreeze(value)).toBe(value);
        for (const n of nodes(value)) expect(Object.isFrozen(n)).toBe(true);
      }),
    );
  });

  it('freezes all the way down on either side of the depth where it stops recursing, and 100,000 deep', () => {
    for (const depth of [62, 63, 64, 65, 66, 129, 100_000]) {
      const { root, leaf } = nested(depth);
      deepFreeze(root);
      expect(Object.isFrozen(leaf), `${depth}`).toBe(true);
      expect(Object.isFrozen(leaf['list']), `${depth}`).toBe(true);
      if (depth < 1000) for (const n of nodes(root)) expect(Object.isFrozen(n), `${depth}`).toBe(true);
    }
  });

  it('ends on cycles and shared parts, above and below that depth, and leaves typed arrays alone', () => {
    for (const depth of [3, 64, 200]) {
      const { root, leaf } = nested(depth);
      const shared = { s: [new Uint8Array([1, 2])] };
      leaf['back'] = root;
      leaf['shared'] = shared;
      root['shared'] = shared;
      deepFreeze(root);
      expect(Object.isFrozen(shared), `${depth}`).toBe(true);
      expect(Object.isFrozen(shared.s), `${depth}`).toBe(true);
      expect(Object.isFrozen(shared.s[0]), `${depth}`).toBe(false);
      for (const n of nodes(root)) expect(Object.isFrozen(n), `${depth}`).toBe(true);
    }
  });

  it('skips a subtree that is already frozen', () => {
    const inner = { mutable: { a: 1 } };
    Object.freeze(inner);
    const root = { inner, other: { b: 2 } };
    deepFreeze(root);
    expect(Object.isFrozen(root.other)).toBe(true);
    expect(Object.isFrozen(inner.mutable)).toBe(false);
  });
});
