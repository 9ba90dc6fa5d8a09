// A watch cut after it was established is a watch that ended (HI-53), and a body cut mid-stream is retried the
// same way whether it came gzipped or not (HI-54).
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { reflect, type ReflectorStatus } from '../../src/reflector/index.js';
import { ConnectionError, DecodeError, KubeApiError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/index.js';
import type { ListerWatcher } from '../../src/sources/types.js';
import { startApiServer } from '../../src/testing/index.js';
import { pod as podObject } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { advance, bookmark, pod, runReflect, ScriptedLW } from './reflectScripted.js';

describe('reflect(): a connection cut on an established watch re-watches at once (HI-53)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const fake = (): void => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  };

  it('a reset after the watch delivered an event: re-watched from the last RV without waiting, no relist', async () => {
    fake();
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watching.push({ type: 'MODIFIED', object: pod('a', 16) });
    lw.watching.fail(new ConnectionError('socket hang up', { code: 'ECONNRESET' }));
    await advance();
    expect(r.of('backoff')).toMatchObject([{ kind: 'watch-closed', delayMs: 0 }]);
    expect(r.of('error')).toMatchObject([{ error: expect.any(ConnectionError), terminal: false }]);
    expect(lw.watches.map((w) => w.opts.resourceVersion)).toEqual(['10', '16']);
    expect(lw.lists).toHaveLength(1);
    r.sub.unsubscribe();
  });

  it('a watch open for a second and then reset, with nothing delivered yet, is established too', async () => {
    fake();
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance(1000);
    lw.watching.fail(new ConnectionError('other side closed', { code: 'ECONNRESET' }));
    await advance();
    expect(r.of('backoff')).toMatchObject([{ kind: 'watch-closed', delayMs: 0 }]);
    r.sub.unsubscribe();
  });

  it('cuts that keep coming right after each re-watch back off, and leave the health backoff alone', async () => {
    fake();
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    let rv = 16;
    const watch = lw.watch.bind(lw);
    lw.watch = (opts, signal) => {
      lw.watchScripts.push((w) => {
        w.push({ type: 'MODIFIED', object: pod('a', ++rv) });
        w.fail(new ConnectionError('socket hang up', { code: 'ECONNRESET' }));
      });
      return watch(opts, signal);
    };
    lw.watching.push({ type: 'MODIFIED', object: pod('a', rv) });
    lw.watching.fail(new ConnectionError('socket hang up', { code: 'ECONNRESET' }));
    await advance(800 + 1600 - 1);
    expect(r.delays()).toEqual([0, 800, 1600]);
    expect(r.of('backoff').every((b) => b.kind === 'watch-closed')).toBe(true);
    lw.watch = watch;
    await advance(1);
    lw.watching.fail(new KubeApiError(500, 'down'));
    await advance();
    expect(r.of('backoff').at(-1)).toMatchObject({ kind: 'server', delayMs: 800 });
    r.sub.unsubscribe();
  });

  it('the stream a streaming list handed over is established: cut at once after its end bookmark, it re-watches at once', async () => {
    fake();
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => {
      w.push({ type: 'ADDED', object: pod('a', 5) }, bookmark(10, { 'k8s.io/initial-events-end': 'true' }));
      w.fail(new ConnectionError('socket hang up', { code: 'ECONNRESET' }));
    });
    const r = runReflect(lw, { initialList: 'stream' });
    await advance();
    expect(r.of('backoff')).toMatchObject([{ kind: 'watch-closed', delayMs: 0 }]);
    expect(lw.watches.map((w) => w.opts.resourceVersion)).toEqual([undefined, '10']);
    r.sub.unsubscribe();
  });

  it('a refused connection is never an established watch, however long it took', async () => {
    fake();
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance(5000);
    lw.watching.fail(new ConnectionError('connect ECONNREFUSED', { code: 'ECONNREFUSED' }));
    await advance();
    expect(r.of('backoff').at(-1)).toMatchObject({ kind: 'server', delayMs: 800 });
    r.sub.unsubscribe();
  });
});

describe('reflect(): a watch body cut mid-stream is retried the same way gzipped or not (HI-54)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** A server whose first watch body is half an event line, then a clean end; later watches stay open and quiet. */
  async function cuttingServer(gzip: boolean): Promise<ListerWatcher<{ metadata: { name: string } }>> {
    let watches = 0;
    const line = Buffer.from(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'b', namespace: 'default', resourceVersion: '6' } } })}\n`);
    server = createServer((req, res) => {
      if (!(req.url ?? '').includes('watch=')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [] }));
        return;
      }
      if (++watches > 1) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        return;
      }
      const body = gzip ? gzipSync(line) : line;
      res.writeHead(200, { 'content-type': 'application/json', ...(gzip && { 'content-encoding': 'gzip' }) });
      res.end(body.subarray(0, Math.floor(body.length / 2)));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kubeSource(kc, 'v1/pods') as unknown as ListerWatcher<{ metadata: { name: string } }>;
  }

  it.each([
    ['uncompressed', false, DecodeError],
    ['gzipped', true, DecodeError],
  ])('%s: reported typed, then re-watched from the last RV as a decode fault', async (_name, gzip, type) => {
    const lw = await cuttingServer(gzip);
    const statuses: ReflectorStatus[] = [];
    const sub = reflect(lw, { random: () => 0, status: (s) => statuses.push(s) }).subscribe();
    await waitFor(() => statuses.filter((s) => s.state === 'watching').length >= 2, 'the second watch');
    sub.unsubscribe();
    const errors = statuses.flatMap((s) => (s.state === 'error' ? [s.error] : []));
    const backoffs = statuses.flatMap((s) => (s.state === 'backoff' ? [s.kind] : []));
    expect(errors).toEqual([expect.any(type)]);
    expect(backoffs).toEqual(['decode']);
    expect(statuses.filter((s) => s.state === 'watching').map((s) => s.state === 'watching' && s.resourceVersion)).toEqual(['5', '5']);
  });
});

describe('reflect() over HTTP: the simulator resets a watch mid-line (HI-53)', () => {
  it('reports the ConnectionError and re-watches at once from the last RV, without a relist or a health backoff', async () => {
    const server = await startApiServer({ port: 0 });
    try {
      const lw = kubeSource(server.kubeConfig(), 'v1/pods') as unknown as ListerWatcher<{ metadata: { name: string } }>;
      const statuses: ReflectorStatus[] = [];
      let events = 0;
      const sub = reflect(lw, { random: () => 0, status: (s) => statuses.push(s) }).subscribe(() => events++);
      await waitFor(() => statuses.some((s) => s.state === 'watching'), 'watching');
      await server.create('v1/pods', podObject('first'));
      await waitFor(() => events >= 2, 'a first watch event');
      server.faults.inject({ type: 'resetMidLine' }, { verb: 'watch', resource: 'v1/pods' });
      await server.create('v1/pods', podObject('cut'));
      await waitFor(() => statuses.filter((s) => s.state === 'watching').length >= 2, 'the re-watch');
      await waitFor(() => events >= 3, 'the cut event, replayed by the new watch');
      sub.unsubscribe();
      const errors = statuses.flatMap((s) => (s.state === 'error' ? [s.error] : []));
      expect(errors).toEqual([expect.any(ConnectionError)]);
      expect(statuses.flatMap((s) => (s.state === 'backoff' ? [[s.kind, s.delayMs]] : []))).toEqual([['watch-closed', 0]]);
      expect(statuses.filter((s) => s.state === 'listing')).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
