// reflect() against the API-server simulator over 127.0.0.1, through the real HTTP source.
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { reflect, type ReflectOptions, type ReflectorStatus } from '../../src/reflector/index.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import { DecodeError, isExpired, isForbidden, isServerError, isTooManyRequests, KubeApiError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/index.js';
import type { ListerWatcher } from '../../src/sources/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

// Names for the unrelated writes that move the resourceVersion so the server has a bookmark to send.
let moves = 0;

interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  spec?: { containers: { name: string; image: string }[] };
}

const PODS = 'v1/pods';
const NS = 'default';
const podNamed = (name: string, image = 'nginx:1'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS },
  spec: { containers: [{ name: 'c', image }] },
});

/** A scheduler that remembers every timer it hands out, to prove teardown cleared them all. */
function trackingScheduler(): SchedulerLike & { pending(): number } {
  const timers = new Set<Subscription>();
  return {
    now: () => asyncScheduler.now(),
    schedule(work, delay, state) {
      const sub = asyncScheduler.schedule(work as never, delay, state);
      timers.add(sub);
      return sub;
    },
    pending: () => [...timers].filter((t) => !t.closed).length,
  } as SchedulerLike & { pending(): number };
}

function tcpSockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
}

const fast = { initialMs: 20, maxMs: 200, factor: 2, jitter: 0.5, resetAfterMs: 120_000 };

let server: ApiServer;
let lw: ListerWatcher<Pod>;
/** Every subscription of the running test, ended after it even when an assertion failed first. */
const running: Subscription[] = [];

function describeStatus(s: ReflectorStatus): string {
  const err = 'error' in s ? ` ${(s.error as Error)?.name}: ${(s.error as Error)?.message}` : '';
  const rv = s.state === 'watching' ? ` rv=${s.resourceVersion}` : s.state === 'backoff' ? ` ${s.delayMs}ms` : '';
  return `${s.state}${rv}${err}`;
}

