import type { ServerResponse } from 'node:http';
import { createGzip } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/errors/api/index.js';
import { kubeSource, type KubeSourceOptions } from '../../src/sources/kubeSource.js';
import { ListDecoder } from '../../src/sources/listDecoder.js';
import type { WatchEvent } from '../../src/sources/types.js';
import { WatchDecoder } from '../../src/sources/watchDecoder.js';
import { pools } from '../../src/transport/pool.js';
import { withTransport } from '../../src/transport/options.js';
import { offlineKubeConfig } from '../helpers/offlineKubeConfig.js';
import { startHostileServer, write, type HostileServer } from '../helpers/hostileServer.js';
import { waitFor } from '../helpers/waitFor.js';

// What a hostile server can make a list or a watch hold: every bound is refused with a typed DecodeError whose code
// names it, the body is dropped when the bound is crossed (the server sees its connection close while it still
// has bytes to send), and nothing of the hostile bytes reaches the message.

const MiB = 1024 * 1024;

let server: HostileServer | undefined;
/** Bytes each response handler managed to write before the client went away. */
let written = 0;

afterEach(async () => {
  await server?.close();
  server = undefined;
  written = 0;
});

/** Writes `next()` until it answers undefined or the client goes away; never ends the response otherwise. */
async function pour(res: ServerResponse, next: () => Buffer | string | undefined): Promise<void> {
  for (;;) {
    const chunk = next();
    if (chunk === undefined) return;
    written += Buffer.byteLength(chunk);
    await write(res, chunk);
  }
}

async function serve(handler: (res: ServerResponse) => Promise<void>): Promise<HostileServer> {
  server = await startHostileServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    await handler(res);
  });
  return server;
}

async function listFailure(s: HostileServer, opts: KubeSourceOptions = {}, kc = s.kubeConfig()): Promise<DecodeError> {
  const err = await kubeSource(kc, 'v1/pods', opts)
    .list({}, new AbortController().signal)
    .then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(DecodeError);
  return err as DecodeError;
}

