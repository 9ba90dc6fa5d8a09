import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  byControllerUid,
  byField,
  byLabel,
  byNamespace,
  byOwnerUid,
  createIndexer,
  DeletedFinalStateUnknown,
  IndexConflictError,
  IndexError,
  IndexNotFoundError,
  KeyError,
  metaNamespaceKey,
  namespaceIndex,
  parseFieldSelector,
  parseLabelSelector,
  SelectorParseError,
  splitMetaNamespaceKey,
  type IndexFunc,
  type Indexer,
  type KubeObject,
} from '../../src/store/index.js';
import { indexerStats } from '../../src/store/indexer.js';
import { jsonish, nastyString, outcome, params, wildMetadata, type Outcome } from './fuzzKit.js';

type Obj = KubeObject & { spec?: unknown };

/** An index function that misbehaves for some objects: throws, answers a non-array, or an array holding a non-string. */
const picky: IndexFunc<Obj> = (o) => {
  const spec = (o as { spec?: unknown } | null)?.spec;
  if (spec === 'boom') throw new Error('boom');
  if (spec === 'str') return 'not an array' as unknown as string[];
  if (spec === 'num') return [1] as unknown as string[];
  return Array.isArray(spec) ? spec.filter((v): v is string => typeof v === 'string') : [];
};

const baseIndexers: Record<string, IndexFunc<Obj>> = {
  [namespaceIndex]: byNamespace,
  app: byLabel('app'),
  owner: byOwnerUid,
  controller: byControllerUid,
  picky,
};
const lateIndexers: Record<string, IndexFunc<Obj>> = { tags: byField('spec') as IndexFunc<Obj>, picky2: picky, [namespaceIndex]: byNamespace };

const ownerRefs = fc.oneof(
  fc.array(fc.record({ uid: fc.oneof(fc.constantFrom('u1', 'u2', ''), fc.integer(), fc.constant(null)), controller: fc.oneof(fc.boolean(), fc.constant('true')) }, { requiredKeys: [] }), { maxLength: 3 }),
  fc.array(fc.oneof(fc.constant(null), fc.integer()), { maxLength: 2 }),
  fc.constant(null),
  fc.string(),
);

/** Objects as a broken server or a buggy transform might hand them to the store. */
const object: fc.Arbitrary<Obj> = fc
  .record(
    {
      metadata: fc.oneof(
        { weight: 3, arbitrary: fc.record({ name: fc.constantFrom('a', 'b', 'c'), namespace: fc.constantFrom('x', 'y', ''), labels: fc.record({ app: fc.constantFrom('web', 'db') }, { requiredKeys: [] }) }, { requiredKeys: ['name'] }) },
        { weight: 2, arbitrary: wildMetadata },
        { weight: 1, arbitrary: fc.record({ name: fc.constantFrom('a', 'b'), ownerReferences: ownerRefs }) },
      ),
      spec: fc.oneof(fc.constantFrom('boom', 'str', 'num'), fc.array(fc.oneof(fc.constantFrom('t1', 't2'), fc.integer()), { maxLength: 3 }), jsonish),
    },
    { requiredKeys: [] },
  )
  .map((o) => o as Obj);

const wild: fc.Arbitrary<Obj> = fc.oneof({ weight: 9, arbitrary: object }, { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.integer(), fc.string(), fc.constant([])) as fc.Arbitrary<Obj> });

