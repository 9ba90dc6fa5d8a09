import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  byLabel,
  byNamespace,
  createIndexer,
  DeletedFinalStateUnknown,
  IndexConflictError,
  IndexError,
  IndexNotFoundError,
  KeyError,
  namespaceIndex,
  parseFieldSelector,
  parseLabelSelector,
  SelectorParseError,
  type IndexFunc,
  type Indexer,
  type KubeObject,
} from '../../src/store/index.js';
import { indexerStats } from '../../src/store/indexer.js';

interface Pod extends KubeObject {
  spec?: { nodeName?: string; tags?: string[] };
}

function pod(ns: string, name: string, labels?: Record<string, string>, extra: { rv?: string; node?: string; tags?: string[] } = {}): Pod {
  return {
    metadata: { namespace: ns, name, ...(labels ? { labels } : {}), ...(extra.rv !== undefined ? { resourceVersion: extra.rv } : {}) },
    spec: { ...(extra.node !== undefined ? { nodeName: extra.node } : {}), ...(extra.tags ? { tags: extra.tags } : {}) },
  };
}

const byTags: IndexFunc<Pod> = (p) => p.spec?.tags ?? [];
const byApp = byLabel('app') as IndexFunc<Pod>;

function podStore(): Indexer<Pod> {
  return createIndexer<Pod>({ indexers: { [namespaceIndex]: byNamespace, app: byApp, tags: byTags } });
}

/** Everything observable about the indexes, to compare before/after a failed write. */
function snapshot(store: Indexer<Pod>): unknown {
  const indexes: Record<string, Record<string, string[]>> = {};
  for (const name of Object.keys(store.getIndexers()).sort()) {
    const values: Record<string, string[]> = {};
    for (const v of store.listIndexFuncValues(name).sort()) values[v] = store.indexKeys(name, v);
    indexes[name] = values;
  }
  const items = Object.fromEntries(store.listKeys().sort().map((k) => [k, store.getByKey(k)]));
  return { items, indexes, rv: store.lastSyncResourceVersion(), stats: indexerStats(store) };
}

function names(objs: readonly Pod[]): string[] {
  return objs.map((o) => o.metadata?.name ?? '?').sort();
}

describe('createIndexer: options', () => {
  it('validates options up front, naming the option and the value', () => {
    expect(() => createIndexer(null as never)).toThrow(new TypeError('createIndexer: options must be an object, got null'));
    expect(() => createIndexer({ keyFunc: 'x' as never })).toThrow(new TypeError('createIndexer: option "keyFunc" must be a function, got "x"'));
    expect(() => createIndexer({ freeze: 1 as never })).toThrow(new TypeError('createIndexer: option "freeze" must be a boolean, got 1'));
    expect(() => createIndexer({ indexers: [] as never })).toThrow(new TypeError('createIndexer: indexers must be an object of index functions, got []'));
    expect(() => createIndexer({ indexers: { a: 'no' as never } })).toThrow(new TypeError('createIndexer: indexers["a"] must be a function, got "no"'));
    expect(() => createIndexer({ keyfunc: () => 'k' } as never)).toThrow(new TypeError('createIndexer: unknown option "keyfunc"'));
  });

  it('keys by namespace/name by default', () => {
    const store = createIndexer();
    store.add({ metadata: { namespace: 'a', name: 'b' } });
    store.add({ metadata: { name: 'node' } });
    expect(store.listKeys().sort()).toEqual(['a/b', 'node']);
  });

  it('uses a custom key function', () => {
    const store = createIndexer<{ id: number }>({ keyFunc: (o) => `id-${o.id}` });
    store.add({ id: 7 });
    expect(store.getByKey('id-7')).toEqual({ id: 7 });
  });
});

