// reflect() under persistent faults and stalls, over HTTP against the API-server simulator on 127.0.0.1.
import type { Subscription } from 'rxjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reflect, WatchStalledError, type ReflectOptions, type ReflectorStatus } from '../../src/reflector/index.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import { isExpired, isServerError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/index.js';
import type { ListerWatcher } from '../../src/sources/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { maxRetriesWithin } from './reflectScripted.js';

interface Pod {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

const PODS = 'v1/pods';
const NS = 'default';
/** A quick schedule for real-time tests: 20 ms × 2 up to 200 ms. */
const fast = { initialMs: 20, maxMs: 200, factor: 2, jitter: 0.5, resetAfterMs: 120_000 };
const healthBase = (nth: number): number => Math.min(20 * 2 ** (nth - 1), 200);
const fastKindBase = (nth: number): number => (nth === 1 ? 0 : healthBase(nth - 1));

let server: ApiServer;
let lw: ListerWatcher<Pod>;
const running: Subscription[] = [];
const timers: ReturnType<typeof setInterval>[] = [];

function start(opts: ReflectOptions = {}) {
  const events: ReflectorEvent<Pod>[] = [];
  const statuses: (ReflectorStatus & { at: number })[] = [];
  let failure: unknown;
  const sub = reflect(lw, { backoff: fast, ...opts, status: (s) => statuses.push({ ...s, at: Date.now() }) }).subscribe({
    next: (e) => events.push(e),
    error: (e: unknown) => (failure = e),
  });
  running.push(sub);
  const of = <S extends ReflectorStatus['state']>(s: S) =>
    statuses.filter((x): x is Extract<ReflectorStatus, { state: S }> & { at: number } => x.state === s);
  return { events, statuses, sub, of, failure: () => failure };
}

/** Moves the resourceVersion every `ms` with a configmap write, so the server has bookmarks to send. */
function keepWriting(ms: number): void {
  let n = 0;
  timers.push(
    setInterval(() => {
      void server
        .create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `tick-${Date.now()}-${++n}`, namespace: NS } })
        .catch(() => undefined);
    }, ms),
  );
}

beforeAll(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 100 });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  server.faults.clear();
  lw = kubeSource(server.kubeConfig(), PODS, { namespace: NS }) as unknown as ListerWatcher<Pod>;
  await server.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${Date.now()}`, namespace: NS }, spec: { containers: [{ name: 'c', image: 'x' }] } });
});
afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t);
  for (const sub of running.splice(0)) sub.unsubscribe();
  server.faults.clear();
  await waitFor(() => server.stats.connections === 0, 'every connection to close');
});

describe('reflect() over HTTP: stall detection', () => {
  it('cuts a watch that stops hearing its bookmarks, long before the idle timeout, and resumes', async () => {
    keepWriting(50);
    const m = start({ stallDetection: { minMs: 500 } });
    // Bookmarks every 100 ms: the rhythm is learnt once the watch has been heard for twice the deadline.
    await waitFor(() => m.events.filter((e) => e.type === 'Bookmark').length >= 25, 'bookmarks to set a rhythm');
    server.faults.inject({ type: 'stall' }, { verb: 'watch', resource: PODS });
    const cutAt = Date.now();
    server.faults.closeWatches();
    await waitFor(() => m.of('error').some((s) => s.error instanceof WatchStalledError), 'the stall to be declared');
    const stalled = m.of('error').find((s) => s.error instanceof WatchStalledError)!;
    const error = stalled.error as WatchStalledError;
    // Declared by the rhythm (a WatchStalledError, not the idle timer's ConnectionError), and not before its floor;
    // how soon after the deadline is pinned in virtual time (reflectStall.spec.ts), not measured here.
    expect(error.silenceMs).toBeGreaterThanOrEqual(500);
    const resumed = m.of('watching').length;
    await waitFor(() => m.of('watching').length > resumed && m.events.at(-1)?.type === 'Bookmark', 'a watch that hears again');
    expect(m.of('listing')).toHaveLength(1);
    console.log(`stall over HTTP: declared ${stalled.at - cutAt} ms after the watch was re-opened into a stall (silence ${Math.round(error.silenceMs)} ms, rhythm ${Math.round(error.expectedIntervalMs)} ms)`);
  });
});

describe('reflect() over HTTP: a server that keeps failing is not hammered', () => {
  const windowMs = 2000;

  async function requestsDuring(ms: number): Promise<{ requests: number; elapsed: number }> {
    const before = server.stats.requests;
    const began = Date.now();
    await waitFor(() => Date.now() - began >= ms, `${ms} ms of faults`, ms + 5000);
    return { requests: server.stats.requests - before, elapsed: Date.now() - began };
  }

  it('500 to every LIST: no more requests than the health schedule allows', async () => {
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'list', resource: PODS, times: 100_000 });
    const m = start();
    const { requests, elapsed } = await requestsDuring(windowMs);
    const bound = maxRetriesWithin(elapsed, healthBase) + 1;
    console.log(`500 to every list over HTTP: ${requests} requests in ${elapsed} ms (bound ${bound})`);
    expect(requests).toBeLessThanOrEqual(bound);
    expect(requests).toBeGreaterThanOrEqual(3);
    expect(m.of('error').every((s) => isServerError(s.error))).toBe(true);
    expect(m.failure()).toBeUndefined();
  });

  it('410 to every WATCH: a list and a watch per retry of the expired schedule', async () => {
    server.faults.inject({ type: 'status', status: 410, reason: 'Expired' }, { verb: 'watch', resource: PODS, times: 100_000 });
    const m = start();
    const { requests, elapsed } = await requestsDuring(windowMs);
    const bound = 2 * (maxRetriesWithin(elapsed, fastKindBase) + 1);
    console.log(`410 to every watch over HTTP: ${requests} requests in ${elapsed} ms (bound ${bound})`);
    expect(requests).toBeLessThanOrEqual(bound);
    expect(m.of('error').every((s) => isExpired(s.error))).toBe(true);
    expect(m.of('backoff').every((b) => b.kind === 'expired')).toBe(true);
  });

  it('closing every watch as soon as it opens: bounded by the two kinds it can be', async () => {
    const m = start();
    await waitFor(() => m.statuses.at(-1)?.state === 'watching', 'watching');
    timers.push(setInterval(() => server.faults.closeWatches(), 2));
    const { requests, elapsed } = await requestsDuring(windowMs);
    // A watch closed with no event is very short (a relist: 2 requests), one closed after a bookmark only
    // closed early (1 request); each kind has its own schedule.
    const retries = maxRetriesWithin(elapsed, fastKindBase) + 1;
    const bound = 2 * retries + retries;
    console.log(`every watch closed over HTTP: ${requests} requests in ${elapsed} ms (bound ${bound})`);
    expect(requests).toBeLessThanOrEqual(bound);
    expect(m.of('backoff').every((b) => b.kind === 'watch-closed' || b.kind === 'very-short-watch')).toBe(true);
  });
});
