import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { createGzip, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { ConnectionError, DecodeError, KubeApiError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { listPages } from '../../src/sources/pager.js';
import { withTransport } from '../../src/transport/options.js';
import { settled, startHostileServer, write, type HostileServer } from '../helpers/hostileServer.js';
import { trapUnhandled } from '../helpers/unhandled.js';
import { waitFor } from '../helpers/waitFor.js';

// Every way a response body stream (undici's, and the zlib stream that inflates it) can be refused, cut, abandoned
// or aborted, against a raw server: each ends in a typed error or a clean end, and nothing reaches the process.

let server: HostileServer | undefined;
const unhandled = trapUnhandled();

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function pod(i: number): string {
  return JSON.stringify({ metadata: { name: `p${i}`, namespace: 'd', resourceVersion: String(i + 1), annotations: { noise: randomBytes(300).toString('base64') } } });
}

/** A gzip list of `count` pods written as it compresses, optionally never ended (the server goes quiet mid-body). */
async function gzipList(res: ServerResponse, count: number, end = true): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
  const gz = createGzip();
  gz.on('data', (c: Buffer) => void write(res, c).catch(() => gz.destroy()));
  gz.write('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"next"},"items":[');
  for (let i = 0; i < count; i++) gz.write((i === 0 ? '' : ',') + pod(i));
  if (!end) {
    gz.flush();
    return;
  }
  gz.end(']}');
  await new Promise((resolve) => gz.once('end', resolve));
  res.end();
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (value) => ({ resolved: value }),
    (err: unknown) => err,
  );
}

describe('response bodies that are refused, cut, abandoned or aborted', () => {
  it('a gzip list aborted by the caller mid-body ends with the abort reason', async () => {
    const s = (server = await startHostileServer((_req, res) => gzipList(res, 2000, false)));
    const ac = new AbortController();
    const err = await failure(
      (async () => {
        for await (const _ of kubeSource(s.kubeConfig(), 'v1/pods').listItems({}, ac.signal)) ac.abort(new Error('enough'));
      })(),
    );
    expect((err as Error).message).toBe('enough');
    await settled(s, unhandled);
  });

  it('a gzip list the consumer stops reading after one item releases its body', async () => {
    const s = (server = await startHostileServer((_req, res) => gzipList(res, 2000, false)));
    for await (const _ of kubeSource(s.kubeConfig(), 'v1/pods').listItems({}, new AbortController().signal)) break;
    await settled(s, unhandled);
  });

  it('the page asked for early is cancelled mid-body when the list is aborted', async () => {
    const s = (server = await startHostileServer((_req, res) => gzipList(res, 2000, false)));
    const ac = new AbortController();
    // The first page never ends either; the second was asked for from the first's metadata (P-1).
    const read = failure(listPages(kubeSource(s.kubeConfig(), 'v1/pods'), {}, ac.signal)[Symbol.asyncIterator]().next());
    await waitFor(() => s.requests >= 2, 'the page ahead to be requested');
    ac.abort(new Error('enough'));
    expect(((await read) as Error).message).toBe('enough');
    await settled(s, unhandled);
  });

  it('a gzip body whose socket is destroyed mid-body is a ConnectionError', async () => {
    const s = (server = await startHostileServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const body = gzipSync(`{"metadata":{},"items":[${Array.from({ length: 500 }, (_, i) => pod(i)).join(',')}]}`);
      await write(res, body.subarray(0, body.length >> 1));
      res.socket?.destroy();
    }));
    const err = await failure(kubeSource(s.kubeConfig(), 'v1/pods').list({}, new AbortController().signal));
    expect(err).toBeInstanceOf(ConnectionError);
    await settled(s, unhandled);
  });

  it('a body that is not gzip though it says so is a DecodeError of code CONTENT_ENCODING', async () => {
    const s = (server = await startHostileServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(randomBytes(100_000));
    }));
    const err = await failure(kubeSource(s.kubeConfig(), 'v1/pods').list({}, new AbortController().signal));
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).code).toBe('CONTENT_ENCODING');
    await settled(s, unhandled);
  });

  it('a 500 with a large gzip body: its Status is read from the first 64 KiB, the rest dropped', async () => {
    const s = (server = await startHostileServer(async (_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gz = createGzip();
      gz.on('data', (c: Buffer) => void write(res, c).catch(() => gz.destroy()));
      gz.write(`{"kind":"Status","code":500,"message":"${'x'.repeat(50)}","details":{"causes":[`);
      for (let i = 0; i < 20_000; i++) gz.write(`{"message":"${randomBytes(30).toString('hex')}"},`);
      gz.flush();
    }));
    const err = await failure(kubeSource(s.kubeConfig(), 'v1/pods').list({}, new AbortController().signal));
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(500);
    await settled(s, unhandled);
  });

  it('an object client read past its 64 MiB bound, compressed, is refused and its body dropped', async () => {
    const s = (server = await startHostileServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gz = createGzip();
      gz.on('data', (c: Buffer) => void write(res, c).catch(() => gz.destroy()));
      const filler = 'x'.repeat(1 << 20);
      gz.write('{"metadata":{"name":"a"},"data":{"x":"');
      for (let i = 0; i < 80; i++) gz.write(filler);
      gz.flush();
    }));
    // A ratio high enough that only the read's own bound is involved.
    const kc = withTransport(s.kubeConfig(), { maxInflationRatio: 1e6 });
    const err = await failure(objectClient(kc, 'v1/configmaps', { namespace: 'd' }).get('a'));
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as Error).message).toMatch(/larger than/);
    await settled(s, unhandled);
  });
});