describe('Indexer: add, update, get, list (I-2, I-4)', () => {
  it('add and update are the same upsert', () => {
    const store = podStore();
    store.update(pod('ns', 'a', { app: 'x' }));
    expect(store.size).toBe(1);
    const next = pod('ns', 'a', { app: 'y' });
    store.add(next);
    expect(store.size).toBe(1);
    expect(store.getByKey('ns/a')).toBe(next);
  });

  it('hands out the stored object itself, not a copy', () => {
    const store = podStore();
    const p = pod('ns', 'a');
    store.add(p);
    expect(store.getByKey('ns/a')).toBe(p);
    expect(store.get(pod('ns', 'a'))).toBe(p);
    expect(store.list()[0]).toBe(p);
    expect(store.byIndex(namespaceIndex, 'ns')[0]).toBe(p);
  });

  it('get keys its argument; absent → undefined; unkeyable → KeyError', () => {
    const store = podStore();
    expect(store.get(pod('ns', 'missing'))).toBeUndefined();
    expect(store.getByKey('ns/missing')).toBeUndefined();
    expect(() => store.get({ metadata: {} })).toThrow(KeyError);
  });

  it('keyOf answers the key the store files an object under', () => {
    const store = createIndexer<Pod>({ keyFunc: (p) => `custom:${p.metadata?.name ?? ''}` });
    expect(store.keyOf(pod('ns', 'a'))).toBe('custom:a');
    expect(store.keyOf(new DeletedFinalStateUnknown<Pod>('tomb', pod('ns', 'a')))).toBe('tomb');
    expect(() => createIndexer().keyOf({ metadata: {} })).toThrow(KeyError);
  });

  it('list and listKeys return fresh arrays the caller may change', () => {
    const store = podStore();
    store.add(pod('ns', 'a'));
    store.list().pop();
    store.listKeys().pop();
    store.byIndex(namespaceIndex, 'ns').pop();
    expect(store.size).toBe(1);
    expect(store.list()).toHaveLength(1);
    expect(store.listKeys()).toEqual(['ns/a']);
    expect(store.byIndex(namespaceIndex, 'ns')).toHaveLength(1);
  });
});

describe('Indexer: delete (I-3, K-2)', () => {
  it('removes the object and its index entries', () => {
    const store = podStore();
    store.add(pod('ns', 'a', { app: 'x' }, { tags: ['t1', 't2'] }));
    store.add(pod('ns', 'b', { app: 'x' }));
    store.delete(pod('ns', 'a'));
    expect(store.listKeys()).toEqual(['ns/b']);
    expect(store.indexKeys('app', 'x')).toEqual(['ns/b']);
    expect(store.listIndexFuncValues('tags')).toEqual([]);
  });

  it('uses the stored object to find index entries, not the one given', () => {
    const store = podStore();
    store.add(pod('ns', 'a', { app: 'x' }));
    store.delete(pod('ns', 'a', { app: 'other' }));
    expect(store.listIndexFuncValues('app')).toEqual([]);
  });

  it('is a no-op for an absent key', () => {
    const store = podStore();
    store.add(pod('ns', 'a'));
    expect(() => store.delete(pod('ns', 'zzz'))).not.toThrow();
    expect(store.size).toBe(1);
  });

  it('removes a tombstone by its key, whatever object it carries', () => {
    const store = podStore();
    store.add(pod('ns', 'a', { app: 'x' }));
    store.add(pod('ns', 'b', { app: 'x' }));
    store.delete(new DeletedFinalStateUnknown('ns/a', pod('ns', 'different')));
    store.delete(new DeletedFinalStateUnknown<Pod>('ns/b', undefined));
    expect(store.size).toBe(0);
    expect(store.listIndexFuncValues('app')).toEqual([]);
  });

  it('throws KeyError for an unkeyable object and changes nothing', () => {
    const store = podStore();
    store.add(pod('ns', 'a'));
    const before = snapshot(store);
    expect(() => store.delete({ metadata: {} })).toThrow(KeyError);
    expect(snapshot(store)).toEqual(before);
  });
});