type Op =
  | { readonly t: 'add' | 'update' | 'delete'; readonly obj: Obj }
  | { readonly t: 'tombstone'; readonly key: string }
  | { readonly t: 'replace'; readonly items: readonly Obj[] }
  | { readonly t: 'replaceBad'; readonly items: unknown }
  | { readonly t: 'addIndexers'; readonly names: readonly string[] }
  | { readonly t: 'list'; readonly label: string | undefined; readonly field: string | undefined; readonly namespace: unknown }
  | { readonly t: 'query'; readonly index: string; readonly value: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constantFrom('add', 'update', 'delete'), obj: wild }) as fc.Arbitrary<Op> },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('tombstone'), key: fc.constantFrom('a', 'x/a', 'y/b', 'zzz') }) as fc.Arbitrary<Op> },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('replace'), items: fc.array(wild, { maxLength: 5 }) }) as fc.Arbitrary<Op> },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('replaceBad'), items: fc.oneof(fc.constant(null), fc.integer(), fc.constant('ab'), fc.object({ maxDepth: 1 })) }) as fc.Arbitrary<Op> },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('addIndexers'), names: fc.subarray(Object.keys(lateIndexers), { minLength: 1 }) }) as fc.Arbitrary<Op> },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('list'),
      label: fc.option(fc.oneof(fc.constantFrom('app=web', '!app', 'app in (web,db)', 'app notin (db)', 'app', 'app=', 'in', '=='), nastyString), { nil: undefined }),
      field: fc.option(fc.oneof(fc.constantFrom('metadata.name=a', 'metadata.namespace!=x', 'spec=boom', 'metadata.name'), nastyString), { nil: undefined }),
      namespace: fc.option(fc.oneof(fc.constantFrom('x', 'y', ''), fc.integer(), fc.constant(null)), { nil: undefined }),
    }) as fc.Arbitrary<Op>,
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('query'), index: fc.constantFrom('app', 'owner', 'tags', 'nope', namespaceIndex), value: fc.constantFrom('web', 'u1', 't1', 'x', '') }) as fc.Arbitrary<Op> },
);

/** The default key, written independently of the store: "ns/name" or "name"; undefined when it cannot be keyed. */
function keyOf(obj: unknown): string | undefined {
  // A string is an explicit key (client-go's ExplicitKey).
  if (typeof obj === 'string') return obj;
  const meta = (obj as { metadata?: unknown } | null)?.metadata;
  if (meta === null || typeof meta !== 'object') return undefined;
  const { name, namespace } = meta as { name?: unknown; namespace?: unknown };
  if (typeof name !== 'string' || name === '' || name.includes('/')) return undefined;
  if (typeof namespace !== 'string' || namespace === '') return name;
  return namespace.includes('/') ? undefined : `${namespace}/${name}`;
}

/** Whether every index function accepts `obj`. */
function indexable(obj: unknown, indexers: Readonly<Record<string, IndexFunc<Obj>>>): boolean {
  return Object.values(indexers).every((fn) => {
    try {
      const out = fn(obj as Obj) as unknown;
      return Array.isArray(out) && out.every((v) => typeof v === 'string');
    } catch {
      return false;
    }
  });
}

/** The store's content and every index equal what is recomputed from the model, and no bucket is empty or stale. */
function expectConsistent(store: Indexer<Obj>, model: ReadonlyMap<string, Obj>): void {
  expect(store.listKeys().sort()).toEqual([...model.keys()].sort());
  expect(store.size).toBe(model.size);
  for (const [key, obj] of model) {
    expect(store.getByKey(key)).toBe(obj);
    expect(Object.isFrozen(obj)).toBe(true);
  }
  const stats = indexerStats(store);
  expect(stats.items).toBe(model.size);
  for (const [name, fn] of Object.entries(store.getIndexers())) {
    const expected = new Map<string, string[]>();
    let filed = 0;
    for (const [key, obj] of model) {
      const values = [...new Set(fn(obj))];
      if (values.length > 0) filed++;
      for (const v of values) expected.set(v, [...(expected.get(v) ?? []), key]);
    }
    expect(store.listIndexFuncValues(name).sort()).toEqual([...expected.keys()].sort());
    for (const [value, keys] of expected) {
      expect(store.indexKeys(name, value)).toEqual(keys.sort());
      expect(new Set(store.byIndex(name, value))).toEqual(new Set(keys.map((k) => model.get(k))));
    }
    expect(stats.indexes[name]?.filedKeys).toBe(filed);
    expect(stats.indexes[name]?.bucketKeys).toBe([...expected.values()].reduce((n, keys) => n + keys.length, 0));
  }
}

