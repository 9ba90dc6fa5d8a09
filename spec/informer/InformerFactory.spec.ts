import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InformerFactory } from '../../src/informer/InformerFactory.js';
import { CacheSyncError } from '../../src/informer/CacheSyncError.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';

let server: ApiServer;
let factory: InformerFactory;

beforeEach(async () => {
  server = await startApiServer({ port: 0 });
  factory = new InformerFactory(server.kubeConfig(), { namespace: 'default' });
});

afterEach(async () => {
  await factory.shutdown();
  await server.close();
});

describe('InformerFactory', () => {
  it('shares one informer per resource, namespace, selectors and transform', () => {
    const t = <T>(o: T): T => o;
    expect(factory.informerFor('v1/pods')).toBe(factory.informerFor('v1/pods'));
    expect(factory.informerFor('v1/pods', { labelSelector: 'app=web' })).toBe(factory.informerFor('v1/pods', { labelSelector: 'app=web' }));
    expect(factory.informerFor('v1/pods', { labelSelector: 'app=web' })).not.toBe(factory.informerFor('v1/pods'));
    expect(factory.informerFor('v1/pods', { namespace: 'other' })).not.toBe(factory.informerFor('v1/pods'));
    expect(factory.informerFor('v1/pods', { transform: t })).toBe(factory.informerFor('v1/pods', { transform: t }));
    expect(factory.informerFor('v1/pods', { transform: t })).not.toBe(factory.informerFor('v1/pods', { transform: (o) => o }));
  });

  it('starts what was asked for, again after more is asked for, and waits for their caches', async () => {
    await server.create('v1/pods', pod('p'));
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: {} });
    await server.create('v1/pods', pod('web', { labels: { app: 'web' } }));
    const pods = factory.informerFor('v1/pods');
    factory.start();
    const cms = factory.informerFor('v1/configmaps');
    const web = factory.informerFor('v1/pods', { labelSelector: 'app=web' });
    expect(await factory.whenSynced({ timeout: 10_000 })).toEqual(['v1/pods in default']);
    expect(cms.hasSynced()).toBe(false);
    factory.start();
    const synced = await factory.whenSynced({ timeout: 10_000 });
    expect([...synced].sort()).toEqual(['v1/configmaps in default', 'v1/pods in default', 'v1/pods in default labels(app=web)']);
    expect(pods.store.listKeys().slice().sort()).toEqual(['default/p', 'default/web']);
    expect(web.store.listKeys()).toEqual(['default/web']);
    expect(cms.store.listKeys()).toEqual(['default/c']);
  });

  it('rejects with the informers that could not sync', async () => {
    const pods = factory.informerFor('v1/pods');
    factory.informerFor('example.com/v1/nothings');
    factory.start();
    // The pods informer syncs first, so the short timeout below only ever decides about the one that cannot.
    await pods.whenSynced({ timeout: 10_000 });
    const err = await factory.whenSynced({ timeout: 1_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CacheSyncError);
    expect((err as CacheSyncError).unsynced).toEqual(['example.com/v1/nothings in default']);
    expect((err as CacheSyncError).synced).toEqual(['v1/pods in default']);
  });

  it('shutdown stops every informer and makes start a no-op', async () => {
    const pods = factory.informerFor('v1/pods');
    factory.start();
    await factory.whenSynced();
    await waitFor(() => server.stats.watchesOpen === 1, 'watch open');
    await factory.shutdown();
    await waitFor(() => server.stats.watchesOpen === 0, 'watch closed');
    const later = factory.informerFor('v1/configmaps');
    factory.start();
    expect(later.hasSynced()).toBe(false);
    expect(pods.hasSynced()).toBe(true);
    await factory.shutdown();
  });
});
