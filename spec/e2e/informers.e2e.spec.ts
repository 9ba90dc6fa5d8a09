/**
 * rxkube against a real kube-apiserver and etcd (AlwaysAllow): caches converge to what client-node's
 * own API clients did, for a core resource, a second core resource and a custom resource; label
 * selectors; bookmarks; streaming lists; a forced 410; and an API server killed mid-watch.
 */
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1ConfigMap,
  type V1Namespace,
  type V1Pod,
  type V1Secret,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isExpired, KubeApiError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { WatchEvent } from '../../src/sources/types.js';
import { deepFreeze } from '../../src/store/deepFreeze.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../../src/store/types.js';
import { startCluster, type Cluster } from './cluster.js';
import { converges, inBatches, informed, keyOf, mirror, names, type Informed, type Mirror } from './helpers.js';
import { waitFor } from '../helpers/waitFor.js';

let cluster: Cluster;
let kc: KubeConfig;
let core: CoreV1Api;

beforeAll(async () => {
  // secrets get no watch cache, so a watch from a compacted resourceVersion reaches etcd and gets 410.
  cluster = await startCluster({ withoutWatchCache: ['secrets'] });
  kc = cluster.kubeConfig;
  core = kc.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await cluster?.stop();
});

const running: { stop(): unknown }[] = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
});
function track<M extends { stop(): unknown }>(m: M): M {
  running.push(m);
  return m;
}

async function namespace(name: string): Promise<string> {
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

function pod(name: string, labels: Record<string, string> = {}): V1Pod {
  // Never scheduled (no scheduler or kubelet runs), so the image is never pulled and deletes are immediate.
  return { metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'registry.invalid/none:0' }] } };
}

function configMap(name: string, labels: Record<string, string> = {}, data: Record<string, string> = { v: '0' }): V1ConfigMap {
  return { metadata: { name, labels }, data };
}

const listPods = (namespace: string, labelSelector?: string) => async () =>
  (await core.listNamespacedPod({ namespace, ...(labelSelector ? { labelSelector } : {}) })).items as KubeObject[];
const listConfigMaps = (namespace: string, labelSelector?: string) => async () =>
  (await core.listNamespacedConfigMap({ namespace, ...(labelSelector ? { labelSelector } : {}) })).items as KubeObject[];
const listSecrets = (namespace: string) => async () => (await core.listNamespacedSecret({ namespace })).items as KubeObject[];

const lastCounters = (m: { statuses: Mirror<KubeObject>['statuses'] }) => m.statuses.at(-1)?.counters;
const cached = <T extends KubeObject>(i: Informed<T>) => () => i.informer.store.list();
const eventKey = <T extends KubeObject>(e: { obj: T | DeletedFinalStateUnknown<T> }) =>
  e.obj instanceof DeletedFinalStateUnknown ? e.obj.key : keyOf(e.obj);

