/**
 * PF-49: an object stored over another shares with it every equal part, so an update keeps only what
 * changed as new objects; what is stored is still exactly the new content, deeply frozen, and the old
 * object is never touched.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createIndexer } from '../../src/store/index.js';
import { replaceKeyed } from '../../src/store/indexer.js';

type Obj = Record<string, unknown>;
const store = (freeze = true) => createIndexer<Obj>({ keyFunc: () => 'k', freeze });

/** Every object and array reachable from `value` is frozen. */
function deeplyFrozen(value: unknown, seen = new Set<unknown>()): boolean {
  if (value === null || typeof value !== 'object' || seen.has(value) || ArrayBuffer.isView(value)) return true;
  seen.add(value);
  return Object.isFrozen(value) && Object.values(value).every((v) => deeplyFrozen(v, seen));
}

/** What the specs read of {@link pod}'s objects. */
interface PodShape {
  readonly metadata: { readonly labels: object };
  readonly spec: object;
  readonly status: { readonly conditions: readonly object[] };
}

const pod = (rv: string, image: string, conditions: string[]): Obj => ({
  metadata: { name: 'a', namespace: 'ns', resourceVersion: rv, labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 80 }] }], volumes: [{ name: 'v', emptyDir: {} }] },
  status: { conditions: conditions.map((type) => ({ type, status: 'True' })) },
});