function expectError(r: Outcome<unknown>, cls: new (...args: never[]) => Error): void {
  expect(r.ok, `expected ${cls.name}`).toBe(false);
  expect((r as { error: unknown }).error, String((r as { error: unknown }).error)).toBeInstanceOf(cls);
}

/** Applies one operation to the store and to the model, checking that it succeeded or failed exactly as the model says. */
function apply(store: Indexer<Obj>, model: Map<string, Obj>, indexers: Record<string, IndexFunc<Obj>>, o: Op): void {
  switch (o.t) {
    case 'add':
    case 'update': {
      const r = outcome(() => store[o.t](o.obj));
      const key = keyOf(o.obj);
      if (key === undefined) return expectError(r, KeyError);
      if (!indexable(o.obj, indexers)) return expectError(r, IndexError);
      expect(r.ok, String((r as { error?: unknown }).error)).toBe(true);
      model.set(key, o.obj);
      return;
    }
    case 'delete': {
      const r = outcome(() => store.delete(o.obj));
      const key = keyOf(o.obj);
      if (key === undefined) return expectError(r, KeyError);
      expect(r.ok).toBe(true);
      model.delete(key);
      return;
    }
    case 'tombstone':
      store.delete(new DeletedFinalStateUnknown(o.key, undefined as unknown as Obj));
      model.delete(o.key);
      return;
    case 'replace': {
      const r = outcome(() => store.replace(o.items, 'rv'));
      if (o.items.some((i) => keyOf(i) === undefined)) return expectError(r, KeyError);
      const next = new Map(o.items.map((i) => [keyOf(i) as string, i]));
      if (![...next.values()].every((i) => indexable(i, indexers))) return expectError(r, IndexError);
      expect(r.ok, String((r as { error?: unknown }).error)).toBe(true);
      model.clear();
      for (const [k, v] of next) model.set(k, v);
      return;
    }
    case 'replaceBad': {
      return expectError(outcome(() => store.replace(o.items as Iterable<Obj>)), TypeError);
    }
    case 'addIndexers': {
      const add = Object.fromEntries(o.names.map((n) => [n, lateIndexers[n] as IndexFunc<Obj>]));
      const r = outcome(() => store.addIndexers(add));
      if (o.names.some((n) => n in indexers)) return expectError(r, IndexConflictError);
      if (![...model.values()].every((obj) => indexable(obj, add))) return expectError(r, IndexError);
      expect(r.ok, String((r as { error?: unknown }).error)).toBe(true);
      Object.assign(indexers, add);
      return;
    }
    case 'list': {
      const opts = { ...(o.label !== undefined && { labelSelector: o.label }), ...(o.field !== undefined && { fieldSelector: o.field }), ...(o.namespace !== undefined && { namespace: o.namespace as string }) };
      const r = outcome(() => store.list(opts));
      const label = o.label === undefined ? undefined : outcome(() => parseLabelSelector(o.label as string));
      const field = o.field === undefined ? undefined : outcome(() => parseFieldSelector(o.field as string));
      if ((label !== undefined && !label.ok) || (field !== undefined && !field.ok)) return expectError(r, SelectorParseError);
      if (o.namespace !== undefined && typeof o.namespace !== 'string') return expectError(r, TypeError);
      expect(r.ok, String((r as { error?: unknown }).error)).toBe(true);
      const want = [...model.values()].filter((obj) => {
        const meta = ((obj as Obj | null)?.metadata ?? {}) as { namespace?: unknown; labels?: Record<string, string> };
        if (typeof o.namespace === 'string' && o.namespace !== '' && meta.namespace !== o.namespace) return false;
        if (label?.ok === true && !label.value.matches(meta.labels)) return false;
        return !(field?.ok === true && !field.value.matches(obj));
      });
      expect(new Set((r as { value: Obj[] }).value)).toEqual(new Set(want));
      return;
    }
    case 'query': {
      if (!(o.index in indexers)) {
        expectError(outcome(() => store.byIndex(o.index, o.value)), IndexNotFoundError);
        expectError(outcome(() => store.indexKeys(o.index, o.value)), IndexNotFoundError);
        expect(store.listIndexFuncValues(o.index)).toEqual([]);
      }
      return;
    }
  }
}

