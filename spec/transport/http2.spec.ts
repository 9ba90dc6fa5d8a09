import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { informer } from '../../src/informer/informer.js';
import { ConnectionError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { KubeObject } from '../../src/store/types.js';
import { pools } from '../../src/transport/pool.js';
import { withTransport } from '../../src/transport/options.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';
import { startRelayed, type Relayed } from './relay.js';

const PODS = { version: 'v1', plural: 'pods' } as const;
const fast = { reflector: { backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } } };

let current: Relayed | undefined;
const running = new Lifetimes();

afterEach(async () => {
  await running.end();
  await current?.close();
  current = undefined;
});

async function setup(http2 = true): Promise<Relayed> {
  current = await startRelayed({ tls: true, http2, bookmarkIntervalMs: 60_000 });
  for (let i = 0; i < 3; i++) await current.server.create(PODS, { metadata: { name: `p${i}`, namespace: 'default' } });
  return current;
}

function watchAll(r: Relayed, count: number, transport: Parameters<typeof withTransport>[1], signal: AbortSignal): Promise<unknown>[] {
  return Array.from({ length: count }, async () => {
    for await (const _ of kubeSource<KubeObject>(withTransport(r.kubeConfig(), transport), PODS).watch({ resourceVersion: r.server.stats.resourceVersion }, signal)) {
      // Held open until the signal aborts.
    }
  }).map((p) => p.catch(() => undefined));
}

describe('HTTP/2 where the server offers it', () => {
  it('ten watches, a list and writes share one connection', async () => {
    const r = await setup();
    const stop = new AbortController();
    const watches = watchAll(r, 10, {}, stop.signal);
    await waitFor(() => r.server.stats.watchesOpen === 10, 'ten watches to open');
    expect((await kubeSource<KubeObject>(r.kubeConfig(), PODS).list({}, stop.signal)).items).toHaveLength(3);
    const cms = objectClient(r.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    await Promise.all(Array.from({ length: 16 }, (_, i) => cms.create({ metadata: { name: `cm-${i}` } })));
    expect(r.relay.accepted).toBe(1);
    stop.abort();
    await Promise.all(watches);
    await waitFor(() => r.relay.open === 0 && pools.size === 0, 'the connection to close');
  });

  it('with http2: false every watch holds an HTTP/1.1 connection of its own', async () => {
    const r = await setup();
    const stop = new AbortController();
    const watches = watchAll(r, 5, { http2: false }, stop.signal);
    await waitFor(() => r.server.stats.watchesOpen === 5, 'five watches to open');
    expect(r.relay.accepted).toBe(5);
    stop.abort();
    await Promise.all(watches);
    await waitFor(() => r.relay.open === 0 && pools.size === 0, 'the connections to close');
  });
});

describe("HTTP/2 liveness check (client-go's ReadIdleTimeout and PingTimeout)", () => {
  it('a connection that goes dark is closed after an unanswered PING, and the watch resumes from its resourceVersion', async () => {
    const r = await setup();
    const kc = withTransport(r.kubeConfig(), { readIdleTimeoutMs: 200, pingTimeoutMs: 300 });
    const inf = informer(kubeSource<KubeObject>(kc, PODS), fast);
    running.track(inf);
    const errors: unknown[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    const sub = inf.subscribe();
    await inf.whenSynced({ timeout: 10_000 });
    await waitFor(() => r.server.stats.watchesOpen === 1, 'the watch to open');
    const requests = r.server.stats.requests;
    const watches = r.server.stats.watchesStarted;

    r.relay.hold();
    const pingTimeout = await waitFor(() => errors.find((e) => e instanceof ConnectionError && e.code === 'PING_TIMEOUT'), 'the PING to time out');
    // The PING went out after at least the idle time without data, and the connection closed once it was unanswered
    // for the PING's time: well before rxkube's two-minute idle timer would have noticed. (The silence began at the
    // last byte read, which may be well before the hold, so the time since the hold bounds nothing.)
    const said = /no answer to a PING within 300 ms, after (\d+) ms without data/.exec(String((pingTimeout as Error).message));
    expect(Number(said?.[1])).toBeGreaterThanOrEqual(200);
    r.relay.release();

    await r.server.create(PODS, { metadata: { name: 'after', namespace: 'default' } });
    await waitFor(() => inf.store.size === 4, 'the pod made after the outage to reach the cache');
    // Only watches were sent since: the informer did not relist.
    expect(r.server.stats.requests - requests).toBe(r.server.stats.watchesStarted - watches);
    sub.unsubscribe();
  });

  it('a quiet connection that answers its PINGs is left alone', async () => {
    const r = await setup();
    const stop = new AbortController();
    const watches = watchAll(r, 1, { readIdleTimeoutMs: 50, pingTimeoutMs: 200 }, stop.signal);
    await waitFor(() => r.server.stats.watchesOpen === 1, 'the watch to open');
    const sent = r.relay.bytesToServer;
    const received = r.relay.bytesToClients;
    // Nothing but PINGs and their answers cross the link while the watch is quiet: wait for several rounds of them.
    await waitFor(() => r.relay.bytesToServer - sent > 5 * 17 && r.relay.bytesToClients - received > 5 * 17, 'several PINGs and answers');
    expect(r.server.stats.watchesStarted).toBe(1);
    expect(r.server.stats.watchesOpen).toBe(1);
    expect(r.relay.accepted).toBe(1);
    stop.abort();
    await Promise.all(watches);
  });
});