describe('informers converge to the server', () => {
  it('pods: creates, label updates and deletes made with CoreV1Api', async () => {
    const ns = await namespace('e2e-pods');
    await inBatches(names('p', 15), 5, (n) => core.createNamespacedPod({ namespace: ns, body: pod(n, { gen: '0' }) }));

    const i = track(informed<V1Pod & KubeObject>(kc, 'v1/pods', { namespace: ns }));
    await i.whenSynced();
    await converges(cached(i), listPods(ns));
    expect(i.events.filter((e) => e.type === 'add' && e.isInInitialList)).toHaveLength(15);

    await inBatches(names('q', 10), 5, (n) => core.createNamespacedPod({ namespace: ns, body: pod(n) }));
    await inBatches(names('p', 8), 4, async (name) => {
      const cur = await core.readNamespacedPod({ name, namespace: ns });
      cur.metadata!.labels = { ...cur.metadata!.labels, gen: '1' };
      await core.replaceNamespacedPod({ name, namespace: ns, body: cur });
    });
    const gone = ['p-10', 'p-11', 'p-12', 'q-0', 'q-1'];
    await inBatches(gone, 5, (name) => core.deleteNamespacedPod({ name, namespace: ns }));

    const server = await converges(cached(i), listPods(ns));
    expect(server.size).toBe(15 + 10 - 5);
    expect(i.informer.store.getByKey(`${ns}/p-0`)?.metadata?.labels?.['gen']).toBe('1');
    const updated = new Set(i.events.filter((e) => e.type === 'update').map((e) => keyOf(e.obj)));
    for (const name of names('p', 8)) expect(updated.has(`${ns}/${name}`)).toBe(true);
    const deleted = i.events.filter((e) => e.type === 'delete').map(eventKey).sort();
    expect(deleted).toEqual(gone.map((n) => `${ns}/${n}`).sort());
    // Every change arrived over the watch: a healthy server never forces a relist.
    expect(lastCounters(i)?.relists).toBe(0);
    expect(i.errors).toEqual([]);
  });

  it('configmaps: data updates, deletes, and a delete + re-create under the same name (new UID)', async () => {
    const ns = await namespace('e2e-configmaps');
    await inBatches(names('cm', 20), 5, (n) => core.createNamespacedConfigMap({ namespace: ns, body: configMap(n) }));

    const i = track(informed<V1ConfigMap & KubeObject>(kc, 'v1/configmaps', { namespace: ns }));
    await i.whenSynced();
    await converges(cached(i), listConfigMaps(ns));
    const oldUid = i.informer.store.getByKey(`${ns}/cm-19`)?.metadata?.uid;

    await inBatches(names('cm', 10), 5, async (name) => {
      const cur = await core.readNamespacedConfigMap({ name, namespace: ns });
      await core.replaceNamespacedConfigMap({ name, namespace: ns, body: { ...cur, data: { v: '1' } } });
    });
    await inBatches(['cm-15', 'cm-16', 'cm-17', 'cm-18', 'cm-19'], 5, (name) => core.deleteNamespacedConfigMap({ name, namespace: ns }));
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('cm-19', {}, { v: 'reborn' }) });

    await converges(cached(i), listConfigMaps(ns));
    expect(i.informer.store.getByKey(`${ns}/cm-3`)?.data).toEqual({ v: '1' });
    const reborn = i.informer.store.getByKey(`${ns}/cm-19`);
    expect(reborn?.data).toEqual({ v: 'reborn' });
    expect(reborn?.metadata?.uid).not.toBe(oldUid);
    // The re-created object is a delete then an add, never an update across UIDs.
    const forCm19 = i.events.filter((e) => eventKey(e) === `${ns}/cm-19`).map((e) => e.type);
    expect(forCm19).toEqual(['add', 'delete', 'add']);
    expect(lastCounters(i)?.relists).toBe(0);
    expect(i.errors).toEqual([]);
  });

  it('a custom resource defined at run time, driven with CustomObjectsApi', async () => {
    const ns = await namespace('e2e-crd');
    const group = 'e2e.rxkube.test';
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [{
            name: 'v1', served: true, storage: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
          }],
        },
      },
    });
    await waitFor(async () => {
      const crd = await ext.readCustomResourceDefinition({ name: `widgets.${group}` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    }, 'the CRD to be established', 60_000, { everyMs: 50 });
    const custom = kc.makeApiClient(CustomObjectsApi);
    const widget = (name: string, size: number) => ({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: { size } });
    const ref = { group, version: 'v1', namespace: ns, plural: 'widgets' };
    // The new resource reaches the API server's handler chain a moment after it is Established.
    await waitFor(async () => {
      try {
        await custom.createNamespacedCustomObject({ ...ref, body: widget('w-0', 0) });
        return true;
      } catch {
        return false;
      }
    }, 'the widgets endpoint to accept a create', 60_000, { everyMs: 50 });
    await inBatches(names('w', 8).slice(1), 4, (n) => custom.createNamespacedCustomObject({ ...ref, body: widget(n, 0) }));
    const listWidgets = async () => ((await custom.listNamespacedCustomObject(ref)) as { items: KubeObject[] }).items;

    type Widget = KubeObject & { spec?: { size?: number } };
    const i = track(informed<Widget>(kc, `${group}/v1/widgets`, { namespace: ns }));
    await i.whenSynced();
    await converges(cached(i), listWidgets);

    await inBatches(names('w', 4), 4, async (name) => {
      const cur = (await custom.getNamespacedCustomObject({ ...ref, name })) as Widget;
      await custom.replaceNamespacedCustomObject({ ...ref, name, body: { ...cur, spec: { size: 7 } } });
    });
    await custom.deleteNamespacedCustomObject({ ...ref, name: 'w-7' });
    await custom.createNamespacedCustomObject({ ...ref, body: widget('w-8', 1) });

    await converges(cached(i), listWidgets);
    expect(i.informer.store.getByKey(`${ns}/w-2`)?.spec?.size).toBe(7);
    expect(i.informer.store.getByKey(`${ns}/w-7`)).toBeUndefined();
    expect(i.informer.store.getByKey(`${ns}/w-8`)?.spec?.size).toBe(1);
    expect(i.errors).toEqual([]);
  });

  it('paged lists: a small page size walks continue tokens and still converges', async () => {
    const ns = await namespace('e2e-paged');
    await inBatches(names('cm', 23), 8, (n) => core.createNamespacedConfigMap({ namespace: ns, body: configMap(n) }));
    // What the server does with limit on the first page: it pages (metadata.continue) for a consistent read.
    const source = kubeSource(kc, 'v1/configmaps', { namespace: ns });
    const first = await source.list({ limit: 5 }, AbortSignal.timeout(10_000));
    expect(first.items).toHaveLength(5);
    expect(first.metadata.continue).toBeTruthy();

    const i = track(informed<V1ConfigMap & KubeObject>(kc, 'v1/configmaps', { namespace: ns }, { reflector: { pageSize: 5 } }));
    await i.whenSynced();
    await converges(cached(i), listConfigMaps(ns));
    expect(i.informer.store.size).toBe(23);
    expect(lastCounters(i)?.lists).toBe(1);
    expect(i.errors).toEqual([]);
  });

  it('metadata-only: the real server sends PartialObjectMetadata lists and watch events, and the cache converges', async () => {
    const ns = await namespace('e2e-metadata');
    await inBatches(names('p', 7), 7, (n) => core.createNamespacedPod({ namespace: ns, body: pod(n, { tier: 'web' }) }));
    const source = kubeSource(kc, 'v1/pods', { namespace: ns, metadataOnly: true });
    const page = await source.list({ limit: 3 }, AbortSignal.timeout(10_000));
    expect(page.kind).toBe('PartialObjectMetadataList');
    expect(page.items[0]).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { labels: { tier: 'web' } } });
    expect(Object.keys(page.items[0] as object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);

    const i = track(informed<KubeObject>(kc, 'v1/pods', { namespace: ns, metadataOnly: true }));
    await i.whenSynced();
    await core.createNamespacedPod({ namespace: ns, body: pod('late', { tier: 'db' }) });
    await core.deleteNamespacedPod({ namespace: ns, name: 'p-0', gracePeriodSeconds: 0 });
    await converges(cached(i), listPods(ns));
    const late = i.informer.store.getByKey(`${ns}/late`);
    expect(late).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { labels: { tier: 'db' } } });
    expect('spec' in (late as object)).toBe(false);
    expect(i.errors).toEqual([]);
  });

  it('stripManagedFields: the decoder leaves out the managedFields the real server writes, in lists and watch events', async () => {
    const ns = await namespace('e2e-managed-fields');
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('cm', { app: 'x' }) });
    const source = kubeSource(kc, 'v1/configmaps', { namespace: ns });
    const whole = await source.list({}, AbortSignal.timeout(10_000));
    const written = whole.items[0] as V1ConfigMap;
    expect(written.metadata?.managedFields?.length).toBeGreaterThan(0);
    const dropped = await source.list({ stripManagedFields: true }, AbortSignal.timeout(10_000));
    const { managedFields: _kept, ...metadata } = written.metadata ?? {};
    expect(dropped.items).toEqual([{ ...written, metadata }]);

    const ac = new AbortController();
    const events: WatchEvent<V1ConfigMap>[] = [];
    const watching = (async () => {
      for await (const e of source.watch({ resourceVersion: whole.metadata.resourceVersion, stripManagedFields: true }, ac.signal)) {
        events.push(e);
        if (e.type === 'MODIFIED') return;
      }
    })();
    await core.patchNamespacedConfigMap({ namespace: ns, name: 'cm', body: [{ op: 'replace', path: '/data/v', value: '1' }] });
    await watching;
    ac.abort();
    const modified = events.find((e) => e.type === 'MODIFIED')?.object as V1ConfigMap | undefined;
    expect(modified?.data).toEqual({ v: '1' });
    expect(modified?.metadata?.labels).toEqual({ app: 'x' });
    expect(modified?.metadata && 'managedFields' in modified.metadata).toBe(false);
  });

  it("cached parts (PF-50): a MODIFIED event takes the cached object's unchanged spec from the real server's bytes, escapes and all", async () => {
    const ns = await namespace('e2e-cached-parts');
    const body = pod('escaped', { gen: '0' });
    // Go escapes &, < and > as \u0026, \u003c and \u003e, and writes UTF-8 as it is.
    body.spec!.containers[0]!.args = ['sh -c "a && b <c> d"', 'é 日本 😀', 'tab\there'];
    await core.createNamespacedPod({ namespace: ns, body });
    const source = kubeSource(kc, 'v1/pods', { namespace: ns });
    const listed = await source.list({ stripManagedFields: true }, AbortSignal.timeout(10_000));
    const held = deepFreeze(structuredClone(listed.items[0] as V1Pod));
    const asked: string[] = [];
    const ac = new AbortController();
    const events: WatchEvent<V1Pod>[] = [];
    const watching = (async () => {
      const lookup = (namespace: string | undefined, name: string): unknown => (asked.push(`${namespace}/${name}`), held);
      for await (const e of source.watch({ resourceVersion: listed.metadata.resourceVersion, stripManagedFields: true, cached: lookup }, ac.signal)) {
        events.push(e);
        if (e.type === 'MODIFIED') return;
      }
    })();
    await core.patchNamespacedPod({ namespace: ns, name: 'escaped', body: [{ op: 'replace', path: '/metadata/labels/gen', value: '1' }] });
    await watching;
    ac.abort();
    const modified = events.find((e) => e.type === 'MODIFIED')?.object as V1Pod | undefined;
    expect(asked).toEqual([`${ns}/escaped`]);
    expect(modified?.spec).toBe(held.spec);
    expect(modified?.metadata?.labels).toEqual({ gen: '1' });
    const now = await core.readNamespacedPod({ namespace: ns, name: 'escaped' });
    expect(JSON.parse(JSON.stringify(modified?.spec))).toEqual(JSON.parse(JSON.stringify(now.spec)));
  });

  it('a cluster-scoped resource (namespaces): keys without a namespace, and a delete that only marks Terminating', async () => {
    const listNamespaces = async () => (await core.listNamespace({ labelSelector: 'e2e=cluster-scoped' })).items as KubeObject[];
    const i = track(informed<V1Namespace & KubeObject>(kc, 'v1/namespaces', { labelSelector: 'e2e=cluster-scoped' }));
    await i.whenSynced();
    for (const name of ['e2e-cs-0', 'e2e-cs-1']) await core.createNamespace({ body: { metadata: { name, labels: { e2e: 'cluster-scoped' } } } });
    await converges(cached(i), listNamespaces);
    expect(i.informer.store.listKeys().sort()).toEqual(['e2e-cs-0', 'e2e-cs-1']);

    // No namespace controller runs here, so a deleted namespace stays, Terminating, as the LIST shows.
    await core.deleteNamespace({ name: 'e2e-cs-1' });
    await converges(cached(i), listNamespaces);
    expect(i.informer.store.getByKey('e2e-cs-1')?.status?.phase).toBe('Terminating');
    expect(i.events.some((e) => e.type === 'update' && keyOf(e.obj) === 'e2e-cs-1')).toBe(true);
    expect(i.errors).toEqual([]);
  });

  it('label selectors filter on the server: objects relabelled out leave the cache, relabelled in join it', async () => {
    const ns = await namespace('e2e-selectors');
    const web = { tier: 'web' };
    const db = { tier: 'db' };
    await inBatches(['web-0', 'web-1', 'web-2'], 3, (n) => core.createNamespacedConfigMap({ namespace: ns, body: configMap(n, web) }));
    await inBatches(['db-0', 'db-1', 'db-2'], 3, (n) => core.createNamespacedConfigMap({ namespace: ns, body: configMap(n, db) }));

    const i = track(informed<V1ConfigMap & KubeObject>(kc, 'v1/configmaps', { namespace: ns, labelSelector: 'tier=web' }));
    await i.whenSynced();
    await converges(cached(i), listConfigMaps(ns, 'tier=web'));
    expect(i.informer.store.listKeys().sort()).toEqual([`${ns}/web-0`, `${ns}/web-1`, `${ns}/web-2`]);

    const relabel = async (name: string, labels: Record<string, string>) => {
      const cur = await core.readNamespacedConfigMap({ name, namespace: ns });
      await core.replaceNamespacedConfigMap({ name, namespace: ns, body: { ...cur, metadata: { ...cur.metadata, labels } } });
    };
    await relabel('web-0', db);
    await relabel('db-0', web);
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('web-3', web) });
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('db-3', db) });
    await core.deleteNamespacedConfigMap({ name: 'web-1', namespace: ns });

    await converges(cached(i), listConfigMaps(ns, 'tier=web'));
    expect(i.informer.store.listKeys().sort()).toEqual([`${ns}/db-0`, `${ns}/web-2`, `${ns}/web-3`]);
    // Objects that never matched never reached the client at all.
    for (const never of ['db-1', 'db-2', 'db-3']) expect(i.everSeen.has(`${ns}/${never}`)).toBe(false);
    // web-0 left through a DELETED the server sent because it stopped matching, not through a relist;
    // db-0 joined through an ADDED for an object the watch had never shown.
    const left = i.events.find((e) => e.type === 'delete' && eventKey(e) === `${ns}/web-0`);
    if (left?.type !== 'delete' || left.obj instanceof DeletedFinalStateUnknown) throw new Error(`web-0 did not leave through a watch DELETED: ${JSON.stringify(left)}`);
    // The server's DELETED for a selector transition carries the object as it last matched (tier=web).
    expect(left.obj.metadata?.labels?.['tier']).toBe('web');
    expect(i.events.some((e) => e.type === 'add' && keyOf(e.obj) === `${ns}/db-0` && !e.isInInitialList)).toBe(true);
    expect(lastCounters(i)?.relists).toBe(0);
  });
});