describe('metaNamespaceKey on any metadata', () => {
  it('property: a key is made only from a usable name and namespace, and splits back into them, so two objects never share one by accident', () => {
    const part = fc.oneof(fc.constantFrom('a', 'ns', '', 'x/y', '/', 'a/', '/b', '😀', 'a%2Fb'), fc.string({ maxLength: 5 }), fc.integer(), fc.constant(null));
    fc.assert(
      fc.property(fc.record({ name: part, namespace: part }, { requiredKeys: [] }), (meta) => {
        const r = outcome(() => metaNamespaceKey({ metadata: meta } as KubeObject));
        if (!r.ok) {
          expect(r.error).toBeInstanceOf(TypeError);
          return;
        }
        const { name, namespace } = meta as { name: string; namespace?: unknown };
        expect(splitMetaNamespaceKey(r.value)).toEqual({ namespace: typeof namespace === 'string' ? namespace : '', name });
      }),
      params(300),
    );
  });

  it("refuses a name or namespace holding '/': 'ns' + 'x' and '' + 'ns/x' would both be keyed 'ns/x'", () => {
    expect(metaNamespaceKey({ metadata: { namespace: 'ns', name: 'x' } })).toBe('ns/x');
    expect(() => metaNamespaceKey({ metadata: { name: 'ns/x' } })).toThrow(new TypeError(`metadata.name "ns/x" contains '/'`));
    expect(() => metaNamespaceKey({ metadata: { namespace: 'a/b', name: 'x' } })).toThrow(new TypeError(`metadata.namespace "a/b" contains '/'`));
  });
});

describe('createIndexer under bad objects and failing index functions', () => {
  it('property: after any sequence of good and bad writes, every write succeeded or failed with its typed error and the indexes equal a recomputation', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), (ops) => {
        const indexers = { ...baseIndexers };
        const store = createIndexer<Obj>({ indexers: baseIndexers });
        const model = new Map<string, Obj>();
        for (const o of ops) {
          apply(store, model, indexers, o);
          expectConsistent(store, model);
        }
      }),
      params(200),
    );
  });

  it('property: the read-only view answers exactly as the store, for any object', () => {
    fc.assert(
      fc.property(fc.array(wild, { maxLength: 8 }), wild, (objs, probe) => {
        const store = createIndexer<Obj>({ indexers: { app: byLabel('app') } });
        for (const o of objs) outcome(() => store.add(o));
        const view = store.asReadonly();
        const a = outcome(() => store.get(probe));
        const b = outcome(() => view.get(probe));
        expect(b.ok).toBe(a.ok);
        if (a.ok) expect((b as { value: unknown }).value).toBe(a.value);
        else expect((b as { error: unknown }).error).toBeInstanceOf(KeyError);
        expect(view.listKeys()).toEqual(store.listKeys());
        expect('add' in view).toBe(false);
      }),
      params(100),
    );
  });

  it('keeps a KeyError on objects whose metadata has wrong types, naming the object without crashing on it', () => {
    const store = createIndexer();
    const cyclic: Record<string, unknown> = { metadata: { name: 5 } };
    cyclic['self'] = cyclic;
    for (const bad of [{ metadata: { name: 7 } }, { metadata: { name: ['a'] } }, { metadata: null }, { metadata: [] }, {}, null, 42, cyclic, { metadata: { name: 'ns/x' } }, { metadata: { namespace: 'a/b', name: 'c' } }]) {
      const r = outcome(() => store.add(bad as KubeObject));
      expectError(r, KeyError);
      expect((r as { error: KeyError }).error.message).toMatch(/^couldn't create key for object /);
    }
    store.add({ metadata: { name: 'ok', namespace: null as unknown as string, labels: ['x'] as unknown as Record<string, string> } });
    expect(store.listKeys()).toEqual(['ok']);
    expect(store.list({ labelSelector: 'x', namespace: 'default' })).toEqual([]);
    expect(store.list({ labelSelector: '!x' })).toHaveLength(1);
  });
});
