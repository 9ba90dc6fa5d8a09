import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CacheProgress } from '../../src/informer/cacheProgress.js';
import { informer } from '../../src/informer/informer.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { ListerWatcher } from '../../src/sources/types.js';
import { createIndexer } from '../../src/store/indexer.js';
import type { KubeObject } from '../../src/store/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';
import { configMap } from '../helpers/objects.js';

let server: ApiServer;
const running = new Lifetimes();

beforeEach(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 50 });
});
afterEach(async () => {
  await running.end();
  await server.close();
});


describe("the informer store's resourceVersion (S-40)", () => {
  it('moves with watch events and with bookmarks, and is told on resourceVersion$', async () => {
    await server.create('v1/configmaps', configMap('first', { namespace: 'watched' }));
    const inf = informer(kubeSource(server.kubeConfig(), 'v1/configmaps', { namespace: 'watched' }));
    running.track(inf);
    const told: string[] = [];
    inf.resourceVersion$.subscribe((rv) => told.push(rv));
    inf.subscribe();
    await inf.whenSynced({ timeout: 10_000 });
    expect(inf.store.lastSyncResourceVersion()).toBe(server.resourceVersion());

    const created = await server.create<KubeObject>('v1/configmaps', configMap('second', { namespace: 'watched' }));
    await waitFor(() => inf.store.getByKey('watched/second'), 'the watch event');
    expect(inf.store.lastSyncResourceVersion()).toBe(created.metadata?.resourceVersion);
    expect(told).toContain(created.metadata?.resourceVersion);

    // Writes this informer never hears of still move it, by the next bookmark.
    for (let i = 0; i < 3; i++) await server.create('v1/configmaps', configMap(`elsewhere-${i}`, { namespace: 'other' }));
    const target = server.resourceVersion();
    await waitFor(() => inf.store.lastSyncResourceVersion() === target, `a bookmark at ${target}`);
    expect(told.at(-1)).toBe(target);
  });

  it('carries the identity of its source, and refuses a malformed one', () => {
    const source = kubeSource(server.kubeConfig(), 'v1/configmaps', { namespace: 'ns', labelSelector: 'app=web' });
    const inf = informer(source);
    expect(inf.identity).toBe(source.identity);
    expect(inf.identity).toEqual({ cluster: server.url, group: '', version: 'v1', plural: 'configmaps', namespace: 'ns', labelSelector: 'app=web' });
    const bad: ListerWatcher<KubeObject> = { list: source.list, watch: source.watch, identity: { cluster: 1 } as never };
    expect(() => informer(bad)).toThrow(/source.identity must be/);
  });
});

describe('CacheProgress', () => {
  const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });

  it('holds the resourceVersion of the last complete event while a relist applies its pages, then takes the list’s', () => {
    const store = createIndexer<KubeObject>({ freeze: false });
    const progress = new CacheProgress(store as never);
    const apply = (event: ReflectorEvent<KubeObject>, write: () => void = () => {}): string => {
      write();
      progress.applied(event);
      return store.lastSyncResourceVersion();
    };
    expect(apply({ type: 'Replace', items: [], resourceVersion: '10' })).toBe('10');
    expect(apply({ type: 'Modified', obj: obj('a', '12'), resourceVersion: '12' }, () => store.update(obj('a', '12')))).toBe('12');
    // An event the FIFO dropped (a delete of something never cached) still moves it.
    expect(apply({ type: 'Deleted', obj: obj('zz', '13'), resourceVersion: '13' })).toBe('13');
    expect(apply({ type: 'Bookmark', resourceVersion: '20' })).toBe('20');
    // A relist's first page holds an object last written long ago: the store alone would go back to 5.
    expect(apply({ type: 'ReplacePage', items: [obj('b', '5')], first: true }, () => store.update(obj('b', '5')))).toBe('20');
    expect(apply({ type: 'ReplacePage', items: [obj('c', '31')], first: false }, () => store.update(obj('c', '31')))).toBe('20');
    expect(apply({ type: 'ReplaceEnd', resourceVersion: '32' })).toBe('32');
    expect(apply({ type: 'Resync' })).toBe('32');
  });
});