describe('watch protocol', () => {
  it('bookmarks arrive at reflect(), carrying a resourceVersion no older than the list', async () => {
    const ns = await namespace('e2e-bookmarks');
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('only') });
    // Short watches make the server send its bookmark ~2 s before each watch's deadline.
    const m = track(mirror<V1ConfigMap & KubeObject>(kc, 'v1/configmaps', { namespace: ns }, { minWatchTimeoutSeconds: 4 }));
    await m.whenSynced();
    // The watch cache sends a bookmark only once its resourceVersion is past the watcher's: move etcd on with a
    // write elsewhere (a quiet cluster would get there too, through the API server's own lease updates).
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'elsewhere' } } });
    await waitFor(() => m.events.some((e) => e.type === 'Bookmark'), 'a bookmark', 60_000);
    const replace = m.events.find((e) => e.type === 'Replace');
    const bookmark = m.events.find((e) => e.type === 'Bookmark');
    if (replace?.type !== 'Replace' || bookmark?.type !== 'Bookmark') throw new Error('unreachable');
    // resourceVersions are opaque to clients; etcd-backed ones happen to be integers, which lets the test check order.
    expect(BigInt(bookmark.resourceVersion)).toBeGreaterThanOrEqual(BigInt(replace.resourceVersion));
    expect(m.objects.size).toBe(1);
    expect(m.failure).toBeUndefined();
  });

  it("streaming list (initialList: 'stream') fills the cache without a paged LIST and keeps watching", async () => {
    const ns = await namespace('e2e-stream');
    await inBatches(names('s', 30), 10, (n) => core.createNamespacedConfigMap({ namespace: ns, body: configMap(n) }));

    const i = track(informed<V1ConfigMap & KubeObject>(kc, 'v1/configmaps', { namespace: ns }, { initialList: 'stream' }));
    await i.whenSynced();
    await converges(cached(i), listConfigMaps(ns));
    expect(i.events.filter((e) => e.type === 'add' && e.isInInitialList)).toHaveLength(30);
    const listings = i.statuses.filter((s) => s.state === 'listing');
    expect(listings.length).toBeGreaterThan(0);
    // No fallback: the real server accepted sendInitialEvents.
    expect(listings.every((s) => s.state === 'listing' && s.mode === 'stream')).toBe(true);
    expect(i.statuses.some((s) => s.state === 'error')).toBe(false);

    await core.deleteNamespacedConfigMap({ name: 's-0', namespace: ns });
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('s-30') });
    await converges(cached(i), listConfigMaps(ns));
    expect(lastCounters(i)?.relists).toBe(0);
    expect(i.errors).toEqual([]);
  });
});