describe('Indexer: index maintenance (I-8, I-9)', () => {
  it('moves a key to its new bucket when a label changes and drops the emptied bucket', () => {
    const store = podStore();
    store.add(pod('ns', 'a', { app: 'web' }));
    store.update(pod('ns', 'a', { app: 'api' }));
    expect(store.indexKeys('app', 'web')).toEqual([]);
    expect(store.indexKeys('app', 'api')).toEqual(['ns/a']);
    expect(store.listIndexFuncValues('app')).toEqual(['api']);
  });

  it('keeps a bucket that still has other keys', () => {
    const store = podStore();
    store.add(pod('ns', 'a', { app: 'web' }));
    store.add(pod('ns', 'b', { app: 'web' }));
    store.update(pod('ns', 'a', { app: 'api' }));
    expect(store.indexKeys('app', 'web')).toEqual(['ns/b']);
    expect(store.listIndexFuncValues('app').sort()).toEqual(['api', 'web']);
  });

  it('removes the key from the index when the object loses its value', () => {
    const store = podStore();
    store.add(pod('ns', 'a', { app: 'web' }));
    store.update(pod('ns', 'a'));
    expect(store.listIndexFuncValues('app')).toEqual([]);
    expect(indexerStats(store).indexes['app']).toEqual({ values: 0, filedKeys: 0, bucketKeys: 0 });
  });

  it('updates multi-valued entries exactly: leaves dropped values, joins new ones, keeps shared ones', () => {
    const store = podStore();
    store.add(pod('ns', 'a', undefined, { tags: ['a', 'b'] }));
    store.add(pod('ns', 'z', undefined, { tags: ['b'] }));
    store.update(pod('ns', 'a', undefined, { tags: ['b', 'c'] }));
    expect(store.indexKeys('tags', 'a')).toEqual([]);
    expect(store.indexKeys('tags', 'b')).toEqual(['ns/a', 'ns/z']);
    expect(store.indexKeys('tags', 'c')).toEqual(['ns/a']);
    expect(store.listIndexFuncValues('tags').sort()).toEqual(['b', 'c']);
  });

  it('treats duplicate values from an index function as one', () => {
    const store = podStore();
    store.add(pod('ns', 'a', undefined, { tags: ['x', 'x'] }));
    expect(store.indexKeys('tags', 'x')).toEqual(['ns/a']);
    store.delete(pod('ns', 'a'));
    expect(store.listIndexFuncValues('tags')).toEqual([]);
    expect(indexerStats(store).indexes['tags']).toEqual({ values: 0, filedKeys: 0, bucketKeys: 0 });
  });

  it('removes old entries exactly even when the stored object was mutated in place (freeze: false)', () => {
    const store = createIndexer<Pod>({ freeze: false, indexers: { app: byApp } });
    const p = { metadata: { namespace: 'ns', name: 'a', labels: { app: 'web' } as Record<string, string> } };
    store.add(p);
    p.metadata.labels['app'] = 'api';
    store.update(p);
    expect(store.listIndexFuncValues('app')).toEqual(['api']);
    expect(store.indexKeys('app', 'web')).toEqual([]);
  });
});

describe('Indexer: queries (I-10 … I-13)', () => {
  function filled(): Indexer<Pod> {
    const store = podStore();
    store.add(pod('ns', 'c', { app: 'web' }, { tags: ['red'] }));
    store.add(pod('ns', 'a', { app: 'web' }, { tags: ['red', 'blue'] }));
    store.add(pod('ns', 'b', { app: 'api' }, { tags: ['blue', 'green'] }));
    store.add(pod('other', 'd', undefined, { tags: ['green'] }));
    return store;
  }

  it('byIndex returns the stored objects under a value, [] for an unknown value', () => {
    const store = filled();
    expect(names(store.byIndex('app', 'web'))).toEqual(['a', 'c']);
    expect(store.byIndex('app', 'nope')).toEqual([]);
  });

  it('indexKeys returns keys sorted ascending', () => {
    const store = filled();
    expect(store.indexKeys('tags', 'red')).toEqual(['ns/a', 'ns/c']);
    expect(store.indexKeys(namespaceIndex, 'ns')).toEqual(['ns/a', 'ns/b', 'ns/c']);
    expect(store.indexKeys('app', 'nope')).toEqual([]);
  });

  it('index returns objects sharing any value with the given object, each once', () => {
    const store = filled();
    const probe = pod('x', 'probe', undefined, { tags: ['red', 'blue'] });
    expect(names(store.index('tags', probe))).toEqual(['a', 'b', 'c']);
    expect(names(store.index('app', pod('x', 'y', { app: 'api' })))).toEqual(['b']);
    expect(store.index('app', pod('x', 'y'))).toEqual([]);
  });

  it('index reports a failing index function as IndexError', () => {
    const store = createIndexer<Pod>({ indexers: { bad: () => { throw new Error('nope'); } } });
    expect(() => store.index('bad', pod('ns', 'a'))).toThrow(IndexError);
  });

  it('listIndexFuncValues lists the values present', () => {
    expect(filled().listIndexFuncValues('tags').sort()).toEqual(['blue', 'green', 'red']);
  });

  it('an unknown index name throws IndexNotFoundError from byIndex, indexKeys and index, but not from listIndexFuncValues', () => {
    const store = filled();
    const expected = new IndexNotFoundError('nope');
    expect(expected.message).toBe('Index with name nope does not exist');
    expect(() => store.byIndex('nope', 'x')).toThrow(expected);
    expect(() => store.indexKeys('nope', 'x')).toThrow(IndexNotFoundError);
    expect(() => store.index('nope', pod('ns', 'a'))).toThrow(IndexNotFoundError);
    try {
      store.byIndex('nope', 'x');
    } catch (err) {
      expect((err as IndexNotFoundError).indexName).toBe('nope');
    }
    expect(store.listIndexFuncValues('nope')).toEqual([]);
  });

  it('getIndexers returns the registered functions, frozen', () => {
    const store = podStore();
    const indexers = store.getIndexers();
    expect(Object.keys(indexers).sort()).toEqual(['app', namespaceIndex, 'tags'].sort());
    expect(indexers[namespaceIndex]).toBe(byNamespace);
    expect(Object.isFrozen(indexers)).toBe(true);
  });
});

