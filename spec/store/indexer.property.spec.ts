import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  byField,
  byLabel,
  byNamespace,
  createIndexer,
  DeletedFinalStateUnknown,
  IndexError,
  metaNamespaceKey,
  namespaceIndex,
  type IndexFunc,
  type Indexer,
  type KubeObject,
} from '../../src/store/index.js';
import { indexerStats } from '../../src/store/indexer.js';

interface Obj extends KubeObject {
  spec: { tags: string[] };
}

interface Shape {
  readonly ns: string;
  readonly name: string;
  readonly app: string | undefined;
  readonly tags: readonly string[];
}

type Op =
  | { readonly t: 'upsert'; readonly obj: Shape }
  | { readonly t: 'delete'; readonly obj: Shape; readonly tombstone: boolean }
  | { readonly t: 'replace'; readonly items: readonly Shape[]; readonly rv: string }
  | { readonly t: 'addIndexer' }
  | { readonly t: 'failing'; readonly obj: Shape };

function build(s: Shape, app: string | undefined = s.app): Obj {
  return {
    metadata: { namespace: s.ns, name: s.name, ...(app === undefined ? {} : { labels: { app } }) },
    spec: { tags: [...s.tags] },
  };
}

const appIndex = byLabel('app') as IndexFunc<Obj>;
const indexers: Record<string, IndexFunc<Obj>> = {
  [namespaceIndex]: byNamespace,
  // Throws for one label value, so failing writes are part of the sequences.
  app: (o) => {
    if (o.metadata?.labels?.['app'] === 'boom') throw new Error('boom');
    return appIndex(o);
  },
  tags: (o) => o.spec.tags,
};
const lateIndex: IndexFunc<Obj> = byField('spec.tags') as IndexFunc<Obj>;

const shape: fc.Arbitrary<Shape> = fc.record({
  ns: fc.constantFrom('a', 'b', ''),
  name: fc.constantFrom('p0', 'p1', 'p2', 'p3', 'p4'),
  app: fc.option(fc.constantFrom('web', 'api', 'db'), { nil: undefined }),
  tags: fc.array(fc.constantFrom('x', 'y', 'z', 'w'), { maxLength: 3 }),
});

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: shape.map((obj) => ({ t: 'upsert', obj }) as const) },
  { weight: 3, arbitrary: fc.record({ obj: shape, tombstone: fc.boolean() }).map((r) => ({ t: 'delete', ...r }) as const) },
  { weight: 1, arbitrary: fc.record({ items: fc.array(shape, { maxLength: 8 }), rv: fc.nat().map(String) }).map((r) => ({ t: 'replace', ...r }) as const) },
  { weight: 1, arbitrary: fc.constant({ t: 'addIndexer' } as const) },
  { weight: 1, arbitrary: shape.map((obj) => ({ t: 'failing', obj }) as const) },
);

/** Checks every index against one recomputed from scratch over the model, and that no bucket is empty. */
function checkAgainstModel(store: Indexer<Obj>, model: ReadonlyMap<string, Obj>): void {
  expect(store.listKeys().sort()).toEqual([...model.keys()].sort());
  for (const [key, obj] of model) expect(store.getByKey(key)).toBe(obj);
  const stats = indexerStats(store);
  expect(stats.items).toBe(model.size);
  for (const [name, fn] of Object.entries(store.getIndexers())) {
    const expected = new Map<string, Set<string>>();
    let filedKeys = 0;
    for (const [key, obj] of model) {
      const values = new Set(fn(obj));
      if (values.size > 0) filedKeys++;
      for (const v of values) {
        let keys = expected.get(v);
        if (keys === undefined) expected.set(v, (keys = new Set()));
        keys.add(key);
      }
    }
    expect(store.listIndexFuncValues(name).sort()).toEqual([...expected.keys()].sort());
    let bucketKeys = 0;
    for (const [value, keys] of expected) {
      expect(store.indexKeys(name, value)).toEqual([...keys].sort());
      bucketKeys += keys.size;
    }
    for (const value of store.listIndexFuncValues(name)) expect(store.indexKeys(name, value).length).toBeGreaterThan(0);
    expect(stats.indexes[name]).toEqual({ values: expected.size, filedKeys, bucketKeys });
  }
}

