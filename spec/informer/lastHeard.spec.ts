import { afterEach, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { informer, type Informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod, waitFor } from '../helpers/waitFor.js';

let server: ApiServer | undefined;
let inf: Informer<V1Pod> | undefined;

afterEach(async () => {
  await inf?.stop();
  inf = undefined;
  await server?.close();
  server = undefined;
});

describe('informer: status() and lastHeardAt', () => {
  it('is undefined while idle, set by the list, moved by bookmarks, and stands still while a silent watch is still "watching"', async () => {
    const s = await startApiServer({ port: 0, bookmarkIntervalMs: 50 });
    server = s;
    await s.create('v1/pods', pod('a'));
    const errors: Error[] = [];
    inf = informer<V1Pod>(kubeSource(s.kubeConfig(), 'v1/pods'), { onError: (e) => errors.push(e) });
    const i = inf;
    expect(i.status()).toMatchObject({ state: 'idle', lastHeardAt: undefined });
    const before = Date.now();
    i.start();
    await i.whenSynced({ timeout: 10_000 });
    const listed = i.status().lastHeardAt;
    expect(listed).toBeGreaterThanOrEqual(before);
    // Writes elsewhere move the server's resourceVersion, so the quiet pods watch is sent bookmarks (a server
    // skips a bookmark that would not move its client forward), and each one counts.
    const elsewhere = s.churn({ resource: 'v1/configmaps', creates: 1, updates: 1_000_000, perSecond: 100, seed: 1 });
    await waitFor(() => (i.status().lastHeardAt ?? 0) > (listed ?? 0), 'a bookmark to move lastHeardAt');

    // Every watch from now on opens and says nothing; the open one is ended so the next one is silent.
    s.faults.inject({ type: 'silentWatch' }, { verb: 'watch', resource: 'v1/pods', times: 1_000 });
    s.faults.closeWatches();
    await waitFor(() => s.stats.watchesStarted >= 2 && i.status().reflector?.state === 'watching', 'the silent watch');
    const frozen = i.status().lastHeardAt ?? 0;
    const waitedFrom = Date.now();
    await waitFor(() => Date.now() - waitedFrom > 300, '300 ms of silence (six bookmark intervals)');
    expect(i.status().reflector?.state).toBe('watching');
    expect(i.status().lastHeardAt).toBe(frozen);

    s.faults.clear();
    s.faults.closeWatches();
    await waitFor(() => (i.status().lastHeardAt ?? 0) > frozen, 'lastHeardAt to move once watches work again');
    elsewhere.stop();
    // Ending the silent watch without an event is a very short watch to the reflector, reported as such.
    expect(errors.map((e) => e.name)).toContain('VeryShortWatchError');
  });

  it('is cleared when the last subscriber leaves', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    inf = informer<V1Pod>(kubeSource(s.kubeConfig(), 'v1/pods'));
    const sub = inf.subscribe();
    await inf.whenSynced({ timeout: 10_000 });
    expect(inf.status().lastHeardAt).toBeTypeOf('number');
    sub.unsubscribe();
    expect(inf.status()).toMatchObject({ state: 'idle', lastHeardAt: undefined });
  });
});