describe('Indexer: list filters (I-18)', () => {
  function filled(withNamespaceIndex: boolean): Indexer<Pod> {
    const store = createIndexer<Pod>({ indexers: withNamespaceIndex ? { [namespaceIndex]: byNamespace } : {} });
    store.add(pod('shop', 'web-1', { app: 'web', tier: 'a' }, { node: 'n1' }));
    store.add(pod('shop', 'web-2', { app: 'web', tier: 'b', canary: '' }, { node: 'n2' }));
    store.add(pod('shop', 'api-1', { app: 'api' }, { node: 'n1' }));
    store.add(pod('blog', 'web-3', { app: 'web', tier: 'a' }, { node: 'n1' }));
    store.add({ metadata: { name: 'cluster-thing' } });
    return store;
  }

  it.each([true, false])('filters by namespace (namespace index: %s)', (withIndex) => {
    const store = filled(withIndex);
    expect(names(store.list({ namespace: 'shop' }))).toEqual(['api-1', 'web-1', 'web-2']);
    expect(names(store.list({ namespace: 'none' }))).toEqual([]);
    expect(store.list({ namespace: '' })).toHaveLength(5);
    expect(store.list({})).toHaveLength(5);
  });

  it('does not trust an index called "namespace" that is not byNamespace', () => {
    const store = createIndexer<Pod>({ indexers: { [namespaceIndex]: () => ['shop'] } });
    store.add(pod('shop', 'a'));
    store.add(pod('blog', 'b'));
    expect(names(store.list({ namespace: 'shop' }))).toEqual(['a']);
  });

  it('filters by label selector, text or parsed', () => {
    const store = filled(true);
    expect(names(store.list({ labelSelector: 'app=web,tier in (a,b),!canary' }))).toEqual(['web-1', 'web-3']);
    expect(names(store.list({ labelSelector: parseLabelSelector('app!=web') }))).toEqual(['api-1', 'cluster-thing']);
    expect(store.list({ labelSelector: '' })).toHaveLength(5);
  });

  it('filters by field selector, text or parsed', () => {
    const store = filled(true);
    expect(names(store.list({ fieldSelector: 'spec.nodeName=n1' }))).toEqual(['api-1', 'web-1', 'web-3']);
    expect(names(store.list({ fieldSelector: parseFieldSelector('metadata.namespace=blog') }))).toEqual(['web-3']);
  });

  it('combines namespace, label and field filters', () => {
    const store = filled(true);
    expect(names(store.list({ namespace: 'shop', labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1' }))).toEqual(['web-1']);
  });

  it('reuses a selector across calls and still honours a new one', () => {
    const store = filled(false);
    expect(names(store.list({ labelSelector: 'app=api' }))).toEqual(['api-1']);
    expect(names(store.list({ labelSelector: 'app=api' }))).toEqual(['api-1']);
    expect(names(store.list({ labelSelector: 'tier=b' }))).toEqual(['web-2']);
  });

  it('rejects bad options', () => {
    const store = filled(false);
    expect(() => store.list({ labelSelector: 'app in x' })).toThrow(SelectorParseError);
    expect(() => store.list({ fieldSelector: 'nonsense' })).toThrow(SelectorParseError);
    expect(() => store.list({ labelselector: 'a' } as never)).toThrow(new TypeError('list: unknown option "labelselector"'));
    expect(() => store.list({ labelSelector: 3 } as never)).toThrow(TypeError);
    expect(() => store.list({ fieldSelector: {} } as never)).toThrow(TypeError);
    expect(() => store.list({ namespace: 3 } as never)).toThrow(new TypeError('list: option "namespace" must be a string, got 3'));
    expect(() => store.list(null as never)).toThrow(TypeError);
  });
});

describe('Indexer: replace (I-5)', () => {
  it('replaces the content and rebuilds every index', () => {
    const store = podStore();
    store.add(pod('ns', 'old', { app: 'gone' }, { tags: ['t'] }));
    store.add(pod('ns', 'kept', { app: 'web' }));
    store.replace([pod('ns', 'kept', { app: 'api' }), pod('ns', 'new', { app: 'api' })], '42');
    expect(store.listKeys().sort()).toEqual(['ns/kept', 'ns/new']);
    expect(store.listIndexFuncValues('app')).toEqual(['api']);
    expect(store.indexKeys('app', 'api')).toEqual(['ns/kept', 'ns/new']);
    expect(store.listIndexFuncValues('tags')).toEqual([]);
    expect(store.lastSyncResourceVersion()).toBe('42');
  });

  it('keeps the last of duplicate keys, in content and indexes', () => {
    const store = podStore();
    const last = pod('ns', 'a', { app: 'second' });
    store.replace([pod('ns', 'a', { app: 'first' }), last]);
    expect(store.size).toBe(1);
    expect(store.getByKey('ns/a')).toBe(last);
    expect(store.listIndexFuncValues('app')).toEqual(['second']);
  });

  it('accepts any iterable', () => {
    const store = podStore();
    function* gen(): Generator<Pod> {
      yield pod('ns', 'a');
      yield pod('ns', 'b');
    }
    store.replace(gen(), '1');
    expect(store.size).toBe(2);
  });

  it('with an empty list empties the store and every index', () => {
    const store = podStore();
    store.add(pod('ns', 'a', { app: 'x' }, { tags: ['t'] }));
    store.replace([], '9');
    expect(store.size).toBe(0);
    expect(indexerStats(store)).toEqual({
      items: 0,
      indexes: {
        [namespaceIndex]: { values: 0, filedKeys: 0, bucketKeys: 0 },
        app: { values: 0, filedKeys: 0, bucketKeys: 0 },
        tags: { values: 0, filedKeys: 0, bucketKeys: 0 },
      },
    });
  });

  it('leaves the store untouched when a later item cannot be keyed', () => {
    const store = podStore();
    store.add(pod('ns', 'a', { app: 'x' }, { rv: '5' }));
    const before = snapshot(store);
    const fresh = pod('ns', 'b');
    expect(() => store.replace([fresh, { metadata: {} }], '6')).toThrow(KeyError);
    expect(snapshot(store)).toEqual(before);
    expect(Object.isFrozen(fresh)).toBe(false);
  });

  it('leaves the store untouched when an index function fails for a later item', () => {
    const store = createIndexer<Pod>({ indexers: { app: byApp, picky: (p) => (p.metadata?.name === 'bad' ? ({} as never) : []) } });
    store.add(pod('ns', 'a', { app: 'x' }));
    const before = snapshot(store);
    expect(() => store.replace([pod('ns', 'b', { app: 'y' }), pod('ns', 'bad')], '6')).toThrow(IndexError);
    expect(snapshot(store)).toEqual(before);
  });

  it('validates its arguments', () => {
    const store = podStore();
    expect(() => store.replace(undefined as never)).toThrow(new TypeError('replace: items must be an iterable of objects, got undefined'));
    expect(() => store.replace([], 5 as never)).toThrow(new TypeError('replace: resourceVersion must be a string, got 5'));
  });
});

describe('Indexer: addIndexers (I-14)', () => {
  it('indexes what is already stored, then keeps the new index up to date', () => {
    const store = createIndexer<Pod>();
    store.add(pod('ns', 'a', { app: 'web' }));
    store.addIndexers({ app: byApp });
    expect(store.indexKeys('app', 'web')).toEqual(['ns/a']);
    store.update(pod('ns', 'a', { app: 'api' }));
    expect(store.listIndexFuncValues('app')).toEqual(['api']);
  });

  it('rejects names that exist and adds none of the given ones', () => {
    const store = podStore();
    let caught: unknown;
    try {
      store.addIndexers({ fresh: byTags, app: byApp, tags: byTags });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(IndexConflictError);
    expect((caught as IndexConflictError).message).toBe('indexer conflict: app, tags');
    expect((caught as IndexConflictError).indexNames).toEqual(['app', 'tags']);
    expect(Object.keys(store.getIndexers())).not.toContain('fresh');
  });

  it('adds nothing when an index function fails on a stored object', () => {
    const store = podStore();
    store.add(pod('ns', 'a'));
    expect(() => store.addIndexers({ ok: byTags, bad: () => { throw new Error('x'); } })).toThrow(IndexError);
    expect(Object.keys(store.getIndexers()).sort()).toEqual(['app', namespaceIndex, 'tags'].sort());
  });

  it('validates its argument', () => {
    expect(() => podStore().addIndexers({ x: 1 } as never)).toThrow(new TypeError('addIndexers: indexers["x"] must be a function, got 1'));
  });
});

describe('Indexer: resourceVersion (I-15)', () => {
  it('is "" before any write', () => {
    expect(podStore().lastSyncResourceVersion()).toBe('');
  });

  it('follows the last write, not the highest', () => {
    const store = podStore();
    store.add(pod('ns', 'a', undefined, { rv: '10' }));
    store.update(pod('ns', 'b', undefined, { rv: '5' }));
    expect(store.lastSyncResourceVersion()).toBe('5');
  });

  it('is "" after writing an object with metadata but no resourceVersion', () => {
    const store = podStore();
    store.add(pod('ns', 'a', undefined, { rv: '10' }));
    store.add(pod('ns', 'b'));
    expect(store.lastSyncResourceVersion()).toBe('');
  });

  it('is left alone by objects without metadata', () => {
    const store = createIndexer<{ id: string; metadata?: { resourceVersion: string } }>({ keyFunc: (o) => o.id });
    store.add({ id: 'a', metadata: { resourceVersion: '3' } });
    store.add({ id: 'b' });
    expect(store.lastSyncResourceVersion()).toBe('3');
  });

  it('is set by a delete given an object, not by a tombstone', () => {
    const store = podStore();
    store.add(pod('ns', 'a', undefined, { rv: '1' }));
    store.delete(pod('ns', 'a', undefined, { rv: '2' }));
    expect(store.lastSyncResourceVersion()).toBe('2');
    store.delete(new DeletedFinalStateUnknown<Pod>('ns/a', pod('ns', 'a', undefined, { rv: '9' })));
    expect(store.lastSyncResourceVersion()).toBe('2');
  });

  it('is set by replace (reset when none is given) and by bookmark', () => {
    const store = podStore();
    store.replace([pod('ns', 'a', undefined, { rv: '1' })], '7');
    expect(store.lastSyncResourceVersion()).toBe('7');
    store.bookmark('8');
    expect(store.lastSyncResourceVersion()).toBe('8');
    expect(store.size).toBe(1);
    store.replace([]);
    expect(store.lastSyncResourceVersion()).toBe('');
    expect(() => store.bookmark(8 as never)).toThrow(TypeError);
  });
});

describe('Indexer: KeyError (K-4)', () => {
  it('wraps what the key function threw, names the object and changes nothing', () => {
    const boom = new Error('boom');
    const store = createIndexer<Pod>({ keyFunc: (p) => { if (p.metadata?.name === 'bad') throw boom; return p.metadata?.name ?? ''; } });
    store.add(pod('ns', 'good', undefined, { rv: '1' }));
    let caught: unknown;
    try {
      store.add({ kind: 'Pod', metadata: { namespace: 'ns', name: 'bad', resourceVersion: '2' } });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(KeyError);
    const err = caught as KeyError;
    expect(err.message).toBe("couldn't create key for object Pod ns/bad: boom");
    expect(err.cause).toBe(boom);
    expect(err.name).toBe('KeyError');
    expect(store.listKeys()).toEqual(['good']);
    expect(store.lastSyncResourceVersion()).toBe('1');
  });

  it('names an object without a name by its kind and keys, never its values, and keeps the object out of serialisations', () => {
    expect(() => createIndexer().add({ metadata: {} })).toThrow("couldn't create key for object an object with keys [\"metadata\"]: object has no metadata.name");
    const secret = { kind: 'Secret', metadata: { namespace: 'ns' }, data: { token: 'c2VjcmV0LXRva2Vu' } };
    let caught: unknown;
    try {
      createIndexer().add(secret);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(KeyError);
    expect((caught as KeyError).obj).toBe(secret);
    expect((caught as KeyError).message).toBe('couldn\'t create key for object a Secret with keys ["kind","metadata","data"]: object has no metadata.name');
    for (const text of [(caught as Error).message, JSON.stringify(caught), inspect(caught, { depth: Infinity })]) expect(text).not.toContain('c2VjcmV0LXRva2Vu');
  });

  it('rejects a key function that returns a non-string', () => {
    const store = createIndexer<Pod>({ keyFunc: () => 5 as never });
    expect(() => store.add(pod('ns', 'a'))).toThrow(/key function returned number, expected a string/);
    expect(store.size).toBe(0);
  });

  it('keeps the cause chain of a nested KeyError', () => {
    const inner = new KeyError({ metadata: { name: 'x' } }, new Error('root'));
    const store = createIndexer<Pod>({ keyFunc: () => { throw inner; } });
    try {
      store.add(pod('ns', 'a'));
    } catch (err) {
      expect((err as KeyError).cause).toBe(inner);
      expect(((err as KeyError).cause as KeyError).cause).toEqual(new Error('root'));
    }
    expect.assertions(2);
  });
});

describe('Indexer: IndexError', () => {
  it('leaves the store unchanged even when an earlier index would have succeeded', () => {
    const store = createIndexer<Pod>({
      indexers: {
        app: byApp,
        fails: (p) => {
          if (p.metadata?.labels?.['app'] === 'bad') throw new Error('cannot');
          return [];
        },
      },
    });
    const original = pod('ns', 'a', { app: 'web' }, { rv: '1' });
    store.add(original);
    const before = snapshot(store);
    let caught: unknown;
    try {
      store.update(pod('ns', 'a', { app: 'bad' }, { rv: '2' }));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(IndexError);
    expect((caught as IndexError).indexName).toBe('fails');
    expect((caught as IndexError).message).toBe('index function "fails" failed for object ns/a: cannot');
    expect(snapshot(store)).toEqual(before);
    expect(store.getByKey('ns/a')).toBe(original);
  });

  it('rejects an index function that returns a non-array or a non-string value', () => {
    const notArray = createIndexer<Pod>({ indexers: { x: () => 'web' as never } });
    expect(() => notArray.add(pod('ns', 'a'))).toThrow(/returned string, expected an array of strings/);
    const notString = createIndexer<Pod>({ indexers: { x: () => ['ok', 3] as never } });
    expect(() => notString.add(pod('ns', 'a'))).toThrow(/returned number at position 1, expected a string/);
    expect(notArray.size + notString.size).toBe(0);
  });

  it('does not let a key or index function write to the store it serves', () => {
    const store: Indexer<Pod> = createIndexer<Pod>({
      indexers: {
        sneaky: (p) => {
          if (p.metadata?.name === 'a') store.add(pod('ns', 'b'));
          return [];
        },
      },
    });
    let caught: unknown;
    try {
      store.add(pod('ns', 'a'));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(IndexError);
    expect(((caught as IndexError).cause as Error).message).toBe('store written from inside one of its own key or index functions');
    expect(store.size).toBe(0);
    // The guard is released afterwards.
    store.add(pod('ns', 'c'));
    expect(store.listKeys()).toEqual(['ns/c']);
  });
});

describe('Indexer: freezing', () => {
  it('deep-freezes stored objects in place by default', () => {
    const store = podStore();
    const p = pod('ns', 'a', { app: 'x' }, { tags: ['t'] });
    store.add(p);
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.isFrozen(p.metadata)).toBe(true);
    expect(Object.isFrozen(p.metadata?.labels)).toBe(true);
    expect(Object.isFrozen(p.spec?.tags)).toBe(true);
    expect(() => {
      (p.metadata?.labels as Record<string, string>)['app'] = 'y';
    }).toThrow(TypeError);
    expect(store.indexKeys('app', 'x')).toEqual(['ns/a']);
  });

  it('freezes objects stored by replace', () => {
    const store = podStore();
    const p = pod('ns', 'a', { app: 'x' });
    store.replace([p]);
    expect(Object.isFrozen(p.metadata?.labels)).toBe(true);
  });

  it('does not freeze an object whose write failed', () => {
    const store = createIndexer<Pod>({ indexers: { x: () => { throw new Error('no'); } } });
    const p = pod('ns', 'a');
    expect(() => store.add(p)).toThrow(IndexError);
    expect(Object.isFrozen(p)).toBe(false);
  });

  it('leaves objects mutable with freeze: false', () => {
    const store = createIndexer<Pod>({ freeze: false });
    const p = pod('ns', 'a');
    store.add(p);
    expect(Object.isFrozen(p)).toBe(false);
  });

  it('copes with cycles and typed arrays', () => {
    const store = createIndexer<Record<string, unknown>>({ keyFunc: () => 'k' });
    const obj: Record<string, unknown> = { bytes: new Uint8Array([1, 2]) };
    obj['self'] = obj;
    store.add(obj);
    expect(Object.isFrozen(obj)).toBe(true);
  });

  it('walks an object that many places share once, not once per place', () => {
    const store = createIndexer<Record<string, unknown>>({ keyFunc: () => 'k' });
    let reads = 0;
    const shared = new Proxy(Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, { i }])), {
      get: (target, key, receiver) => {
        reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    store.add({ refs: Array.from({ length: 200 }, () => shared) });
    expect(Object.isFrozen(shared['k0'])).toBe(true);
    // Its 200 members read once; once per reference it would be 40,000 reads.
    expect(reads).toBeLessThan(1_000);
  });

  it('skips subtrees that are already frozen (they are taken as deeply frozen)', () => {
    const store = createIndexer<Record<string, unknown>>({ keyFunc: () => 'k' });
    const inner = { mutable: { x: 1 } };
    Object.freeze(inner);
    store.add({ inner, other: { y: 2 } });
    expect(Object.isFrozen(inner.mutable)).toBe(false);
  });
});

describe('Indexer: asReadonly', () => {
  it('exposes the readers only, live, and the same view every time', () => {
    const store = podStore();
    const view = store.asReadonly();
    expect(store.asReadonly()).toBe(view);
    expect('add' in view).toBe(false);
    expect('replace' in view).toBe(false);
    store.add(pod('ns', 'a', { app: 'x' }, { rv: '3' }));
    expect(view.size).toBe(1);
    expect(view.getByKey('ns/a')).toBe(store.getByKey('ns/a'));
    expect(view.get(pod('ns', 'a'))).toBe(store.getByKey('ns/a'));
    expect(view.keyOf(pod('ns', 'a'))).toBe('ns/a');
    expect(view.list({ labelSelector: 'app=x' })).toHaveLength(1);
    expect(view.listKeys()).toEqual(['ns/a']);
    expect(view.byIndex('app', 'x')).toHaveLength(1);
    expect(view.indexKeys('app', 'x')).toEqual(['ns/a']);
    expect(view.listIndexFuncValues('app')).toEqual(['x']);
    expect(view.index('app', pod('z', 'z', { app: 'x' }))).toHaveLength(1);
    expect(Object.keys(view.getIndexers()).sort()).toEqual(['app', namespaceIndex, 'tags'].sort());
    expect(view.lastSyncResourceVersion()).toBe('3');
    expect(Object.isFrozen(view)).toBe(true);
  });
});
