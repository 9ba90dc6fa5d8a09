import { afterEach, describe, expect, it } from 'vitest';
import { recordAnswer } from '../../src/client/recordWrite.js';
import { writeLog, type CacheView, type WriteEntry } from '../../src/client/writeLog.js';
import { resourceKey } from '../../src/sources/identity.js';
import { atOrPast, compareOrdered, orderedResourceVersion } from '../../src/sources/resourceVersion.js';
import type { SourceIdentity } from '../../src/sources/types.js';
import { createIndexer, type Indexer } from '../../src/store/indexer.js';
import type { KubeObject } from '../../src/store/types.js';

const CLUSTER = 'https://10.0.0.1:6443';
const CMS = resourceKey({ cluster: CLUSTER, group: '', plural: 'configmaps' });

interface Cache extends CacheView {
  readonly store: Indexer<KubeObject>;
}

function cache(extra: Partial<SourceIdentity> = {}): Cache {
  const identity: SourceIdentity = { cluster: CLUSTER, group: '', version: 'v1', plural: 'configmaps', ...extra };
  return { identity, resource: resourceKey(identity), store: createIndexer<KubeObject>({ freeze: false }) };
}

const cm = (name: string, rv: string, extra: { namespace?: string; labels?: Record<string, string>; uid?: string } = {}): KubeObject => ({
  metadata: { name, namespace: extra.namespace ?? 'default', resourceVersion: rv, uid: extra.uid ?? `uid-${name}`, ...(extra.labels && { labels: extra.labels }) },
});

/** What objectClient does after a successful write. */
const wrote = (answer: unknown, namespace = 'default', name?: string): void => recordAnswer(CMS, namespace, name, answer);

afterEach(() => writeLog.reset());

describe('resourceVersion order (RYW-5)', () => {
  it('orders decimal resourceVersions as integers, whatever their length, and nothing else', () => {
    expect(orderedResourceVersion('00120')).toBe('120');
    expect(orderedResourceVersion('0')).toBe('0');
    expect(orderedResourceVersion('12a')).toBeUndefined();
    expect(orderedResourceVersion('')).toBeUndefined();
    expect(orderedResourceVersion(12)).toBeUndefined();
    expect(compareOrdered('99', '100')).toBeLessThan(0);
    expect(compareOrdered('18446744073709551615', '18446744073709551614')).toBeGreaterThan(0);
    expect(atOrPast('100', '100')).toBe(true);
    expect(atOrPast('', '1')).toBe(false);
    expect(atOrPast('abc', '1')).toBe(false);
  });
});