describe('an update shares its unchanged parts with the object it replaces', () => {
  it('takes equal subtrees from the old object, keeps changed ones new, and stores the new root', () => {
    const s = store();
    const old = pod('1', 'img:1', ['Ready']);
    s.update(old);
    const nu = pod('2', 'img:1', ['Ready', 'Scheduled']);
    const expected = structuredClone(nu);
    s.update(nu);
    const stored = s.getByKey('k');
    expect(stored).toBe(nu);
    expect(stored).toEqual(expected);
    expect(deeplyFrozen(stored)).toBe(true);
    const [n, was] = [stored as unknown as PodShape, old as unknown as PodShape];
    // Unchanged: the old object's own parts.
    expect(n.spec).toBe(was.spec);
    expect(n.metadata.labels).toBe(was.metadata.labels);
    // Changed: new objects, with their equal elements shared.
    expect(n.metadata).not.toBe(was.metadata);
    expect(n.status.conditions).not.toBe(was.status.conditions);
    expect(n.status.conditions[0]).toBe(was.status.conditions[0]);
    expect(n.status.conditions[1]).not.toBe(undefined);
  });

  it('an object equal to the one it replaces (a relist of an unchanged object) takes all its parts, and stays the new root', () => {
    const s = store();
    const old = pod('1', 'img:1', ['Ready']);
    s.update(old);
    const nu = pod('1', 'img:1', ['Ready']);
    s.update(nu);
    expect(s.getByKey('k')).toBe(nu);
    expect(nu['metadata']).toBe(old['metadata']);
    expect(nu['spec']).toBe(old['spec']);
    expect(nu['status']).toBe(old['status']);
    expect(Object.isFrozen(nu)).toBe(true);
  });

  it('does not share an object the old one has more keys in, nor an array of another length', () => {
    const s = store();
    const old = { a: { x: 1, y: 2 }, list: [{ v: 1 }, { v: 2 }] };
    s.update(old);
    const nu = { a: { x: 1 }, list: [{ v: 1 }] };
    s.update(nu);
    const stored = s.getByKey('k') as typeof old;
    expect(stored).toEqual({ a: { x: 1 }, list: [{ v: 1 }] });
    expect(stored.a).not.toBe(old.a);
    expect(stored.list).not.toBe(old.list);
    expect(stored.list[0]).toBe(old.list[0]);
  });

  it('compares plain objects and arrays only: a Date, a Map or a class instance is the new one', () => {
    class Box {
      readonly n: number;
      constructor(n: number) {
        this.n = n;
      }
    }
    const s = store();
    const old = { when: new Date(0), map: new Map([['a', 1]]), box: new Box(1), plain: { p: 1 } };
    s.update(old);
    const nu = { when: new Date(5), map: new Map([['a', 2]]), box: new Box(2), plain: { p: 1 } };
    s.update(nu);
    const stored = s.getByKey('k') as typeof old;
    expect(stored.when.getTime()).toBe(5);
    expect(stored.map.get('a')).toBe(2);
    expect(stored.box.n).toBe(2);
    expect(stored.plain).toBe(old.plain);
  });

  it('shares nothing with freeze: false, where objects stay the caller\'s to change', () => {
    const s = store(false);
    const old = pod('1', 'img:1', []);
    s.update(old);
    const nu = pod('2', 'img:1', []);
    s.update(nu);
    expect((s.getByKey('k') as typeof old)['spec']).not.toBe(old['spec']);
    expect(Object.isFrozen(nu)).toBe(false);
  });

  it('keeps parts a transform already took from the old object, and a frozen new object as it is', () => {
    const s = store();
    const old = pod('1', 'img:1', []);
    s.update(old);
    const reused = { ...pod('2', 'img:2', []), metadata: old['metadata'] };
    s.update(reused);
    const stored = s.getByKey('k') as typeof old;
    expect(stored['metadata']).toBe(old['metadata']);
    expect((stored['spec'] as { containers: { image: string }[] }).containers[0]?.image).toBe('img:2');
    const frozen = Object.freeze({ ...pod('3', 'img:3', []) });
    s.update(frozen);
    expect(s.getByKey('k')).toBe(frozen);
  });

  it('compares down to a bound and freezes deeper parts whole: a 1,000-level object updated at its leaf', () => {
    const nested = (leaf: number): Obj => {
      const root: Obj = {};
      let at = root;
      for (let i = 1; i < 1000; i++) at = at['a'] = {} as Obj;
      at['leaf'] = leaf;
      return root;
    };
    const s = store();
    s.update(nested(1));
    const nu = nested(2);
    s.update(nu);
    let at = s.getByKey('k') as Obj;
    for (let i = 1; i < 1000; i++) {
      expect(Object.isFrozen(at)).toBe(true);
      at = at['a'] as Obj;
    }
    expect(at['leaf']).toBe(2);
    expect(Object.isFrozen(at)).toBe(true);
  });

  it('ends on a cycle a transform made', () => {
    const s = store();
    const old: Obj = { a: { b: 1 } };
    s.update(old);
    const nu: Obj = { a: { b: 1 } };
    (nu['a'] as Obj)['self'] = nu;
    s.update(nu);
    expect(Object.isFrozen(nu)).toBe(true);
    expect(((nu['a'] as Obj)['self'] as Obj)['a']).toBe(nu['a']);
  });

  it('shares on a relist (replace) with the object each key held', () => {
    const s = createIndexer<Obj>({ keyFunc: (o) => String((o['metadata'] as { name: string }).name) });
    const old = pod('1', 'img:1', ['Ready']);
    s.replace([old], '1');
    const nu = pod('2', 'img:1', ['Ready']);
    replaceKeyed(s, ['a'], [nu], '2');
    expect(s.getByKey('a')).toBe(nu);
    expect(nu['spec']).toBe(old['spec']);
    expect(deeplyFrozen(nu)).toBe(true);
  });

  it('keeps what === cannot tell apart: -0 and 0, a key that is undefined, a method only inherited', () => {
    const s = store();
    s.update({ n: { z: 0 }, u: { a: 1 }, f: {} });
    const nu = { n: { z: -0 }, u: { b: undefined } as Obj, f: { toString: Object.prototype.toString } };
    s.update(nu);
    const stored = s.getByKey('k') as typeof nu;
    expect(Object.is(stored.n.z, -0)).toBe(true);
    expect(Object.keys(stored.u)).toEqual(['b']);
    expect(Object.hasOwn(stored.f, 'toString')).toBe(true);
  });

  it('a member that cannot be set (a getter, a read-only property) keeps the new part: the put does not throw', () => {
    const s = store();
    const withGetter = (rv: string): Obj => ({
      metadata: { name: 'a', resourceVersion: rv },
      get summary() {
        return { phase: 'Running' };
      },
    });
    s.update(withGetter('1'));
    expect(() => s.update(withGetter('2'))).not.toThrow();
    expect((s.getByKey('k')?.['metadata'] as { resourceVersion: string }).resourceVersion).toBe('2');
    const readOnly = (rv: string): Obj => Object.defineProperty({ rv }, 'spec', { value: { replicas: 1 }, enumerable: true, writable: false });
    s.update(readOnly('1'));
    const nu = readOnly('2');
    expect(() => s.update(nu)).not.toThrow();
    expect(s.getByKey('k')).toBe(nu);
    expect(deeplyFrozen(nu)).toBe(true);
    // Equal strings of a changed object are taken from the old one too, and the same holds for them.
    const stringMembers = (rv: string): Obj =>
      Object.defineProperty(
        {
          rv,
          get kind() {
            return 'Pod';
          },
        },
        'name',
        { value: 'a', enumerable: true, writable: false },
      );
    s.update(stringMembers('1'));
    const next = stringMembers('2');
    expect(() => s.update(next)).not.toThrow();
    expect(s.getByKey('k')).toEqual({ rv: '2', kind: 'Pod', name: 'a' });
  });

  it('a part a transform froze itself (only its top) is compared like any other: its content is stored, deeply frozen', () => {
    const s = store();
    s.update(pod('1', 'img:1', ['Ready']));
    // Frozen at the top only: the containers array below it is still writable, and one image changed.
    const changed = { ...pod('2', 'img:2', ['Ready']) };
    changed['spec'] = Object.freeze({ ...(changed['spec'] as Obj) });
    const expected = structuredClone(changed);
    expect(() => s.update(changed)).not.toThrow();
    expect(s.getByKey('k')).toEqual(expected);
    expect(deeplyFrozen(s.getByKey('k'))).toBe(true);
    // Equal to what is stored, but another object: equal content, deeply frozen, whichever part is kept.
    const equal = { ...pod('3', 'img:2', ['Ready']) };
    equal['status'] = Object.freeze({ conditions: [{ type: 'Ready', status: 'True' }] });
    expect(() => s.update(equal)).not.toThrow();
    expect(s.getByKey('k')).toEqual(structuredClone({ ...equal, status: { conditions: [{ type: 'Ready', status: 'True' }] } }));
    expect(deeplyFrozen(s.getByKey('k'))).toBe(true);
  });

  it('for any two JSON objects: stores exactly the new content, deeply frozen, and leaves the old one as it was', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue()), (a, b) => {
        const s = store();
        const old = JSON.parse(JSON.stringify(a)) as Obj;
        const oldCopy = structuredClone(old);
        s.update(old);
        const nu = JSON.parse(JSON.stringify(b)) as Obj;
        const expected = structuredClone(nu);
        s.update(nu);
        expect(s.getByKey('k')).toEqual(expected);
        expect(deeplyFrozen(s.getByKey('k'))).toBe(true);
        expect(old).toEqual(oldCopy);
      }),
      { numRuns: 300 },
    );
  });
});