describe('what the real server says on the wire after an etcd compaction', () => {
  /** Reads one watch to its end (or its first `max` events); what it threw, if anything. */
  async function drain<T>(events: AsyncIterable<WatchEvent<T>>, max: number): Promise<{ events: WatchEvent<T>[]; error: unknown }> {
    const seen: WatchEvent<T>[] = [];
    try {
      for await (const e of events) {
        seen.push(e);
        if (seen.length >= max) break;
      }
      return { events: seen, error: undefined };
    } catch (error) {
      return { events: seen, error };
    }
  }

  it('a watch from a compacted resourceVersion on a resource without watch cache fails with 410 Expired', async () => {
    const ns = await namespace('e2e-wire-expired');
    const source = kubeSource(kc, 'v1/secrets', { namespace: ns });
    const listed = await source.list({}, AbortSignal.timeout(10_000));
    const rv = listed.metadata.resourceVersion!;
    // Two writes: etcd keeps the revision it compacts at, and the watch resumes just after rv.
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'after-0' } } });
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'after-1' } } });
    await cluster.compactEtcd();
    const { events, error } = await drain(source.watch({ resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 10 }, AbortSignal.timeout(15_000)), 10);
    expect(events).toEqual([]);
    expect(isExpired(error)).toBe(true);
    expect((error as KubeApiError).status).toBe(410);
    expect((error as KubeApiError).reason).toBe('Expired');
  });

  it('the watch cache keeps serving history that etcd has compacted away (no 410 while it holds the events)', async () => {
    const ns = await namespace('e2e-wire-cached');
    const source = kubeSource(kc, 'v1/configmaps', { namespace: ns });
    const listed = await source.list({}, AbortSignal.timeout(10_000));
    const rv = listed.metadata.resourceVersion!;
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('after-0') });
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('after-1') });
    await cluster.compactEtcd();
    const { events, error } = await drain(source.watch({ resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 10 }, AbortSignal.timeout(15_000)), 2);
    expect(error).toBeUndefined();
    expect(events.map((e) => [e.type, e.type === 'BOOKMARK' ? undefined : e.object.metadata?.name])).toEqual([['ADDED', 'after-0'], ['ADDED', 'after-1']]);
  });
});

