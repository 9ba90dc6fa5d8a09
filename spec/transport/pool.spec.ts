import diagnostics from 'node:diagnostics_channel';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { ConnectionError, isServerError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { listAll, listPages } from '../../src/sources/pager.js';
import type { WatchEvent } from '../../src/sources/types.js';
import { generateServingCertificate } from '../../src/testing/tls/tls.js';
import { pools } from '../../src/transport/pool.js';
import { withTransport } from '../../src/transport/options.js';
import { waitFor } from '../helpers/waitFor.js';
import { startRelayed, type Relayed } from './relay.js';

interface Pod {
  metadata: { name: string; namespace?: string };
}

const PODS = { version: 'v1', plural: 'pods' } as const;
const TOKEN = 'pool-token';

let current: Relayed | undefined;
let dir: string | undefined;

afterEach(async () => {
  await current?.close();
  current = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function setup(pods: number, tls = false, http2 = false): Promise<Relayed> {
  current = await startRelayed({ token: TOKEN, bookmarkIntervalMs: 60_000, tls, http2 });
  for (let i = 0; i < pods; i++) await current.server.create(PODS, { metadata: { name: `p${i}`, namespace: 'default' } });
  return current;
}

/** Every connection closed, on both sides of the relay, and no pool left in the process. */
async function nothingOpen(r: Relayed): Promise<void> {
  await waitFor(() => r.relay.open === 0 && r.server.stats.connections === 0 && pools.size === 0, 'every connection and pool to close');
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('one connection pool per cluster and TLS material', () => {
  it('a paged list over TLS and HTTP/1.1 uses two connections, the page being read and the next one, sends the token with every page (the server demands it) and closes when done', async () => {
    const r = await setup(9, true);
    const requestsBefore = r.server.stats.requests;
    const pages: number[] = [];
    for await (const page of listPages(kubeSource<Pod>(r.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })) {
      pages.push(page.items.length);
      expect(r.relay.accepted).toBeLessThanOrEqual(2);
    }
    expect(pages).toEqual([2, 2, 2, 2, 1]);
    expect(r.server.stats.requests - requestsBefore).toBe(5);
    expect(r.relay.accepted).toBe(2);
    await nothingOpen(r);
  });

  it('a paged list over HTTP/2 sends its pages, the next one early included, over one connection', async () => {
    const r = await setup(9, true, true);
    const pages: number[] = [];
    for await (const page of listPages(kubeSource<Pod>(r.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })) {
      pages.push(page.items.length);
    }
    expect(pages).toEqual([2, 2, 2, 2, 1]);
    expect(r.relay.accepted).toBe(1);
    await nothingOpen(r);
  });

  it('the next page is dispatched before this one is handed over, from the first bytes of this one', async () => {
    const r = await setup(6);
    const order: string[] = [];
    const onRequest = (): void => void order.push('request');
    diagnostics.subscribe('undici:request:create', onRequest);
    try {
      const pages = listPages(kubeSource<Pod>(r.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })[Symbol.asyncIterator]();
      expect((await pages.next()).done).toBe(false);
      // The second page went out as soon as the first page's continue token was read.
      expect(order).toEqual(['request', 'request']);
      order.push('consumer');
      // Asking for the second page opens the third, whose token the second page carried from its first bytes.
      expect((await pages.next()).done).toBe(false);
      expect(order).toEqual(['request', 'request', 'consumer', 'request']);
      expect((await pages.next()).done).toBe(false);
      expect((await pages.next()).done).toBe(true);
      expect(order).toEqual(['request', 'request', 'consumer', 'request']);
    } finally {
      diagnostics.unsubscribe('undici:request:create', onRequest);
    }
    expect(r.relay.accepted).toBe(2);
    await nothingOpen(r);
  });

  it('lists, a watch and writes of different sources and clients share the pool while a request keeps it open', async () => {
    const r = await setup(4, true);
    const signal = new AbortController().signal;
    const watched: WatchEvent<Pod>[] = [];
    const watch = (async () => {
      for await (const ev of kubeSource<Pod>(r.kubeConfig(), PODS).watch({ resourceVersion: r.server.stats.resourceVersion }, signal)) {
        watched.push(ev);
        if (watched.length === 30) return;
      }
    })();
    await waitFor(() => r.server.stats.watchesOpen === 1, 'the watch to open');
    // Each source and client has a KubeConfig of its own: the pool is found by what the connection is, not by object.
    for (let round = 0; round < 3; round++) {
      expect((await listAll(kubeSource<Pod>(r.kubeConfig(), PODS), {}, signal, { pageSize: 2 })).items.length).toBeGreaterThanOrEqual(4);
      const cms = objectClient(r.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
      for (let i = 0; i < 5; i++) await cms.create({ metadata: { name: `cm-${round}-${i}` } });
      const pods = objectClient(r.kubeConfig(), 'v1/pods', { namespace: 'default' });
      for (let i = 0; i < 10; i++) await pods.create({ metadata: { name: `w-${round}-${i}` } });
    }
    await watch;
    expect(watched).toHaveLength(30);
    // HTTP/1.1 (the simulator offers no HTTP/2): one connection for the watch, two for everything else (a list reads
    // one page while the next one arrives, P-6); the writes reuse them.
    expect(r.relay.accepted).toBe(3);
    expect(pools.size).toBe(1);
    await nothingOpen(r);
  });

  it('300 creates one after the other over TLS open one connection; 16 at a time open at most 16', async () => {
    const r = await setup(0, true);
    const cms = objectClient(r.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    for (let i = 0; i < 300; i++) await cms.create({ metadata: { name: `seq-${i}` } });
    expect(r.relay.accepted).toBe(1);
    await nothingOpen(r);
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 300) await cms.create({ metadata: { name: `par-${next++}` } });
      }),
    );
    expect(r.relay.accepted - 1).toBeGreaterThan(1);
    expect(r.relay.accepted - 1).toBeLessThanOrEqual(16);
    expect(r.server.list('v1/configmaps')).toHaveLength(600);
    await nothingOpen(r);
  });

  it('once its last request ended the pool closes, and the next request connects again', async () => {
    const r = await setup(3);
    const lw = kubeSource<Pod>(r.kubeConfig(), PODS);
    const signal = new AbortController().signal;
    await lw.list({}, signal);
    await nothingOpen(r);
    await lw.list({}, signal);
    expect(r.relay.accepted).toBe(2);
    await nothingOpen(r);
  });

  it('KubeConfigs that differ only in their credentials share a pool; a different protocol gets a pool of its own', async () => {
    const r = await setup(2, true);
    const signal = new AbortController().signal;
    const hold = new AbortController();
    // A stalled watch keeps the pools open while the lists run.
    r.server.faults.inject({ type: 'silentWatch' }, { verb: 'watch' });
    const watching = (async () => {
      for await (const _ of kubeSource<Pod>(r.kubeConfig(), PODS).watch({}, hold.signal)) break;
    })().catch(() => undefined);
    await waitFor(() => r.server.stats.watchesOpen === 1, 'the watch to open');
    const other = r.kubeConfig({ user: { token: 'wrong-token' } });
    await expect(kubeSource<Pod>(other, PODS).list({}, signal)).rejects.toMatchObject({ status: 401 });
    await kubeSource<Pod>(r.kubeConfig(), PODS).list({}, signal);
    expect(pools.size).toBe(1);
    await kubeSource<Pod>(withTransport(r.kubeConfig(), { http2: false }), PODS).list({}, signal);
    expect(pools.size).toBe(2);
    hold.abort();
    await watching;
    await nothingOpen(r);
  });
});

describe('rotated TLS material', () => {
  it('a rewritten client certificate moves the next request to a new pool; the old pool closes once its watch ends', async () => {
    const r = await setup(2, true);
    dir = mkdtempSync(join(tmpdir(), 'rxkube-pool-'));
    const certFile = join(dir, 'client.crt');
    const keyFile = join(dir, 'client.key');
    const first = await generateServingCertificate();
    writeFileSync(certFile, first.certPem);
    writeFileSync(keyFile, first.keyPem);
    const kc = r.kubeConfig({ user: { certFile, keyFile } });
    const lw = kubeSource<Pod>(kc, PODS);
    const hold = new AbortController();
    r.server.faults.inject({ type: 'silentWatch' }, { verb: 'watch' });
    const watching = (async () => {
      for await (const _ of lw.watch({}, hold.signal)) break;
    })().catch(() => undefined);
    await waitFor(() => r.server.stats.watchesOpen === 1, 'the watch to open');
    await lw.list({}, new AbortController().signal);
    expect(r.relay.accepted).toBe(2);
    expect(pools.size).toBe(1);

    // As cert-manager or the kubelet would: the files are replaced while the watch runs.
    const second = await generateServingCertificate();
    writeFileSync(certFile, second.certPem);
    writeFileSync(keyFile, second.keyPem);
    await lw.list({}, new AbortController().signal);
    expect(r.relay.accepted).toBe(3);
    expect(pools.size).toBe(2);
    // The new pool closed with its list; the old one stays with the watch (and the idle connection of its first
    // list, until its keep-alive timeout or the watch's end), then closes too.
    await waitFor(() => pools.size === 1 && r.relay.open === 2, 'the new pool to close after its list');
    hold.abort();
    await watching;
    await nothingOpen(r);
  });

  it('a CA file rewritten with the same bytes keeps the pool; new bytes make a new one', async () => {
    const r = await setup(1, true);
    dir = mkdtempSync(join(tmpdir(), 'rxkube-pool-'));
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, r.server.caPem ?? '');
    const kc = r.kubeConfig({ cluster: { caFile, caData: undefined } });
    const hold = new AbortController();
    r.server.faults.inject({ type: 'silentWatch' }, { verb: 'watch' });
    const watching = (async () => {
      for await (const _ of kubeSource<Pod>(kc, PODS).watch({}, hold.signal)) break;
    })().catch(() => undefined);
    await waitFor(() => r.server.stats.watchesOpen === 1, 'the watch to open');
    writeFileSync(caFile, r.server.caPem ?? '');
    await kubeSource<Pod>(kc, PODS).list({}, new AbortController().signal);
    expect(pools.size).toBe(1);
    expect(r.relay.accepted).toBe(2);
    writeFileSync(caFile, `${r.server.caPem ?? ''}\n`);
    await kubeSource<Pod>(kc, PODS).list({}, new AbortController().signal);
    expect(r.relay.accepted).toBe(3);
    expect(pools.size).toBeGreaterThanOrEqual(1);
    hold.abort();
    await watching;
    await nothingOpen(r);
  });
});

describe('nothing leaks', () => {
  it('a list that fails mid-way leaves no socket', async () => {
    const r = await setup(6);
    const err = await caught(
      (async () => {
        for await (const _page of listPages(kubeSource<Pod>(r.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })) {
          // The next page is on its way already; the one after it is answered with a 500.
          r.server.faults.inject({ type: 'status', status: 500 }, { verb: 'list' });
        }
      })(),
    );
    expect(isServerError(err)).toBe(true);
    expect(r.relay.accepted).toBe(2);
    await nothingOpen(r);
  });

  it('a list whose page is cut off leaves no socket', async () => {
    const r = await setup(6);
    const err = await caught(
      (async () => {
        for await (const _page of listPages(kubeSource<Pod>(r.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })) {
          r.server.faults.inject({ type: 'resetMidLine' }, { verb: 'list' });
        }
      })(),
    );
    expect(err).toBeInstanceOf(ConnectionError);
    await nothingOpen(r);
  });

  it('aborting a list while a page is in flight closes the connection at once', async () => {
    const r = await setup(40);
    const abort = new AbortController();
    const err = await caught(
      (async () => {
        let n = 0;
        for await (const _page of listPages(kubeSource<Pod>(r.kubeConfig(), PODS), {}, abort.signal, { pageSize: 10 })) {
          if (++n === 1) {
            r.server.faults.inject({ type: 'trickle', bytesPerChunk: 64, intervalMs: 50 }, { verb: 'list' });
            setTimeout(() => abort.abort(), 100);
          }
        }
      })(),
    );
    expect(err).toMatchObject({ name: 'AbortError' });
    expect(r.relay.accepted).toBe(2);
    await nothingOpen(r);
  });

  it('a consumer that stops early leaves no socket, well before any keep-alive would', async () => {
    const r = await setup(6);
    for await (const page of listPages(kubeSource<Pod>(r.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })) {
      expect(page.items).toHaveLength(2);
      // This page's connection, and the next page's, already asked for.
      await waitFor(() => r.relay.open === 2, 'the next page to be asked for');
      break;
    }
    // Within waitFor's 10 s, a third of the 30 s keep-alive.
    await waitFor(() => r.relay.open === 0 && pools.size === 0, 'the connection to close');
  });

  it('a restart after an expired continue token stays on the two connections and closes at the end', async () => {
    const r = await setup(6);
    const before = r.server.stats.requests;
    let n = 0;
    for await (const page of listPages(kubeSource<Pod>(r.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })) {
      // The second page was asked for with the first; the third, asked for with the second, is refused with 410.
      if (++n === 1) {
        await waitFor(() => r.server.stats.requests - before === 2, 'the second page to be asked for');
        r.server.faults.inject({ type: 'status', status: 410, reason: 'Expired' }, { verb: 'list' });
      }
      if (page.restarted) expect(n).toBe(3);
    }
    expect(n).toBe(5);
    expect(r.relay.accepted).toBe(2);
    await nothingOpen(r);
  });
});
