import { afterEach, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { informer, type Informer } from '../../src/informer/informer.js';
import { isServerError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer, type Churn } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

let server: ApiServer | undefined;
let inf: Informer<V1Pod> | undefined;
const lifetimes = new Lifetimes();
let churn: Churn | undefined;

afterEach(async () => {
  churn?.stop();
  churn = undefined;
  await lifetimes.end();
  inf = undefined;
  await server?.close();
  server = undefined;
});

/**
 * A simulator whose resourceVersion keeps moving through writes to configmaps, so a quiet pods watch is sent a
 * bookmark every 50 ms (a server skips a bookmark that would not move its client forward).
 */
async function liveServer(): Promise<ApiServer> {
  const s = await startApiServer({ port: 0, bookmarkIntervalMs: 50 });
  churn = s.churn({ resource: 'v1/configmaps', creates: 1, updates: 10_000_000, perSecond: 100, seed: 1 });
  await s.create('v1/pods', pod('a'));
  return s;
}

const elapse = async (ms: number, what: string): Promise<void> => {
  const from = Date.now();
  await waitFor(() => Date.now() - from >= ms, what);
};

describe('informer: status() and currentAt over HTTP', () => {
  it('is moved by the list and by bookmarks, and stands still while a silent watch is still "watching"', async () => {
    const s = await liveServer();
    server = s;
    const errors: Error[] = [];
    inf = lifetimes.track(informer<V1Pod>(kubeSource(s.kubeConfig(), 'v1/pods'), { onError: (e) => errors.push(e) }));
    const i = inf;
    expect(i.status()).toMatchObject({ state: 'idle', currentAt: undefined });
    i.subscribe();
    await i.whenSynced({ timeout: 10_000 });
    const listed = i.status().currentAt;
    expect(listed).toBeDefined();
    await waitFor(() => (i.status().currentAt ?? 0) > (listed ?? 0), 'a bookmark to move it');

    // Every watch from now on opens and says nothing; the open one is ended so the next one is silent.
    s.faults.inject({ type: 'silentWatch' }, { verb: 'watch', resource: 'v1/pods', times: 1_000 });
    s.faults.closeWatches();
    await waitFor(() => s.stats.watchesStarted >= 2 && i.status().reflector?.state === 'watching', 'the silent watch');
    const frozen = i.status().currentAt;
    await elapse(300, 'six bookmark intervals of silence');
    expect(i.status().reflector?.state).toBe('watching');
    expect(i.status().currentAt).toBe(frozen);

    // A watch that ends within a second without an event is a very short watch, reported as such. The silent watch
    // above may have lasted longer on a slow machine; the next one is ended as soon as it opens.
    const started = s.stats.watchesStarted;
    s.faults.closeWatches();
    await waitFor(() => s.stats.watchesStarted > started && i.status().reflector?.state === 'watching', 'the next silent watch');
    s.faults.clear();
    s.faults.closeWatches();
    await waitFor(() => (i.status().currentAt ?? 0) > (frozen ?? 0), 'it to move once watches are heard again');
    expect(errors.map((e) => e.name)).toContain('VeryShortWatchError');
  });

  it('is moved by the relists that succeed between failing watches (HI-57)', async () => {
    const s = await liveServer();
    server = s;
    const errors: Error[] = [];
    inf = lifetimes.track(informer<V1Pod>(kubeSource(s.kubeConfig(), 'v1/pods'), { onError: (e) => errors.push(e), reflector: { backoff: { initialMs: 10, maxMs: 50 } } }));
    const i = inf;
    i.subscribe();
    await i.whenSynced({ timeout: 10_000 });
    s.faults.inject({ type: 'status', status: 500 }, { verb: 'watch', resource: 'v1/pods', times: 1_000_000 });
    s.faults.closeWatches();
    await waitFor(() => errors.some((e) => isServerError(e)), 'a failed watch');
    const before = i.status().currentAt ?? 0;
    const lists = i.status().reflector?.counters.lists ?? 0;
    await waitFor(() => (i.status().reflector?.counters.lists ?? 0) > lists + 2, 'relists between failed watches');
    await waitFor(() => (i.status().currentAt ?? 0) > before, 'a relist to move it');
    expect(i.status().synced).toBe(true);
  });

  it('is cleared when the last subscriber leaves', async () => {
    const s = await liveServer();
    server = s;
    inf = lifetimes.track(informer<V1Pod>(kubeSource(s.kubeConfig(), 'v1/pods')));
    const i = inf;
    const sub = i.subscribe();
    await waitFor(() => i.status().currentAt, 'a bookmark');
    sub.unsubscribe();
    expect(i.status()).toMatchObject({ state: 'idle', currentAt: undefined });
  });
});