describe('the write log', () => {
  it('records what a write answered and keeps only the newest write of each object', () => {
    wrote(cm('a', '10'));
    wrote(cm('b', '11'));
    wrote(cm('a', '12'));
    expect(writeLog.size).toBe(2);
    const c = cache();
    expect(writeLog.unseenObject(c, 'default/a')?.rv).toBe('12');
    expect(writeLog.unseenResource(c).map((e) => `${e.key}@${e.rv}`)).toEqual(['default/a@12', 'default/b@11']);
  });

  it('records nothing for answers it cannot order or place', () => {
    wrote(cm('a', 'opaque-token'));
    wrote({ metadata: { resourceVersion: '5' } });
    wrote({ kind: 'Status', status: 'Success', details: { name: 'a' } });
    wrote(null);
    expect(writeLog.size).toBe(0);
  });

  it('a cache shows a write once its resourceVersion, or the object it holds, is at or past it', () => {
    wrote(cm('a', '10'));
    const c = cache();
    c.store.add(cm('a', '9'));
    expect(writeLog.unseenObject(c, 'default/a')).toBeDefined();
    c.store.add(cm('b', '10'));
    expect(c.store.lastSyncResourceVersion()).toBe('10');
    expect(writeLog.unseenObject(c, 'default/a')).toBeUndefined();
    const d = cache();
    d.store.add(cm('a', '10'));
    d.store.bookmark('');
    expect(writeLog.unseenObject(d, 'default/a')).toBeUndefined();
  });

  it('a deletion answered by a Status is shown once the cache no longer holds that uid', () => {
    const c = cache();
    c.store.add(cm('a', '4', { uid: 'u1' }));
    c.store.bookmark('20');
    wrote({ kind: 'Status', status: 'Success', details: { name: 'a', uid: 'u1' } }, 'default', 'a');
    // Its resourceVersion is unknown, so the cache's own tells nothing.
    expect(writeLog.unseenObject(c, 'default/a')?.uid).toBe('u1');
    c.store.delete(cm('a', '21', { uid: 'u1' }));
    expect(writeLog.unseenObject(c, 'default/a')).toBeUndefined();
    c.store.add(cm('a', '22', { uid: 'u2' }));
    expect(writeLog.unseenObject(c, 'default/a')).toBeUndefined();
  });

  it('leaves out writes a filtered cache will never hear of (RYW-3)', () => {
    wrote(cm('x', '10', { namespace: 'other' }));
    wrote(cm('y', '11', { labels: { app: 'web' } }));
    wrote(cm('z', '12', { labels: { app: 'db' } }));
    const keys = (c: Cache) => writeLog.unseenResource(c).map((e: WriteEntry) => e.key).sort();
    expect(keys(cache({ namespace: 'default' }))).toEqual(['default/y', 'default/z']);
    expect(keys(cache({ labelSelector: 'app=web' }))).toEqual(['default/y']);
    expect(keys(cache({ fieldSelector: 'metadata.name!=z,metadata.namespace=default' }))).toEqual(['default/y']);
    // A field the log does not keep: every write may match.
    expect(keys(cache({ fieldSelector: 'status.phase=Running' }))).toEqual(['default/y', 'default/z', 'other/x']);
    // An object the cache holds is always heard of: it leaves the selector as a DELETED.
    const held = cache({ labelSelector: 'app=web' });
    held.store.add(cm('z', '3', { labels: { app: 'web' } }));
    expect(keys(held)).toEqual(['default/y', 'default/z']);
  });

  it('forgets a write once every registered cache of its resource saw it, and not before', () => {
    const a = cache();
    const b = cache({ namespace: 'default' });
    const stopA = writeLog.register(a);
    writeLog.register(b);
    wrote(cm('w', '10'));
    a.store.bookmark('10');
    writeLog.prune(a);
    expect(writeLog.size).toBe(1);
    b.store.bookmark('11');
    writeLog.prune(a);
    expect(writeLog.size).toBe(0);
    // With no cache registered, only the TTL makes a write leave.
    stopA();
    wrote(cm('v', '30'));
    writeLog.prune(a);
    expect(writeLog.size).toBe(1);
  });

  it('forgets writes past the TTL and evicts the oldest past the size cap', () => {
    let now = 0;
    writeLog.reset({ ttlMs: 1_000, maxEntries: 3, now: () => now });
    for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) wrote(cm(name, String(10 + i)));
    expect(writeLog.size).toBe(3);
    expect(writeLog.evicted).toBe(1);
    expect(writeLog.unseenObject(cache(), 'default/a')).toBeUndefined();
    now = 1_500;
    wrote(cm('e', '20'));
    expect(writeLog.size).toBe(1);
    expect(writeLog.unseenResource(cache()).map((e) => e.key)).toEqual(['default/e']);
  });

  it('stays bounded under churn of the same objects and of many objects', () => {
    writeLog.reset({ maxEntries: 500 });
    for (let i = 0; i < 20_000; i++) wrote(cm(`o${i % 50}`, String(100 + i)));
    expect(writeLog.size).toBe(50);
    for (let i = 0; i < 20_000; i++) wrote(cm(`n${i}`, String(30_000 + i)));
    expect(writeLog.size).toBe(500);
  });
});
