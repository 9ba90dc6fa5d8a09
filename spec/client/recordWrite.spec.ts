import { KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { recordWrite } from '../../src/client/recordWrite.js';
import { writeLog, type CacheView } from '../../src/client/writeLog.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { resourceKey } from '../../src/sources/identity.js';
import { createIndexer, type Indexer } from '../../src/store/indexer.js';
import type { KubeObject } from '../../src/store/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => writeLog.reset());

/** An empty cache of the source's resource: it shows none of the writes. */
function emptyCacheOf(source: { identity: CacheView['identity'] }): CacheView & { store: Indexer<KubeObject> } {
  return { identity: source.identity, resource: resourceKey(source.identity), store: createIndexer<KubeObject>() };
}

describe('objectClient records its writes (RYW-1)', () => {
  it('records create, replace, patch and delete with the resourceVersion each answered, matched by a kubeSource of the same cluster and resource', async () => {
    const kc = server.kubeConfig();
    const cms = objectClient(kc, 'v1/configmaps', { namespace: 'default' });
    const cache = emptyCacheOf(kubeSource(kc, 'v1/configmaps'));
    const rvOf = () => writeLog.unseenObject(cache, 'default/rec')?.rv;

    const created = await cms.create({ metadata: { name: 'rec', labels: { app: 'x' } } });
    expect(rvOf()).toBe(created.metadata?.resourceVersion);
    expect(writeLog.unseenObject(cache, 'default/rec')?.labels).toEqual({ app: 'x' });
    const replaced = await cms.replace({ ...created, data: { k: '1' } });
    expect(rvOf()).toBe(replaced.metadata?.resourceVersion);
    const patched = await cms.patch('rec', { data: { k: '2' } });
    expect(rvOf()).toBe(patched.metadata?.resourceVersion);
    const before = server.resourceVersion();
    await cms.delete('rec');
    // The simulator answers a deletion with the object at the deletion's resourceVersion, as etcd does.
    expect(Number(rvOf())).toBe(Number(before) + 1);
    expect(writeLog.size).toBe(1);
  });

  it('records nothing for a write that failed, or for reads', async () => {
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    await cms.create({ metadata: { name: 'taken' } });
    writeLog.reset();
    await expect(cms.create({ metadata: { name: 'taken' } })).rejects.toThrow(/already exists/);
    await expect(cms.patch('missing', { data: {} })).rejects.toThrow(/not found/);
    await cms.get('taken');
    expect(writeLog.size).toBe(0);
  });

  it('does not match a cache of another cluster or resource, and matches one of another version of the same resource', async () => {
    const kc = server.kubeConfig();
    await objectClient(kc, 'apps/v1/deployments', { namespace: 'default' }).create({
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } } } },
    } as V1Deployment);
    const other = new KubeConfig();
    other.loadFromOptions({
      clusters: [{ name: 'o', server: 'https://192.0.2.1:6443' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'o', user: 'u' }],
      currentContext: 'c',
    });
    expect(writeLog.unseenObject(emptyCacheOf(kubeSource(other, 'apps/v1/deployments')), 'default/d')).toBeUndefined();
    expect(writeLog.unseenObject(emptyCacheOf(kubeSource(kc, 'apps/v1/replicasets')), 'default/d')).toBeUndefined();
    expect(writeLog.unseenObject(emptyCacheOf(kubeSource<KubeObject>(kc, { group: 'apps', version: 'v1beta2', plural: 'deployments' })), 'default/d')).toBeDefined();
  });
});

describe('recordWrite', () => {
  it('records a write made through another client, and a deletion answered by a Status with the namespace given', () => {
    const kc = server.kubeConfig();
    const cache = emptyCacheOf(kubeSource(kc, 'v1/configmaps'));
    recordWrite(kc, 'v1/configmaps', { metadata: { name: 'via-other', namespace: 'prod', resourceVersion: '77' } });
    expect(writeLog.unseenObject(cache, 'prod/via-other')?.rv).toBe('77');
    recordWrite(kc, 'v1/configmaps', { kind: 'Status', status: 'Success', details: { name: 'gone', uid: 'u-9' } }, { namespace: 'prod' });
    // A cache that never held the object has nothing to forget; one that holds it must see it go.
    expect(writeLog.unseenObject(cache, 'prod/gone')).toBeUndefined();
    cache.store.add({ metadata: { name: 'gone', namespace: 'prod', uid: 'u-9', resourceVersion: '5' } });
    expect(writeLog.unseenObject(cache, 'prod/gone')?.uid).toBe('u-9');
  });

  it('checks its arguments', () => {
    const kc = server.kubeConfig();
    expect(() => recordWrite({} as never, 'v1/configmaps', {})).toThrow(/kc must be a KubeConfig/);
    expect(() => recordWrite(kc, 'configmaps', {})).toThrow(TypeError);
    expect(() => recordWrite(kc, 'v1/configmaps', {}, { namespace: '' })).toThrow(new TypeError('recordWrite: option "namespace" must be a non-empty string, got ""'));
  });
});