/** Runs reflect() and folds its events into a Map the way an informer's store would. */
function mirror(opts: ReflectOptions = {}, source: ListerWatcher<Pod> = lw) {
  const state = new Map<string, Pod>();
  const events: ReflectorEvent<Pod>[] = [];
  const statuses: ReflectorStatus[] = [];
  const scheduler = trackingScheduler();
  let failure: unknown;
  const key = (p: Pod) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`;
  const sub = reflect(source, { backoff: fast, scheduler, ...opts, status: (s) => statuses.push(s) }).subscribe({
    next: (e) => {
      events.push(e);
      if (e.type === 'Replace') {
        state.clear();
        for (const p of e.items) state.set(key(p), p);
      } else if (e.type === 'Added' || e.type === 'Modified') state.set(key(e.obj), e.obj);
      else if (e.type === 'Deleted') state.delete(key(e.obj));
    },
    error: (e: unknown) => (failure = e),
  });
  running.push(sub);
  onTestFailed(() => {
    console.log(`statuses:\n  ${statuses.map(describeStatus).join('\n  ')}`);
  });
  const m = {
    state,
    events,
    statuses,
    scheduler,
    sub,
    failure: () => failure,
    of: <S extends ReflectorStatus['state']>(s: S) =>
      statuses.filter((x): x is Extract<ReflectorStatus, { state: S }> => x.state === s),
    counters: () => statuses.at(-1)?.counters,
    /** The mirror holds exactly what the server holds (same names, same resourceVersions). */
    inSync: () => {
      const truth = server.list(PODS, NS) as Pod[];
      if (truth.length !== state.size) return false;
      return truth.every((p) => state.get(key(p))?.metadata.resourceVersion === p.metadata.resourceVersion);
    },
    watching: () => statuses.at(-1)?.state === 'watching',
  };
  return m;
}

beforeAll(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 100 });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  server.faults.clear();
  for (const p of server.list(PODS, NS) as Pod[]) await server.delete(PODS, NS, p.metadata.name);
  lw = kubeSource(server.kubeConfig(), PODS, { namespace: NS }) as unknown as ListerWatcher<Pod>;
});
afterEach(() => {
  for (const sub of running.splice(0)) sub.unsubscribe();
  server.faults.clear();
});

describe('reflect() over HTTP against the simulator', () => {
  it('lists in pages, then follows creates, updates and deletes', async () => {
    for (let i = 0; i < 7; i++) await server.create(PODS, podNamed(`p${i}`));
    const m = mirror({ pageSize: 3 });
    await waitFor(() => m.events.length > 0, 'the first list');
    expect(m.events[0]).toMatchObject({ type: 'Replace' });
    expect(m.state.size).toBe(7);
    await waitFor(m.watching, 'watching');
    await server.create(PODS, podNamed('new'));
    await server.patch(PODS, NS, 'p1', { metadata: { labels: { changed: 'yes' } } });
    await server.delete(PODS, NS, 'p2');
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.state.get('default/p1')?.metadata.labels).toEqual({ changed: 'yes' });
    expect(m.counters()).toMatchObject({ lists: 1, relists: 0, errors: 0 });
    m.sub.unsubscribe();
  });

  it('resumes from the last bookmark without relisting when the server closes the watch', async () => {
    await server.create(PODS, podNamed('a'));
    const m = mirror();
    await waitFor(m.watching, 'watching');
    // A change to another resource moves the global resourceVersion; only bookmarks carry it to the pod watch.
    const cm = (await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `bump-${Date.now()}`, namespace: NS } })) as Pod;
    const bumped = BigInt(cm.metadata.resourceVersion!);
    await waitFor(() =>
      m.events.some((e) => e.type === 'Bookmark' && BigInt(e.resourceVersion) >= bumped), 'a bookmark past the configmap');
    const watchesBefore = m.of('watching').length;
    server.faults.closeWatches();
    await waitFor(() => m.of('watching').length > watchesBefore, 'a new watch');
    const resumedAt = BigInt(m.of('watching')[watchesBefore]!.resourceVersion);
    expect(resumedAt >= bumped).toBe(true);
    await server.create(PODS, podNamed('b'));
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.counters()).toMatchObject({ lists: 1, relists: 0 });
    m.sub.unsubscribe();
  });

  it('relists on 410 at watch start', async () => {
    await server.create(PODS, podNamed('a'));
    const m = mirror();
    // A watch that has seen an event is not "very short" when the server closes it.
    await waitFor(m.watching, 'watching');
    // A bookmark is only sent once the resourceVersion moved past what the watch has seen (as kube-apiserver does).
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `moved-${++moves}`, namespace: NS } });
    await waitFor(() => m.events.some((e) => e.type === 'Bookmark'), 'a bookmark');
    server.faults.inject({ type: 'status', status: 410, reason: 'Expired' }, { verb: 'watch', resource: PODS });
    server.faults.closeWatches();
    await server.create(PODS, podNamed('b'));
    await waitFor(() => m.counters()!.relists === 1, 'a relist');
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.of('relisting')[0]).toMatchObject({ reason: 'expired' });
    expect(isExpired(m.of('error')[0]?.error)).toBe(true);
    m.sub.unsubscribe();
  });

  it('relists on a 410 ERROR event mid-stream', async () => {
    await server.create(PODS, podNamed('a'));
    const m = mirror();
    await waitFor(m.watching, 'watching');
    server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch', resource: PODS });
    await server.create(PODS, podNamed('b'));
    await waitFor(() => m.counters()!.relists >= 1, 'a relist');
    await server.create(PODS, podNamed('c'));
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.of('relisting')[0]).toMatchObject({ reason: 'expired' });
    m.sub.unsubscribe();
  });

  it('relists after compaction while the server was down (watch from a compacted RV)', async () => {
    await server.create(PODS, podNamed('a'));
    const m = mirror();
    await waitFor(m.watching, 'watching');
    server.stop();
    await server.create(PODS, podNamed('while-down'));
    await server.delete(PODS, NS, 'a');
    server.compact();
    await server.restart();
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.of('error').some((s) => isExpired(s.error))).toBe(true);
    expect(m.counters()!.relists).toBeGreaterThanOrEqual(1);
    m.sub.unsubscribe();
  });

  it('lists again in full when a continue token expires between pages', async () => {
    for (let i = 0; i < 5; i++) await server.create(PODS, podNamed(`p${i}`));
    let compacted = false;
    const compacting: ListerWatcher<Pod> = {
      list: (opts, signal) => {
        if (opts.continue !== undefined && !compacted) {
          compacted = true;
          server.compact();
        }
        return lw.list(opts, signal);
      },
      watch: (opts, signal) => lw.watch(opts, signal),
    };
    const m = mirror({ pageSize: 2 }, compacting);
    await waitFor(() => m.events.length > 0, 'the first list');
    expect(compacted).toBe(true);
    expect(m.events[0]).toMatchObject({ type: 'Replace' });
    expect(m.state.size).toBe(5);
    await waitFor(m.inSync, 'the mirror to converge');
    m.sub.unsubscribe();
  });

  it('honours Retry-After on a throttled watch and re-watches without relisting', async () => {
    const m = mirror();
    await waitFor(m.watching, 'watching');
    // A bookmark is only sent once the resourceVersion moved past what the watch has seen (as kube-apiserver does).
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `moved-${++moves}`, namespace: NS } });
    await waitFor(() => m.events.some((e) => e.type === 'Bookmark'), 'a bookmark');
    server.faults.inject({ type: 'status', status: 429, retryAfterSeconds: 1 }, { verb: 'watch', resource: PODS });
    server.faults.closeWatches();
    // The early close itself is retried at once (a jittered wait of a few ms); the 429 then waits its Retry-After,
    // capped at the backoff's maxMs (200 ms here, HI-50).
    await waitFor(() => m.of('backoff').some((b) => b.kind === 'throttled'), 'the throttle');
    const throttled = m.of('backoff').find((b) => b.kind === 'throttled');
    expect(throttled).toMatchObject({ delayMs: fast.maxMs });
    expect(isTooManyRequests(throttled?.error)).toBe(true);
    await server.create(PODS, podNamed('after-throttle'));
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.counters()).toMatchObject({ lists: 1 });
    m.sub.unsubscribe();
  });

  it('backs off on 500s from the list and converges', async () => {
    await server.create(PODS, podNamed('a'));
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'list', resource: PODS, times: 3 });
    const m = mirror();
    await waitFor(() => m.events.length > 0, 'the first list');
    expect(m.of('backoff').map((s) => isServerError(s.error) && s.error.status)).toEqual([500, 500, 500]);
    const delays = m.of('backoff').map((s) => s.delayMs);
    expect(delays[0]).toBeGreaterThanOrEqual(20);
    expect(delays[1]).toBeGreaterThanOrEqual(40);
    expect(delays[2]).toBeGreaterThanOrEqual(80);
    await waitFor(m.inSync, 'the mirror to converge');
    m.sub.unsubscribe();
  });

  it('backs off while the server is down and ends with the same state as the server', async () => {
    for (let i = 0; i < 3; i++) await server.create(PODS, podNamed(`p${i}`));
    const m = mirror();
    await waitFor(m.watching, 'watching');
    server.stop();
    await waitFor(() => m.of('backoff').length >= 2, 'a few failed attempts');
    await server.create(PODS, podNamed('offline'));
    await server.patch(PODS, NS, 'p0', { metadata: { labels: { v: '2' } } });
    await server.delete(PODS, NS, 'p1');
    await server.restart();
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.failure()).toBeUndefined();
    m.sub.unsubscribe();
  });

  it('converges after connections are reset mid-stream during churn', async () => {
    const m = mirror();
    await waitFor(m.watching, 'watching');
    const churn = server.churn({ resource: PODS, namespace: NS, creates: 40, updates: 80, deletes: 20, perSecond: 400 });
    await waitFor(() => m.events.length > 10, 'some churn');
    server.faults.resetConnections();
    await churn.done;
    await waitFor(m.inSync, 'the mirror to converge');
    m.sub.unsubscribe();
  });

  it('reports a malformed line as a DecodeError and loses no object', async () => {
    const m = mirror();
    await waitFor(m.watching, 'watching');
    server.faults.inject({ type: 'malformedLine' }, { verb: 'watch', resource: PODS });
    await server.create(PODS, podNamed('after-garbage'));
    await waitFor(() => m.of('error').some((s) => s.error instanceof DecodeError), 'the decode error');
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.state.has('default/after-garbage')).toBe(true);
    expect(m.counters()!.decodeErrors).toBe(1);
    expect(m.counters()!.relists).toBe(0);
    m.sub.unsubscribe();
  });

  it('resumes without a relist when the connection dies in the middle of a line', async () => {
    await server.create(PODS, podNamed('a'));
    const m = mirror();
    await waitFor(m.watching, 'watching');
    // A bookmark is only sent once the resourceVersion moved past what the watch has seen (as kube-apiserver does).
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `moved-${++moves}`, namespace: NS } });
    await waitFor(() => m.events.some((e) => e.type === 'Bookmark'), 'a bookmark');
    server.faults.inject({ type: 'resetMidLine' }, { verb: 'watch', resource: PODS });
    await server.create(PODS, podNamed('cut-in-half'));
    await waitFor(() => m.inSync() && m.state.has('default/cut-in-half'), 'the mirror to converge');
    expect(m.of('error').length).toBeGreaterThan(0);
    expect(m.counters()).toMatchObject({ lists: 1, relists: 0 });
    m.sub.unsubscribe();
  });

  it('makes a 403 final when onTerminal says so', async () => {
    server.faults.inject({ type: 'status', status: 403 }, { verb: 'list', resource: PODS });
    const m = mirror({ onTerminal: (err) => isForbidden(err) });
    await waitFor(() => m.failure() !== undefined, 'the terminal error');
    expect(isForbidden(m.failure())).toBe(true);
    expect((m.failure() as KubeApiError).status).toBe(403);
    expect(m.scheduler.pending()).toBe(0);
    await waitFor(() => server.stats.connections === 0, 'every connection to close');
  });

  it('falls back to a paged list when the server rejects the streaming list', async () => {
    for (let i = 0; i < 3; i++) await server.create(PODS, podNamed(`f${i}`));
    server.faults.inject({ type: 'status', status: 422, reason: 'Invalid' }, { verb: 'watch', resource: PODS });
    const m = mirror({ initialList: 'stream' });
    await waitFor(() => m.events.length > 0, 'the first list');
    expect(m.state.size).toBe(3);
    expect(m.statuses.filter((s) => s.state === 'listing')).toHaveLength(1);
    expect(m.of('error')[0]?.error).toMatchObject({ status: 422 });
    await server.create(PODS, podNamed('f-new'));
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.counters()).toMatchObject({ lists: 1, watches: 2 });
    m.sub.unsubscribe();
  });

  it("streams the initial list with initialList: 'stream'", async () => {
    for (let i = 0; i < 4; i++) await server.create(PODS, podNamed(`s${i}`));
    const m = mirror({ initialList: 'stream' });
    await waitFor(() => m.events.length > 0, 'the first list');
    expect(m.events[0]).toMatchObject({ type: 'Replace' });
    expect(m.state.size).toBe(4);
    await server.create(PODS, podNamed('s-new'));
    await waitFor(m.inSync, 'the mirror to converge');
    expect(m.counters()).toMatchObject({ lists: 1, watches: 1 });
    m.sub.unsubscribe();
  });
});

describe('reflect() teardown over HTTP', () => {
  /** Waits until nothing from earlier tests is still connected; returns the client's socket count then. */
  async function quiet(): Promise<number> {
    await waitFor(() => server.stats.connections === 0, 'earlier connections to close');
    return tcpSockets();
  }

  async function settles(m: ReturnType<typeof mirror>, baseline: number): Promise<void> {
    m.sub.unsubscribe();
    expect(m.scheduler.pending()).toBe(0);
    await waitFor(() => server.stats.connections === 0, 'the server to see every connection closed');
    await waitFor(() => server.stats.watchesOpen === 0, 'the server to see no watch');
    await waitFor(() => tcpSockets() <= baseline, 'every client socket to close');
  }

  it('leaves no socket or timer when stopped during the list', async () => {
    await server.create(PODS, podNamed('a'));
    const baseline = await quiet();
    server.faults.inject({ type: 'stall' }, { verb: 'list', resource: PODS });
    const m = mirror({ resyncPeriod: 50 });
    await waitFor(() => server.stats.connections > 0, 'the list request');
    expect(m.events).toEqual([]);
    expect(m.statuses.at(-1)?.state).toBe('listing');
    await settles(m, baseline);
  });

  it('leaves no socket or timer when stopped while the watch connects', async () => {
    const baseline = await quiet();
    server.faults.inject({ type: 'stall' }, { verb: 'watch', resource: PODS });
    const m = mirror({ resyncPeriod: 50 });
    await waitFor(() => m.watching() && server.stats.connections > 0, 'the watch request');
    expect(server.stats.watchesOpen).toBe(0);
    await settles(m, baseline);
  });

  it('leaves no socket or timer when stopped mid-stream', async () => {
    const baseline = await quiet();
    const m = mirror({ resyncPeriod: 50 });
    await waitFor(m.watching, 'watching');
    await server.create(PODS, podNamed('x'));
    await waitFor(() => m.events.some((e) => e.type === 'Added') && m.events.some((e) => e.type === 'Resync'), 'an event and a resync');
    expect(server.stats.watchesOpen).toBe(1);
    await settles(m, baseline);
  });

  it('leaves no socket or timer when stopped during a backoff', async () => {
    const baseline = await quiet();
    server.faults.inject({ type: 'status', status: 503 }, { verb: 'list', resource: PODS, times: 100 });
    const m = mirror({ backoff: { ...fast, initialMs: 60_000, maxMs: 60_000 } });
    await waitFor(() => m.of('backoff').length > 0, 'the backoff');
    expect(m.scheduler.pending()).toBe(1);
    await settles(m, baseline);
  });
});
