import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import type { V1Pod } from '@kubernetes/client-node';
import { informer, type Informer } from '../../src/informer/informer.js';
import type { Registration } from '../../src/informer/registration.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

let server: ApiServer;
let inf: Informer<V1Pod> | undefined;
const lifetimes = new Lifetimes();

beforeEach(async () => {
  server = await startApiServer({ port: 0 });
  await server.create('v1/pods', pod('a'));
  await server.create('v1/pods', pod('b'));
});

afterEach(async () => {
  await lifetimes.end();
  inf = undefined;
  await server.close();
});

/** A handler counting sync updates; without `resyncPeriod` it takes the informer's default. */
function counting(target: Informer<V1Pod>, resyncPeriod?: number): { reg: Registration; syncs: () => number } {
  let syncs = 0;
  const reg = target.addHandler(
    { update: (o, n) => void (o.metadata?.resourceVersion === n.metadata?.resourceVersion && syncs++) },
    resyncPeriod === undefined ? {} : { resyncPeriod },
  );
  return { reg, syncs: () => syncs };
}

/** Lets every handler drain what was enqueued in the current turn. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('resync routing', () => {
  it('delivers resync updates only to the handlers whose own period is due', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    inf = lifetimes.track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods'), { scheduler }));
    const every1 = counting(inf, 1000);
    const every2 = counting(inf, 2000);
    const every3 = counting(inf, 3000);
    const never = counting(inf, 0);
    let status = '';
    inf.status$.subscribe((s) => (status = s.reflector?.state ?? ''));
    inf.subscribe();
    await inf.whenSynced();
    await waitFor(() => status === 'watching', 'the watch');

    const at = async (frame: number): Promise<number[]> => {
      scheduler.maxFrames = frame;
      scheduler.flush();
      await settle();
      return [every1.syncs(), every2.syncs(), every3.syncs(), never.syncs()];
    };
    expect(await at(999)).toEqual([0, 0, 0, 0]);
    expect(await at(1000)).toEqual([2, 0, 0, 0]);
    expect(await at(2000)).toEqual([4, 2, 0, 0]);
    expect(await at(3000)).toEqual([6, 2, 2, 0]);
    expect(await at(4000)).toEqual([8, 4, 2, 0]);
  });

  describe('a handler added to a running informer (S-11, X-4)', () => {
    /** A started, synced and watching informer on a virtual clock, and a way to move that clock. */
    async function running(resyncPeriod: number | undefined, first: 'handler' | 'subscriber', firstPeriod = 0) {
      const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
      const target = lifetimes.track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods'), { scheduler, ...(resyncPeriod !== undefined && { resyncPeriod }) }));
      inf = target;
      const early = first === 'handler' ? counting(target, firstPeriod) : undefined;
      if (first === 'subscriber') target.subscribe();
      let status = '';
      target.status$.subscribe((s) => (status = s.reflector?.state ?? ''));
      await target.whenSynced();
      await waitFor(() => status === 'watching', 'the watch');
      const advanceTo = async (frame: number): Promise<void> => {
        scheduler.maxFrames = frame;
        scheduler.flush();
        await settle();
      };
      return { target, early, now: () => scheduler.now(), advanceTo };
    }

    it('resyncs at its own period when that is shorter than the period the informer started with', async () => {
      const { target, early, now, advanceTo } = await running(undefined, 'handler', 60_000);
      const t0 = now();
      const late = counting(target, 1000);
      await advanceTo(t0 + 999);
      expect(late.syncs()).toBe(0);
      await advanceTo(t0 + 1000);
      expect(late.syncs()).toBe(2);
      await advanceTo(t0 + 3000);
      expect(late.syncs()).toBe(6);
      // The first handler keeps its own, longer period.
      expect(early?.syncs()).toBe(0);
    });

    it('resyncs when the informer started with no resync at all', async () => {
      const { target, early, now, advanceTo } = await running(0, 'handler', 0);
      const t0 = now();
      const late = counting(target, 2000);
      await advanceTo(t0 + 1999);
      expect(late.syncs()).toBe(0);
      await advanceTo(t0 + 2000);
      expect(late.syncs()).toBe(2);
      await advanceTo(t0 + 4000);
      expect(late.syncs()).toBe(4);
      expect(early?.syncs()).toBe(0);
    });

    it('resyncs at its own period after start(), below the informer\'s default period', async () => {
      const { target, now, advanceTo } = await running(30_000, 'subscriber');
      const t0 = now();
      const fast = counting(target, 1000);
      const byDefault = counting(target);
      await advanceTo(t0 + 1000);
      expect(fast.syncs()).toBe(2);
      await advanceTo(t0 + 2000);
      expect(fast.syncs()).toBe(4);
      // A finer check period does not make a handler on the informer's default resync any more often.
      await advanceTo(t0 + 29_999);
      expect(byDefault.syncs()).toBe(0);
      await advanceTo(t0 + 30_000);
      expect([fast.syncs(), byDefault.syncs()]).toEqual([60, 2]);
    });
  });

  it('a relist that changes nothing reaches only handlers that asked for resync, and not events$', async () => {
    inf = lifetimes.track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods'), { reflector: { backoff: { initialMs: 5, maxMs: 20, jitter: 0 } } }));
    const wantsResync = counting(inf, 60_000);
    const quiet = counting(inf, 0);
    let updatesOnStream = 0;
    inf.subscribe((e) => void (e.type === 'update' && updatesOnStream++));
    let lists = 0;
    inf.status$.subscribe((s) => (lists = s.reflector?.counters.lists ?? lists));
    inf.subscribe();
    await inf.whenSynced();
    // An ERROR 410 mid-watch forces a relist that finds both pods unchanged.
    server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch' });
    await server.create('v1/pods', pod('c'));
    await waitFor(() => lists >= 2 && inf?.store.getByKey('default/c'), 'the relist');
    await waitFor(() => wantsResync.syncs() >= 2, 'sync updates for the resync handler');
    await settle();
    expect(quiet.syncs()).toBe(0);
    expect(updatesOnStream).toBe(0);
  });
});
