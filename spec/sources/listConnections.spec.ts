import diagnostics from 'node:diagnostics_channel';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectionError, ServerError } from '../../src/sources/errors/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { listAll, listPages } from '../../src/sources/pager.js';
import type { WatchEvent } from '../../src/sources/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcpProxy.js';

interface Pod {
  metadata: { name: string; namespace?: string };
}

const PODS = { version: 'v1', plural: 'pods' } as const;
const TOKEN = 'list-token';

interface Setup {
  readonly server: ApiServer;
  /** In front of the simulator: counts the connections the client opens (each a TLS handshake when TLS is on) and those still open, on the wire. */
  readonly relay: TcpProxy;
  /** A kubeconfig that reaches the simulator through the relay. */
  readonly kc: KubeConfig;
  /** How many times credentials were applied (once per request) and the dispatchers client-node built. */
  readonly auth: { calls: number; dispatchers: Set<unknown> };
}

let current: Setup | undefined;

afterEach(async () => {
  await current?.relay.close();
  await current?.server.close();
  current = undefined;
});

async function setup(pods: number, tls = false): Promise<Setup> {
  const server = await startApiServer({ token: TOKEN, bookmarkIntervalMs: 60_000, tls });
  for (let i = 0; i < pods; i++) await server.create(PODS, { metadata: { name: `p${i}`, namespace: 'default' } });
  const relay = await startTcpProxy(server.port);
  const port = relay.port;
  const base = server.kubeConfig();
  const cluster = base.getCurrentCluster();
  if (cluster === null) throw new Error('the simulator kubeconfig has no cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, server: cluster.server.replace(`:${server.port}`, `:${port}`) }],
    users: base.users,
    contexts: base.contexts,
    currentContext: base.currentContext,
  });
  // Counts, without changing it, what client-node does for each request.
  const auth = { calls: 0, dispatchers: new Set<unknown>() };
  const apply = kc.applySecurityAuthentication.bind(kc);
  kc.applySecurityAuthentication = async (ctx: RequestContext): Promise<void> => {
    auth.calls++;
    await apply(ctx);
    auth.dispatchers.add(ctx.getDispatcher());
  };
  current = { server, relay, kc, auth };
  return current;
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('the pages of one list share one connection', () => {
  it('a paged list opens one connection, sends the credentials with every page and closes it when done', async () => {
    const { server, relay, kc, auth } = await setup(9);
    const lw = kubeSource<Pod>(kc, PODS);
    const requestsBefore = server.stats.requests;
    const pages: string[][] = [];
    for await (const page of listPages(lw, {}, new AbortController().signal, { pageSize: 2 })) {
      pages.push(page.items.map((p) => p.metadata.name));
      expect(relay.accepted).toBe(1);
    }
    expect(pages).toHaveLength(5);
    expect(server.stats.requests - requestsBefore).toBe(5);
    // The server demands the token: every page carried it, applied for each request.
    expect(auth.calls).toBe(5);
    expect(relay.accepted).toBe(1);
    await vi.waitFor(() => expect(relay.open).toBe(0));
    await vi.waitFor(() => expect(server.stats.connections).toBe(0));
  });

  it('over TLS: one handshake for the whole list, made with the dispatcher client-node built for its first page', async () => {
    const { relay, kc, auth } = await setup(7, true);
    const result = await listAll(kubeSource<Pod>(kc, PODS), {}, new AbortController().signal, { pageSize: 2 });
    expect(result.items).toHaveLength(7);
    expect(result.paginated).toBe(true);
    expect(relay.accepted).toBe(1);
    expect(auth.calls).toBe(4);
    expect(auth.dispatchers.size).toBe(4);
    await vi.waitFor(() => expect(relay.open).toBe(0));
  });

  it('the next page is dispatched within one turn of the event loop, as a consumer that prefetches expects', async () => {
    const { relay, kc } = await setup(6);
    const order: string[] = [];
    const onRequest = (): void => void order.push('request');
    const onConnect = (): void => void order.push('connect');
    diagnostics.subscribe('undici:request:create', onRequest);
    diagnostics.subscribe('undici:client:beforeConnect', onConnect);
    try {
      const pages = listPages(kubeSource<Pod>(kc, PODS), {}, new AbortController().signal, { pageSize: 2 })[Symbol.asyncIterator]();
      expect((await pages.next()).done).toBe(false);
      // Ask for the next page, let one turn pass, then work synchronously as a consumer applying the page would.
      const next = pages.next();
      await new Promise((resolve) => setImmediate(resolve));
      order.push('consumer');
      expect((await next).done).toBe(false);
      expect(order).toEqual(['request', 'connect', 'request', 'consumer']);
      await pages.return?.();
    } finally {
      diagnostics.unsubscribe('undici:request:create', onRequest);
      diagnostics.unsubscribe('undici:client:beforeConnect', onConnect);
    }
    expect(relay.accepted).toBe(1);
    await vi.waitFor(() => expect(relay.open).toBe(0));
  });

  it('the next list opens a connection of its own, from a dispatcher built anew', async () => {
    const { relay, kc, auth } = await setup(5);
    const lw = kubeSource<Pod>(kc, PODS);
    const signal = new AbortController().signal;
    expect((await listAll(lw, {}, signal, { pageSize: 2 })).items).toHaveLength(5);
    await vi.waitFor(() => expect(relay.open).toBe(0));
    const firstList = new Set(auth.dispatchers);
    expect((await listAll(lw, {}, signal, { pageSize: 2 })).items).toHaveLength(5);
    expect(relay.accepted).toBe(2);
    expect([...auth.dispatchers].filter((d) => !firstList.has(d))).toHaveLength(3);
    await vi.waitFor(() => expect(relay.open).toBe(0));
  });

  it('a list that fails mid-way closes its connection', async () => {
    const { server, relay, kc } = await setup(6);
    const pages = listPages(kubeSource<Pod>(kc, PODS), {}, new AbortController().signal, { pageSize: 2 });
    const err = await caught(
      (async () => {
        for await (const _page of pages) {
          // The next page (pull-based: not requested yet) is answered with a 500.
          server.faults.inject({ type: 'status', status: 500 }, { verb: 'list' });
        }
      })(),
    );
    expect(err).toBeInstanceOf(ServerError);
    expect(relay.accepted).toBe(1);
    await vi.waitFor(() => expect(relay.open).toBe(0));
    await vi.waitFor(() => expect(server.stats.connections).toBe(0));
  });

  it('a list whose page is cut off closes its connection', async () => {
    const { server, relay, kc } = await setup(6);
    const pages = listPages(kubeSource<Pod>(kc, PODS), {}, new AbortController().signal, { pageSize: 2 });
    const err = await caught(
      (async () => {
        for await (const _page of pages) server.faults.inject({ type: 'resetMidLine' }, { verb: 'list' });
      })(),
    );
    expect(err).toBeInstanceOf(ConnectionError);
    await vi.waitFor(() => expect(relay.open).toBe(0));
  });

  it('aborting a list while a page is in flight closes the connection at once', async () => {
    const { server, relay, kc } = await setup(40);
    const abort = new AbortController();
    const pages = listPages(kubeSource<Pod>(kc, PODS), {}, abort.signal, { pageSize: 10 });
    const err = await caught(
      (async () => {
        let n = 0;
        for await (const _page of pages) {
          n++;
          if (n === 1) {
            server.faults.inject({ type: 'trickle', bytesPerChunk: 64, intervalMs: 50 }, { verb: 'list' });
            setTimeout(() => abort.abort(), 100);
          }
        }
      })(),
    );
    expect(err).toMatchObject({ name: 'AbortError' });
    expect(relay.accepted).toBe(1);
    await vi.waitFor(() => expect(relay.open).toBe(0));
    await vi.waitFor(() => expect(server.stats.connections).toBe(0));
  });

  it('a consumer that stops early closes the connection, well before any keep-alive would', async () => {
    const { relay, kc } = await setup(6);
    for await (const page of listPages(kubeSource<Pod>(kc, PODS), {}, new AbortController().signal, { pageSize: 2 })) {
      expect(page.items).toHaveLength(2);
      expect(relay.open).toBe(1);
      break;
    }
    await vi.waitFor(() => expect(relay.open).toBe(0), { timeout: 1000 });
  });

  it('a restart after an expired continue token stays within the list and closes at its end', async () => {
    const { server, relay, kc } = await setup(6);
    let n = 0;
    for await (const page of listPages(kubeSource<Pod>(kc, PODS), {}, new AbortController().signal, { pageSize: 2 })) {
      n++;
      if (n === 1) server.faults.inject({ type: 'status', status: 410, reason: 'Expired' }, { verb: 'list' });
      if (page.restarted) expect(n).toBe(2);
    }
    expect(n).toBe(4);
    expect(relay.accepted).toBeLessThanOrEqual(2);
    await vi.waitFor(() => expect(relay.open).toBe(0));
  });
});