describe('Indexer: properties', () => {
  it('indexes always equal a from-scratch recomputation, with no empty bucket, for any write sequence', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const store = createIndexer<Obj>({ indexers });
        const model = new Map<string, Obj>();
        for (const o of ops) {
          switch (o.t) {
            case 'upsert': {
              const obj = build(o.obj);
              store.add(obj);
              model.set(metaNamespaceKey(obj), obj);
              break;
            }
            case 'delete': {
              const obj = build(o.obj);
              const key = metaNamespaceKey(obj);
              store.delete(o.tombstone ? new DeletedFinalStateUnknown(key, obj) : obj);
              model.delete(key);
              break;
            }
            case 'replace': {
              const items = o.items.map((s) => build(s));
              store.replace(items, o.rv);
              model.clear();
              for (const obj of items) model.set(metaNamespaceKey(obj), obj);
              expect(store.lastSyncResourceVersion()).toBe(o.rv);
              break;
            }
            case 'addIndexer':
              if (!('late' in store.getIndexers())) store.addIndexers({ late: lateIndex });
              break;
            case 'failing':
              expect(() => store.update(build(o.obj, 'boom'))).toThrow(IndexError);
              break;
          }
          checkAgainstModel(store, model);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('leaves nothing behind after a million churned objects', () => {
    const store = createIndexer<Obj>({ indexers: { ...indexers, late: lateIndex } });
    const window = 100;
    const total = 1_000_000;
    let maxValues = 0;
    for (let i = 0; i < total; i++) {
      const name = `p${i}`;
      // Every object gets values no other object has, so a missed removal would show as a growing index.
      const first: Shape = { ns: `ns${i % 13}`, name, app: `v${i}`, tags: [`t${i}`, `u${i}`] };
      store.add(build(first));
      store.update(build({ ...first, app: `w${i}`, tags: [`u${i}`, `x${i}`] }));
      if (i >= window) {
        const old = `ns${(i - window) % 13}/p${i - window}`;
        if (i % 2 === 0) store.delete(new DeletedFinalStateUnknown<Obj>(old, undefined));
        else store.delete(store.getByKey(old) as Obj);
      }
      if (i % 10_000 === 0) maxValues = Math.max(maxValues, store.listIndexFuncValues('tags').length);
    }
    expect(store.size).toBe(window);
    expect(maxValues).toBeLessThanOrEqual(2 * (window + 1));
    const live = indexerStats(store);
    expect(live.indexes['app']).toEqual({ values: window, filedKeys: window, bucketKeys: window });
    expect(live.indexes['tags']).toEqual({ values: 2 * window, filedKeys: window, bucketKeys: 2 * window });
    expect(live.indexes[namespaceIndex]?.values).toBeLessThanOrEqual(13);

    store.replace([]);
    for (const stats of Object.values(indexerStats(store).indexes)) expect(stats).toEqual({ values: 0, filedKeys: 0, bucketKeys: 0 });
  }, 180_000);

  it('leaves nothing behind when churn ends in deletes rather than a replace', () => {
    const store = createIndexer<Obj>({ indexers });
    for (let i = 0; i < 10_000; i++) store.add(build({ ns: 'a', name: `p${i}`, app: `v${i % 50}`, tags: [`t${i % 3}`] }));
    for (let i = 0; i < 10_000; i++) store.update(build({ ns: 'a', name: `p${i}`, app: `w${i % 7}`, tags: [] }));
    for (let i = 0; i < 10_000; i++) store.delete(build({ ns: 'a', name: `p${i}`, app: undefined, tags: [] }));
    expect(indexerStats(store)).toEqual({
      items: 0,
      indexes: {
        [namespaceIndex]: { values: 0, filedKeys: 0, bucketKeys: 0 },
        app: { values: 0, filedKeys: 0, bucketKeys: 0 },
        tags: { values: 0, filedKeys: 0, bucketKeys: 0 },
      },
    });
  });
});
