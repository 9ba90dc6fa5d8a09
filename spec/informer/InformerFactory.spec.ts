import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InformerFactory } from '../../src/informer/InformerFactory.js';
import { CacheSyncError } from '../../src/informer/CacheSyncError.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

let server: ApiServer;
let factory: InformerFactory;
const lifetimes = new Lifetimes();

beforeEach(async () => {
  server = await startApiServer({ port: 0 });
  factory = new InformerFactory(server.kubeConfig(), { namespace: 'default' });
});

afterEach(async () => {
  await lifetimes.end();
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

  it('waits for the caches of the informers that run, and for more once more are subscribed (SF-3, SF-5)', async () => {
    await server.create('v1/pods', pod('p'));
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: {} });
    await server.create('v1/pods', pod('web', { labels: { app: 'web' } }));
    const pods = lifetimes.track(factory.informerFor('v1/pods'));
    pods.subscribe();
    const cms = lifetimes.track(factory.informerFor('v1/configmaps'));
    const web = lifetimes.track(factory.informerFor('v1/pods', { labelSelector: 'app=web' }));
    await expect(factory.whenSynced({ timeout: 10_000 })).resolves.toBeUndefined();
    expect(pods.status().synced).toBe(true);
    // Nobody subscribed to these: nothing runs, and the factory did not wait for them.
    expect(cms.status()).toMatchObject({ state: 'idle', synced: false });
    expect(web.status()).toMatchObject({ state: 'idle', synced: false });
    cms.addHandler({});
    web.subscribe();
    await factory.whenSynced({ timeout: 10_000 });
    expect([pods, cms, web].map((i) => i.status().synced)).toEqual([true, true, true]);
    expect(pods.store.listKeys().slice().sort()).toEqual(['default/p', 'default/web']);
    expect(web.store.listKeys()).toEqual(['default/web']);
    expect(cms.store.listKeys()).toEqual(['default/c']);
  });

  it('rejects with the informers that could not sync', async () => {
    const pods = lifetimes.track(factory.informerFor('v1/pods'));
    pods.subscribe();
    lifetimes.track(factory.informerFor('example.com/v1/nothings', { onError: () => {} })).subscribe();
    // The pods informer syncs first, so the short timeout below only ever decides about the one that cannot.
    await pods.whenSynced({ timeout: 10_000 });
    const err = await factory.whenSynced({ timeout: 1_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CacheSyncError);
    expect((err as CacheSyncError).reason).toBe('timeout');
    expect((err as CacheSyncError).unsynced).toEqual(['example.com/v1/nothings in default']);
    expect((err as CacheSyncError).synced).toEqual(['v1/pods in default']);
  });

  it('holds no lifetime of its own: an informer stops when its subscribers leave, and the next one starts it anew (LT-84)', async () => {
    const pods = factory.informerFor('v1/pods');
    const sub = pods.subscribe();
    await factory.whenSynced();
    await waitFor(() => server.stats.watchesOpen === 1, 'watch open');
    sub.unsubscribe();
    await waitFor(() => server.stats.watchesOpen === 0, 'watch closed');
    expect(pods.status()).toMatchObject({ state: 'idle', synced: false });
    expect(factory.informerFor('v1/pods')).toBe(pods);
    const again = pods.subscribe();
    await factory.whenSynced({ timeout: 10_000 });
    expect(pods.status().synced).toBe(true);
    again.unsubscribe();
  });
});