describe('faults', () => {
  it('a watch that falls behind an etcd compaction gets 410 and relists without losing or ghosting an object', async () => {
    const ns = await namespace('e2e-expired');
    const secret = (name: string, v: string): V1Secret => ({ metadata: { name }, stringData: { v } });
    await inBatches(names('s', 12), 6, (n) => core.createNamespacedSecret({ namespace: ns, body: secret(n, '0') }));

    const proxy = await cluster.startProxy();
    const i = track(informed<V1Secret & KubeObject>(proxy.kubeConfig(), 'v1/secrets', { namespace: ns }, {
      reflector: { backoff: { initialMs: 100, maxMs: 2_000 } },
    }));
    await i.whenSynced();
    await converges(cached(i), listSecrets(ns));
    await waitFor(() => i.statuses.at(-1)?.state === 'watching', 'the watch to be open', 60_000);
    const before = i.events.length;

    // While the client is cut off, change every kind of thing, then compact away the history it would need.
    proxy.cut();
    await inBatches(['s-0', 's-1', 's-2'], 3, (name) => core.deleteNamespacedSecret({ name, namespace: ns }));
    await inBatches(['s-3', 's-4', 's-5'], 3, async (name) => {
      const cur = await core.readNamespacedSecret({ name, namespace: ns });
      await core.replaceNamespacedSecret({ name, namespace: ns, body: { ...cur, stringData: { v: '1' } } });
    });
    await inBatches(['n-0', 'n-1', 'n-2'], 3, (n) => core.createNamespacedSecret({ namespace: ns, body: secret(n, '0') }));
    // A delete + re-create under one name while cut off: only the UID tells them apart.
    const oldUid = i.informer.store.getByKey(`${ns}/s-6`)?.metadata?.uid;
    await core.deleteNamespacedSecret({ name: 's-6', namespace: ns });
    await core.createNamespacedSecret({ namespace: ns, body: secret('s-6', 'reborn') });
    expect(await cluster.compactEtcd()).toBeGreaterThan(0);
    proxy.heal();

    await converges(cached(i), listSecrets(ns));
    expect(i.informer.store.getByKey(`${ns}/s-6`)?.metadata?.uid).not.toBe(oldUid);
    expect(i.statuses.some((s) => s.state === 'relisting' && s.reason === 'expired' && isExpired(s.error))).toBe(true);

    // What the relist told subscribers: exactly the changes, nothing for the untouched objects.
    const after = i.events.slice(before);
    const k = (n: string) => `${ns}/${n}`;
    const deletes = after.filter((e) => e.type === 'delete');
    // Deletions learned from a list carry the last known state in a tombstone.
    expect(deletes.every((e) => e.obj instanceof DeletedFinalStateUnknown)).toBe(true);
    expect(deletes.map(eventKey).sort()).toEqual(['s-0', 's-1', 's-2', 's-6'].map(k));
    expect(after.filter((e) => e.type === 'update').map(eventKey).sort()).toEqual(['s-3', 's-4', 's-5'].map(k));
    expect(after.filter((e) => e.type === 'add').map(eventKey).sort()).toEqual(['n-0', 'n-1', 'n-2', 's-6'].map(k));
    expect(after.filter((e) => e.type === 'add').every((e) => e.type === 'add' && !e.isInInitialList)).toBe(true);
  });

  it('the API server killed mid-watch and restarted: the informer recovers and follows later changes', async () => {
    const ns = await namespace('e2e-restart');
    await inBatches(names('p', 10), 5, (n) => core.createNamespacedPod({ namespace: ns, body: pod(n) }));
    const i = track(informed<V1Pod & KubeObject>(kc, 'v1/pods', { namespace: ns }, {
      reflector: { backoff: { initialMs: 200, maxMs: 2_000 } },
    }));
    await i.whenSynced();
    await core.deleteNamespacedPod({ name: 'p-0', namespace: ns });
    await converges(cached(i), listPods(ns));
    await waitFor(() => i.statuses.at(-1)?.state === 'watching', 'the watch to be open', 60_000);
    const watchesBefore = lastCounters(i)?.watches ?? 0;

    const seenBefore = i.statuses.length;
    await cluster.killApiServer();
    await waitFor(() => i.statuses.slice(seenBefore).some((s) => s.state === 'backoff'), 'the reflector to notice the server is gone', 60_000);
    await cluster.startApiServer();

    await inBatches(names('r', 5), 5, (n) => core.createNamespacedPod({ namespace: ns, body: pod(n) }));
    await core.deleteNamespacedPod({ name: 'p-1', namespace: ns });
    await converges(cached(i), listPods(ns), 90_000);
    expect(i.informer.store.size).toBe(10 - 2 + 5);
    expect(lastCounters(i)?.watches).toBeGreaterThan(watchesBefore);
    expect(i.informer.status().synced).toBe(true);
    expect(i.status?.state).toBe('running');
  });
});
