// replaceKeyed: the informer's relist swap (PF-10, PF-43). Keys come from the caller, every object is indexed once,
// and an object an index function refuses keeps the stored copy of its key instead of refusing the whole list.
import { describe, expect, it } from 'vitest';
import { createIndexer, IndexError, type KubeObject } from '../../src/store/index.js';
import { indexerStats, replaceKeyed } from '../../src/store/indexer.js';

const pod = (name: string, rv: string, app: string): KubeObject => ({ metadata: { namespace: 'default', name, resourceVersion: rv, labels: { app } } });
const refused = (o: KubeObject): boolean => o.metadata?.labels?.['app'] === 'bad';

function counted() {
  const calls: string[] = [];
  const app = (o: KubeObject): string[] => {
    calls.push(`${o.metadata?.name}@${o.metadata?.resourceVersion}`);
    if (refused(o)) throw new Error('no app');
    return [o.metadata?.labels?.['app'] ?? ''];
  };
  return { calls, store: createIndexer<KubeObject>({ indexers: { app } }) };
}

describe('replaceKeyed', () => {
  it('files each object under the key it is given, indexed once, and moves the resourceVersion', () => {
    const { calls, store } = counted();
    store.add(pod('gone', '1', 'web'));
    calls.length = 0;
    const failures = replaceKeyed(store, ['default/a', 'elsewhere/b'], [pod('a', '5', 'web'), pod('b', '6', 'api')], '9');
    expect(failures).toEqual([]);
    expect(calls).toEqual(['a@5', 'b@6']);
    expect(store.listKeys()).toEqual(['default/a', 'elsewhere/b']);
    expect(store.byIndex('app', 'api').map((o) => o.metadata?.name)).toEqual(['b']);
    expect(store.byIndex('app', 'web').map((o) => o.metadata?.name)).toEqual(['a']);
    expect(store.lastSyncResourceVersion()).toBe('9');
    expect(Object.isFrozen(store.getByKey('default/a'))).toBe(true);
  });

  it('keeps the stored copy of a key whose new object an index function refuses, and leaves a new key out', () => {
    const { calls, store } = counted();
    store.add(pod('a', '1', 'web'));
    calls.length = 0;
    const failures = replaceKeyed(store, ['default/a', 'default/n', 'default/c'], [pod('a', '2', 'bad'), pod('n', '3', 'bad'), pod('c', '4', 'api')], '9');
    expect(failures.map((f) => f.at)).toEqual([0, 1]);
    expect(failures.every((f) => f.error instanceof IndexError && f.error.indexName === 'app')).toBe(true);
    expect(calls).toEqual(['a@2', 'n@3', 'c@4']);
    expect(store.listKeys()).toEqual(['default/a', 'default/c']);
    expect(store.getByKey('default/a')?.metadata?.resourceVersion).toBe('1');
    expect(store.byIndex('app', 'web').map((o) => o.metadata?.resourceVersion)).toEqual(['1']);
    expect(indexerStats(store).indexes['app']).toEqual({ values: 2, filedKeys: 2, bucketKeys: 2 });
  });

  it('files the object the store holds again without asking the index functions', () => {
    const { calls, store } = counted();
    store.add(pod('a', '1', 'web'));
    const held = store.getByKey('default/a') as KubeObject;
    calls.length = 0;
    expect(replaceKeyed(store, ['default/a'], [held], '2')).toEqual([]);
    expect(calls).toEqual([]);
    expect(store.byIndex('app', 'web')).toEqual([held]);
  });

  it('keeps the last of duplicate keys, unless that one is refused', () => {
    const { store } = counted();
    replaceKeyed(store, ['k', 'k'], [pod('a', '1', 'web'), pod('b', '2', 'api')], '3');
    expect(store.getByKey('k')?.metadata?.name).toBe('b');
    expect(store.byIndex('app', 'web')).toEqual([]);
    const failures = replaceKeyed(store, ['j', 'j'], [pod('c', '4', 'web'), pod('d', '5', 'bad')], '6');
    expect(failures.map((f) => f.at)).toEqual([1]);
    expect(store.listKeys()).toEqual(['j']);
    expect(store.byIndex('app', 'web').map((o) => o.metadata?.name)).toEqual(['c']);
  });
});
