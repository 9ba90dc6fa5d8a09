import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/index.js';
import { informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';
import { website, websiteCrd } from './crdFixtures.js';

// rxkube's own client and informer against a CRD the simulator serves: the CRD applied as
// objectClient.apply sends it, its objects cached, and the cache emptied when the CRD goes.

let server: ApiServer;
const running = new Lifetimes();
beforeEach(async () => {
  server = await startApiServer();
});
afterEach(async () => {
  await running.end();
  await server.close();
});

const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', namespaced: false } as const;
const WEBSITES = { group: 'example.com', version: 'v1', plural: 'websites', namespaced: true } as const;

describe('a CRD through rxkube', () => {
  it('is applied, Established, and its objects flow through an informer until the CRD is deleted', async () => {
    const kc = server.kubeConfig();
    const crds = objectClient(kc, CRDS, { fieldManager: 'installer' });
    await crds.apply(websiteCrd() as never, { force: true });
    const crdInformer = running.track(informer(kubeSource(kc, CRDS)));
    crdInformer.subscribe();
    await waitFor(
      () => (crdInformer.store.getByKey('websites.example.com') as any)?.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True'),
      'the informer to see Established',
    );

    const websites = objectClient(kc, WEBSITES, { namespace: 'default', fieldManager: 'test' });
    await websites.apply(website('blog') as never, { force: true });
    const cache = running.track(informer(kubeSource(kc, WEBSITES), { reflector: { backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } } }));
    cache.subscribe();
    await cache.whenSynced({ timeout: 10_000 });
    expect(cache.store.listKeys()).toEqual(['default/blog']);

    await crds.delete('websites.example.com');
    await waitFor(() => cache.store.listKeys().length === 0, 'the cache emptied');
    await waitFor(() => crdInformer.store.listKeys().length === 0, 'the CRD gone from its informer');
  });
});