async function watchFailure(s: HostileServer, opts: KubeSourceOptions = {}): Promise<DecodeError> {
  let err: unknown;
  try {
    for await (const _ of kubeSource(s.kubeConfig(), 'v1/pods', opts).watch({ resourceVersion: '1' }, new AbortController().signal)) {
      // events before the bad line, if any
    }
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(DecodeError);
  return err as DecodeError;
}

async function closed(s: HostileServer): Promise<void> {
  await waitFor(() => s.open === 0 && pools.size === 0, 'the connection and pool to close');
}

const filler = Buffer.alloc(64 * 1024, 'a');

describe('bounds on what one response may make rxkube hold', () => {
  it('a watch line without a newline stops at maxObjectBytes (16 MiB by default), typed, instead of growing past V8 strings', async () => {
    const s = await serve(async (res) => {
      await write(res, '{"type":"ADDED","object":{"metadata":{"name":"');
      await pour(res, () => filler);
    });
    const err = await watchFailure(s);
    expect(err.code).toBe('OBJECT_TOO_LARGE');
    expect(err.message).toBe(`watch line is larger than maxObjectBytes (${16 * MiB} bytes)`);
    expect(err.line).toBe('');
    await closed(s);
    // Read as far as the bound and a little past (what was in flight), never much further.
    expect(written).toBeLessThan(24 * MiB);
  });

  it('a watch line bound is configurable, and events before the long line are delivered', async () => {
    const s = await serve(async (res) => {
      await write(res, '{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}\n{"type":"ADDED","object":');
      await pour(res, () => filler);
    });
    const names: string[] = [];
    let err: unknown;
    try {
      for await (const ev of kubeSource(s.kubeConfig(), 'v1/pods', { maxObjectBytes: MiB }).watch({ resourceVersion: '1' }, new AbortController().signal)) names.push(ev.object.metadata?.name ?? '');
    } catch (e) {
      err = e;
    }
    expect(names).toEqual(['a']);
    expect((err as DecodeError).code).toBe('OBJECT_TOO_LARGE');
    await closed(s);
    expect(written).toBeLessThan(8 * MiB);
  });

  it('a list item past maxObjectBytes is refused', async () => {
    const s = await serve(async (res) => {
      await write(res, '{"metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"');
      await pour(res, () => filler);
    });
    const err = await listFailure(s, { maxObjectBytes: MiB });
    expect(err.code).toBe('OBJECT_TOO_LARGE');
    expect(err.message).toMatch(/^a list item is larger than maxObjectBytes/);
    await closed(s);
    expect(written).toBeLessThan(8 * MiB);
  });

  it('an envelope value past maxObjectBytes is refused too', async () => {
    const s = await serve(async (res) => {
      await write(res, '{"metadata":{"resourceVersion":"3","x":"');
      await pour(res, () => filler);
    });
    expect((await listFailure(s, { maxObjectBytes: MiB })).code).toBe('OBJECT_TOO_LARGE');
    await closed(s);
  });

  it('a list that streams valid items past its limit for ever stops at maxListBytes', async () => {
    let n = 0;
    const s = await serve(async (res) => {
      await write(res, '{"metadata":{"resourceVersion":"3"},"items":[');
      await pour(res, () => Array.from({ length: 1000 }, () => `${n === 0 ? '' : ','}{"metadata":{"name":"p${n++}","namespace":"d"}}`).join(''));
    });
    const err = await listFailure(s, { maxListBytes: 4 * MiB });
    expect(err.code).toBe('LIST_TOO_LARGE');
    expect(err.message).toBe(`list v1/pods: the list body is larger than maxListBytes (${4 * MiB} bytes)`);
    await closed(s);
    expect(written).toBeLessThan(12 * MiB);
  });

  it('a list of whitespace for ever stops at maxListBytes', async () => {
    const spaces = Buffer.alloc(64 * 1024, ' ');
    const s = await serve(async (res) => {
      await write(res, '{"metadata":{},"items":[');
      await pour(res, () => spaces);
    });
    expect((await listFailure(s, { maxListBytes: 4 * MiB })).code).toBe('LIST_TOO_LARGE');
    await closed(s);
  });

  it('a gzip bomb stops at maxInflationRatio after about a MiB, and the retry is refused the same way', async () => {
    const s = (server = await startHostileServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gz = createGzip();
      const zeros = Buffer.alloc(MiB, ' ');
      gz.on('data', (c: Buffer) => void write(res, c).catch(() => gz.destroy()));
      gz.write('{"metadata":{},"items":[');
      // 2 GiB of whitespace in about 2 MB: written as the client reads, so nothing is produced past where it stops.
      for (let i = 0; i < 2048 && !res.destroyed; i++) {
        if (!gz.write(zeros)) await new Promise((resolve) => gz.once('drain', resolve));
      }
      gz.end(']}');
    }));
    for (let attempt = 0; attempt < 2; attempt++) {
      const err = await listFailure(s);
      expect(err.code).toBe('INFLATION_RATIO');
      expect(err.message).toBe('list v1/pods: the compressed body inflated more than maxInflationRatio (100) times its size');
      expect(err.position).toBeLessThan(4 * MiB);
    }
    await closed(s);
  });

  it('the inflation ratio is configurable with withTransport', async () => {
    const s = (server = await startHostileServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gz = createGzip();
      gz.pipe(res);
      gz.end(`{"metadata":{"resourceVersion":"1"},"items":[${' '.repeat(8 * MiB)}]}`);
    }));
    expect((await listFailure(s, {}, withTransport(s.kubeConfig(), { maxInflationRatio: 50 }))).code).toBe('INFLATION_RATIO');
    const page = await kubeSource(withTransport(s.kubeConfig(), { maxInflationRatio: 100_000 }), 'v1/pods').list({}, new AbortController().signal);
    expect(page.metadata.resourceVersion).toBe('1');
    await closed(s);
  });
});

