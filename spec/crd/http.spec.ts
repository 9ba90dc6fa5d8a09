import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { customResource, informer, InformerFactory, kubeSource, objectClient } from '../../src/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

const Website = customResource({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  spec: z.object({ image: z.string().min(1), replicas: z.number().int().min(0).default(1) }),
  status: z.object({ readyReplicas: z.number().int().optional() }),
  subresources: { status: true },
});
type Website = typeof Website.Type;

describe('a definition against the API server', () => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer();
    // Registered by its names, as the simulator's own resources are: these specs depend on the definition, not on the simulator reading CRDs.
    server.registerResource({ group: Website.group, version: Website.version, plural: Website.plural, kind: Website.kind, namespaced: Website.namespaced, subresources: { status: {} } });
  });
  afterEach(async () => {
    await server.close();
  });

  it('applies typed objects and their status, and an informer of the definition reads them back typed', async () => {
    const kc = server.kubeConfig();
    const sites = objectClient(kc, Website, { namespace: 'default', fieldManager: 'spec' });
    const applied = await sites.apply({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'home' }, spec: { image: 'nginx', replicas: 2 } });
    expectTypeOf(applied).toEqualTypeOf<Website>();
    expect([applied.metadata.namespace, applied.spec]).toEqual(['default', { image: 'nginx', replicas: 2 }]);
    await sites.applyStatus({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'home' }, status: { readyReplicas: 2 } });

    const websites = informer(kubeSource(kc, Website, { namespace: 'default' }));
    const subscription = websites.subscribe();
    try {
      const seen = await waitFor(() => websites.store.getByKey('default/home'), 'the informer to hold default/home');
      expectTypeOf(seen).toEqualTypeOf<Website>();
      expect([seen.apiVersion, seen.kind, seen.spec.replicas, seen.status?.readyReplicas]).toEqual(['example.com/v1', 'Website', 2, 2]);
      expect(Website.validate(seen)).toEqual({ value: seen });
    } finally {
      subscription.unsubscribe();
    }
  });

  it('an informer factory serves an informer of the definition', async () => {
    const kc = server.kubeConfig();
    await objectClient(kc, Website, { namespace: 'default' }).apply({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'shop' }, spec: { image: 'httpd' } });
    const factory = new InformerFactory(kc, { namespace: 'default' });
    const websites = factory.informerFor(Website);
    const sub = websites.subscribe();
    try {
      await factory.whenSynced({ timeout: 10_000 });
      expect(websites.status()).toMatchObject({ state: 'running', synced: true });
      expect(websites.store.getByKey('default/shop')?.spec.image).toBe('httpd');
    } finally {
      sub.unsubscribe();
    }
  });

  it('reaches the resource at the definition\'s path, and a list of it validates item by item', async () => {
    const kc = server.kubeConfig();
    await server.create('example.com/v1/websites', { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'bad', namespace: 'default' }, spec: { image: '' } });
    const ac = new AbortController();
    const list = await kubeSource(kc, Website).list({}, ac.signal);
    expect(list.items.map((w) => w.metadata.name)).toEqual(['bad']);
    const result = Website.validate(list.items[0]);
    expect(result.issues).toEqual([{ path: 'spec.image', message: expect.stringMatching(/>=1/) as unknown as string }]);
  });
});