describe('requests outside a paged list keep a connection each', () => {
  it('list calls made directly with one signal do not share, and leave nothing open', async () => {
    const { relay, kc } = await setup(5);
    const lw = kubeSource<Pod>(kc, PODS, { pageSize: 2 });
    const signal = new AbortController().signal;
    const first = await lw.list({}, signal);
    await vi.waitFor(() => expect(relay.open).toBe(0));
    await lw.list({ continue: first.metadata.continue ?? '' }, signal);
    expect(relay.accepted).toBe(2);
    await vi.waitFor(() => expect(relay.open).toBe(0));
  });

  it('watches open and close their own connection, also beside a list in progress', async () => {
    const { server, relay, kc } = await setup(4);
    const lw = kubeSource<Pod>(kc, PODS);
    const signal = new AbortController().signal;
    const pages = listPages(lw, {}, signal, { pageSize: 2 })[Symbol.asyncIterator]();
    expect((await pages.next()).done).toBe(false);
    const watched: WatchEvent<Pod>[] = [];
    for await (const ev of lw.watch({ resourceVersion: '1' }, signal)) {
      watched.push(ev);
      expect(relay.open).toBe(2);
      break;
    }
    expect(watched[0]?.type).toBe('ADDED');
    await vi.waitFor(() => expect(relay.open).toBe(1));
    expect((await pages.next()).done).toBe(false);
    expect((await pages.next()).done).toBe(true);
    expect(relay.accepted).toBe(2);
    await vi.waitFor(() => expect(relay.open).toBe(0));
    for await (const _ev of lw.watch({ resourceVersion: '1' }, signal)) break;
    expect(relay.accepted).toBe(3);
    await vi.waitFor(() => expect(relay.open).toBe(0));
    await vi.waitFor(() => expect(server.stats.watchesOpen).toBe(0));
  });
});