describe('the decoders hold the bound whatever the size of the chunks they are given', () => {
  const big = 'x'.repeat(3 * MiB);
  it('a watch chunk that holds a whole line past the bound', () => {
    const decoder = new WatchDecoder({ maxObjectBytes: MiB });
    const out: WatchEvent<unknown>[] = [];
    const chunk = Buffer.from(`{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADDED","object":{"metadata":{"name":"${big}"}}}\n`);
    expect(() => decoder.push(chunk, out)).toThrow(expect.objectContaining({ code: 'OBJECT_TOO_LARGE', position: 52 }));
    expect(out.map((e) => e.object)).toEqual([{ metadata: { name: 'a' } }]);
  });

  it('a watch chunk that ends in the start of a line already past the bound: its complete lines come first', () => {
    const decoder = new WatchDecoder({ maxObjectBytes: MiB });
    const out: WatchEvent<unknown>[] = [];
    const chunk = Buffer.from(`{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADDED","object":{"metadata":{"name":"${big}`);
    expect(() => decoder.push(chunk, out)).toThrow(expect.objectContaining({ code: 'OBJECT_TOO_LARGE', position: 52 }));
    expect(out.map((e) => e.object)).toEqual([{ metadata: { name: 'a' } }]);
  });

  it('a bad line before a trailing line past the bound is the error told', () => {
    const decoder = new WatchDecoder({ maxObjectBytes: MiB });
    const out: WatchEvent<unknown>[] = [];
    const chunk = Buffer.from(`{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{not json}\n{"type":"ADDED","object":{"metadata":{"name":"${big}`);
    expect(() => decoder.push(chunk, out)).toThrow(expect.objectContaining({ message: expect.stringContaining('not valid JSON'), position: 52 }));
    expect(out).toHaveLength(1);
  });

  it('a list chunk that holds a whole item past the bound', () => {
    const decoder = new ListDecoder({ maxObjectBytes: MiB });
    const out: unknown[] = [];
    const chunk = Buffer.from(`{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"${big}"}}]}`);
    expect(() => decoder.push(chunk, out)).toThrow(expect.objectContaining({ code: 'OBJECT_TOO_LARGE' }));
    expect(out).toHaveLength(1);
  });

  it('lines and items up to the bound pass', () => {
    const name = 'y'.repeat(MiB - 100);
    const watch = new WatchDecoder({ maxObjectBytes: MiB });
    const events: WatchEvent<unknown>[] = [];
    watch.push(Buffer.from(`{"type":"ADDED","object":{"metadata":{"name":"${name}"}}}\n`), events);
    const list = new ListDecoder({ maxObjectBytes: MiB });
    const items: unknown[] = [];
    const body = Buffer.from(`{"items":[{"metadata":{"name":"${name}"}}]}`);
    for (let i = 0; i < body.length; i += 1000) list.push(body.subarray(i, i + 1000), items);
    list.end();
    expect([events.length, items.length]).toEqual([1, 1]);
  });
});

describe('the bound options are checked up front', () => {
  const kc = offlineKubeConfig();
  it.each([
    ['maxObjectBytes', 0],
    ['maxObjectBytes', 512 * MiB],
    ['maxListBytes', -1],
    ['maxListBytes', 1.5],
    ['listTimeoutMs', 0],
    ['listTimeoutPerMiBMs', -1],
    ['listTimeoutMs', Number.NaN],
  ] as const)('%s: %s is a TypeError naming the option', (key, value) => {
    expect(() => kubeSource(kc, 'v1/pods', { [key]: value })).toThrow(new RegExp(`^${key}: expected an integer`));
  });

  it('timers longer than Node can wait are refused: they would fire at once', () => {
    expect(() => kubeSource(kc, 'v1/pods', { idleTimeoutMs: 2 ** 31 })).toThrow(/^idleTimeoutMs: expected a positive integer up to 2147483647/);
    expect(() => withTransport(kc, { readIdleTimeoutMs: 2 ** 40 })).toThrow(/^readIdleTimeoutMs: expected a positive integer up to 2147483647/);
    expect(() => withTransport(kc, { pingTimeoutMs: 2 ** 31 })).toThrow(/^pingTimeoutMs: expected a positive integer up to 2147483647/);
  });

  it.each([0.5, Number.POSITIVE_INFINITY, '10'])('maxInflationRatio: %s is a TypeError naming the option', (value) => {
    expect(() => withTransport(kc, { maxInflationRatio: value as number })).toThrow(/^maxInflationRatio: expected a finite number >= 1/);
  });
});
