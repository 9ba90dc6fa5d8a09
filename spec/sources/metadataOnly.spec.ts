import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { informer, type Informer } from '../../src/informer/informer.js';
import { InformerFactory } from '../../src/informer/InformerFactory.js';
import { kubeSource, type KubeSource } from '../../src/sources/kubeSource.js';
import type { PartialObjectMetadata } from '../../src/sources/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

let server: ApiServer;
let inf: Informer<PartialObjectMetadata> | undefined;
const lifetimes = new Lifetimes();

beforeEach(async () => {
  server = await startApiServer({ port: 0 });
});

afterEach(async () => {
  await lifetimes.end();
  inf = undefined;
  await server.close();
});

describe('metadata-only sources', () => {
  it('list and watch PartialObjectMetadata: metadata kept, spec and status gone', async () => {
    for (let i = 0; i < 5; i++) await server.create('v1/pods', { ...pod(`p${i}`, { labels: { app: 'web' } }), status: { phase: 'Running' } });
    const source = kubeSource(server.kubeConfig(), 'v1/pods', { metadataOnly: true, pageSize: 2 });
    expectTypeOf(source).toEqualTypeOf<KubeSource<PartialObjectMetadata>>();
    const page = await source.list({}, AbortSignal.timeout(10_000));
    expect(page.kind).toBe('PartialObjectMetadataList');
    expect(page.items).toHaveLength(2);
    expect(page.metadata.continue).toBeTruthy();
    expect(page.items[0]).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'p0', labels: { app: 'web' } } });
    expect(Object.keys(page.items[0] as object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);

    inf = lifetimes.track(informer(source));
    inf.subscribe();
    await inf.whenSynced({ timeout: 10_000 });
    expect(inf.store.listKeys().sort()).toEqual(['default/p0', 'default/p1', 'default/p2', 'default/p3', 'default/p4']);
    await server.create('v1/pods', { ...pod('later'), status: { phase: 'Pending' } });
    const later = await waitFor(() => inf?.store.getByKey('default/later'), 'the watched pod');
    expect(later.kind).toBe('PartialObjectMetadata');
    expect('spec' in later || 'status' in later).toBe(false);
    expect(later.metadata?.uid).toBe(server.get<{ metadata: { uid: string } }>('v1/pods', 'default', 'later')?.metadata.uid);
  });

  it('a factory keeps the metadata-only informer apart from the full one', async () => {
    await server.create('v1/pods', pod('a'));
    const factory = new InformerFactory(server.kubeConfig());
    const meta = lifetimes.track(factory.informerFor('v1/pods', { metadataOnly: true }));
    expect(meta).not.toBe(factory.informerFor('v1/pods'));
    expect(factory.informerFor('v1/pods', { metadataOnly: true })).toBe(meta);
    meta.subscribe();
    lifetimes.track(factory.informerFor('v1/pods')).subscribe();
    await factory.whenSynced({ timeout: 10_000 });
    expect(meta.store.getByKey('default/a')?.kind).toBe('PartialObjectMetadata');
    expect(factory.informerFor('v1/pods').store.getByKey('default/a')?.spec).toBeDefined();
  });

  it('rejects a metadataOnly that is not a boolean', () => {
    expect(() => kubeSource(server.kubeConfig(), 'v1/pods', { metadataOnly: 'yes' as never })).toThrow(/metadataOnly/);
  });
});
