import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Subscription } from 'rxjs';
import type { V1Pod } from '@kubernetes/client-node';
import { informer, type Informer } from '../../src/informer/informer.js';
import { InformerFactory } from '../../src/informer/InformerFactory.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import { prometheusMetrics } from '../../src/metrics/index.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';
import { parseExposition, valueOf } from '../metrics/exposition.js';

// What an informer's end for good (S-35) leaves behind: its last errors, its sync state, and its registrations.

const reflector = { backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } };

let server: ApiServer;
const lifetimes = new Lifetimes();

function pods(opts: Parameters<typeof informer<V1Pod>>[1] = {}): Informer<V1Pod> {
  return lifetimes.track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods'), { reflector, ...opts }));
}

/** The running watch of v1/pods is closed and the re-watch answered 400: nothing a retry heals (S-35). */
async function failWatch(inf: Informer<V1Pod>): Promise<void> {
  await waitFor(() => server.stats.watchesOpen === 1, 'a watch');
  server.faults.inject({ type: 'status', status: 400, message: 'spec: bad request' }, { verb: 'watch', resource: 'v1/pods' });
  server.faults.closeWatches();
  await waitFor(() => inf.status().state === 'failed', 'the informer failed');
}

beforeEach(async () => {
  server = await startApiServer({ port: 0, bookmarkIntervalMs: 200 });
});

afterEach(async () => {
  setErrorReporter(undefined);
  await lifetimes.end();
  await server.close();
});

describe('an informer that failed', () => {
  it('still hands the HandlerError of a call in progress at the failure to errors$ and status$, not to the process reporter (S-16)', async () => {
    const reported: Error[] = [];
    setErrorReporter((err) => reported.push(err));
    await server.create('v1/pods', pod('a'));
    const inf = pods();
    const heard: Error[] = [];
    let lastStatusErrors = 0;
    let statusEnded = false;
    inf.errors$.subscribe((e) => heard.push(e));
    inf.status$.subscribe({ next: (s) => (lastStatusErrors = s.errors), complete: () => (statusEnded = true) });
    const hold = deferred();
    const entered = deferred();
    const reg = inf.addHandler({
      add: async () => {
        entered.resolve();
        await hold.promise;
        throw new Error('handler failed during the failure');
      },
    });
    await entered.promise;
    await failWatch(inf);
    const endedBeforeTheCall = statusEnded;
    const before = heard.length;
    hold.resolve();
    await reg.done;
    await waitFor(() => statusEnded, 'status$ ends once every done settled');
    expect(endedBeforeTheCall).toBe(false); // held open for the call in progress
    expect(heard.slice(before).map((e) => e.name)).toEqual(['HandlerError']);
    expect(lastStatusErrors).toBe(inf.status().errors);
    expect(reported.map((e) => e.name)).not.toContain('HandlerError');
  });

  it('is not synced once failed, though it had synced: whenSynced, the factory, and the exported gauge say so (S-2, SF-5)', async () => {
    await server.create('v1/pods', pod('a'));
    const factory = new InformerFactory(server.kubeConfig());
    const inf = lifetimes.track(factory.informerFor('v1/pods', { reflector, onError: () => {} }));
    const metrics = prometheusMetrics();
    metrics.addInformer(inf);
    const synced = async (): Promise<number | undefined> => valueOf(parseExposition(await metrics.metrics()), 'rxkube_informer_synced', { resource: inf.name });
    const seen: boolean[] = [];
    inf.status$.subscribe((s) => seen.push(s.synced));
    inf.subscribe({ error: () => {} });
    await factory.whenSynced({ timeout: 10_000 });
    expect(await synced()).toBe(1);
    await failWatch(inf);
    expect(inf.status()).toMatchObject({ state: 'failed', synced: false });
    expect(seen.at(-1)).toBe(false);
    expect(await synced()).toBe(0);
    await expect(inf.whenSynced({ timeout: 1000 })).rejects.toMatchObject({ name: 'CacheSyncError', reason: 'failed' });
    await expect(factory.whenSynced({ timeout: 1000 })).rejects.toMatchObject({ name: 'CacheSyncError', reason: 'failed', unsynced: ['v1/pods'] });
  });
});

describe('a registration in a parent Subscription', () => {
  it('leaves the parent when it ends by itself, as a child Subscription does (LT-82)', async () => {
    await server.create('v1/pods', pod('a'));
    const inf = pods({ onError: () => {} }); // the overflow's BufferOverflowError
    const keep = inf.subscribe();
    const parent = new Subscription();
    for (let i = 0; i < 100; i++) {
      const reg = inf.addHandler({});
      parent.add(reg);
      reg.unsubscribe();
      await reg.done;
    }
    const stuck = deferred();
    const overflowing = inf.addHandler({ add: () => stuck.promise }, { buffer: { limit: 1, overflow: 'error' } });
    parent.add(overflowing);
    await server.create('v1/pods', pod('b'));
    await server.create('v1/pods', pod('c'));
    await waitFor(() => overflowing.closed, 'the overflow ended the registration');
    stuck.resolve();
    await overflowing.done;
    const held = (parent as unknown as { _finalizers: unknown[] | null })._finalizers ?? [];
    expect(held).toHaveLength(0);
    const last = inf.addHandler({});
    parent.add(last);
    parent.unsubscribe(); // and a parent still ends the registrations it holds
    expect(last.closed).toBe(true);
    keep.unsubscribe();
  });
});
