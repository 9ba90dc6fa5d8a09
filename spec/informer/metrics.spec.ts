import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { firstValueFrom } from 'rxjs';
import { informer, type Informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

const fastBackoff = { backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } };

let server: ApiServer;
const lifetimes = new Lifetimes();

function podInformer(): Informer<V1Pod> {
  return lifetimes.track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods'), { reflector: fastBackoff, onError: () => {} }));
}

/** What the handlers' buffers hold now: rxkube_informer_pending_notifications. */
const pending = (inf: Informer<V1Pod>): number => inf.status().handlers.reduce((n, h) => n + h.depth, 0);

beforeEach(async () => {
  server = await startApiServer({ port: 0, bookmarkIntervalMs: 200 });
});

afterEach(async () => {
  await lifetimes.end();
  await server.close();
});

describe('informer: the counters of status() (one status shape, LT-85)', () => {
  it('reads the cache size, sync state, resume point and counters now, and keeps the counts across lifetimes', async () => {
    for (let i = 0; i < 3; i++) await server.create('v1/pods', pod(`p${i}`));
    const inf = podInformer();
    expect(inf.name).toBe('v1/pods');
    expect(inf.status()).toMatchObject({ synced: false, objects: 0, lastSyncResourceVersion: '', errors: 0, counters: { lists: 0, events: 0 } });

    const sub = inf.subscribe();
    await inf.whenSynced({ timeout: 10_000 });
    const listed = inf.status();
    expect(listed).toMatchObject({ synced: true, objects: 3, counters: { lists: 1, relists: 0 } });
    expect(Number(listed.lastSyncResourceVersion)).toBeGreaterThan(0);

    let last = '';
    for (let i = 3; i < 5; i++) last = (await server.create<V1Pod>('v1/pods', pod(`p${i}`))).metadata?.resourceVersion ?? '';
    // Events are counted as they arrive, not at the reflector's next change of state.
    const moved = await waitFor(() => {
      const m = inf.status();
      return m.objects === 5 && m.counters.events >= 2 && m;
    }, 'two watch events counted');
    expect(BigInt(moved.lastSyncResourceVersion)).toBeGreaterThanOrEqual(BigInt(last));

    // A 410 on the watch: a relist, counted under its reason and its retry kind.
    server.faults.inject({ type: 'errorEvent' }, { verb: 'watch', resource: 'v1/pods' });
    await server.create('v1/pods', pod('p5'));
    const relisted = await waitFor(() => {
      const m = inf.status();
      return m.counters.relists === 1 && m.synced && m.objects === 6 && m;
    }, 'a relist after 410');
    expect(relisted.counters.relistsByReason).toEqual({ expired: 1, 'very-short-watch': 0, 'watch-failed': 0, 'list-failed': 0 });
    expect(relisted.counters.retriesByKind.expired).toBe(1);
    expect(relisted.counters.lists).toBe(2);
    expect(relisted.errors).toBeGreaterThanOrEqual(1);

    // The last subscriber leaves: the cache empties, the counters stay.
    sub.unsubscribe();
    const idle = inf.status();
    expect(idle).toMatchObject({ synced: false, objects: 0, lastSyncResourceVersion: '' });
    expect(idle.counters).toEqual(inf.status().counters);
    expect(idle.counters.lists).toBe(2);
    expect(idle.counters.events).toBeGreaterThanOrEqual(relisted.counters.events);

    // A new lifetime counts on from there.
    inf.subscribe();
    await inf.whenSynced({ timeout: 10_000 });
    expect(inf.status().counters.lists).toBe(3);
    expect(inf.status().counters.relistsByReason.expired).toBe(1);
    expect(inf.status().objects).toBe(6);
  });

  it('counts notifications waiting in handlers, and the errors the status shows', async () => {
    const inf = podInformer();
    const gate = deferred();
    const reg = inf.addHandler({ add: () => gate.promise });
    await inf.whenSynced({ timeout: 10_000 });
    for (let i = 0; i < 4; i++) await server.create('v1/pods', pod(`q${i}`));
    // The first add is in the handler; the other three wait in its buffer.
    await waitFor(() => pending(inf) === 3, 'three notifications buffered');
    gate.resolve();
    await waitFor(() => pending(inf) === 0, 'the buffer drained');
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'watch', resource: 'v1/pods' });
    server.faults.closeWatches();
    await waitFor(() => inf.status().counters.retriesByKind.server >= 1, 'a retried server error');
    const status = await firstValueFrom(inf.status$);
    expect(inf.status().errors).toBe(status.errors);
    reg.unsubscribe();
    await reg.done;
  });
});
