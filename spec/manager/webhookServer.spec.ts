/**
 * The runner's webhook server (WH-60…): HTTPS with certificates read from a directory, webhooks routed by exact
 * path, what a client sends bounded and refused with controller-runtime's status codes, and a certificate
 * rewritten on disk served to the next connection without a restart.
 */
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { connect as tcpConnect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Webhook, WebhookAnswer } from '../../src/admission/types.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import type { TlsPair } from '../../src/manager/certificates/tlsPair.js';
import type { ManagerOptions } from '../../src/manager/options.js';
import { manager } from '../../src/manager/manager.js';
import { certDirPairs } from '../../src/manager/certDir.js';
import { admission } from '../../src/admission/index.js';
import { review } from '../admission/reviews.js';
import { trapUnhandled } from '../helpers/unhandled.js';
import { waitFor } from '../helpers/waitFor.js';
import { start, type Running } from './harness.js';
import { selfSignedPair } from './tlsFiles.js';

const escaped = trapUnhandled();
let first: TlsPair;
let second: TlsPair;
let dir: string;
let running: Running | undefined;
const reported: Error[] = [];

beforeAll(() => {
  first = selfSignedPair('first');
  second = selfSignedPair('second');
  setErrorReporter((err) => void reported.push(err as Error));
});
afterAll(() => setErrorReporter(undefined));

afterEach(async () => {
  await running?.stop();
  running = undefined;
  rmSync(dir, { recursive: true, force: true });
  reported.length = 0;
  expect(escaped).toEqual([]);
});

function writePair(into: string, pair: TlsPair): void {
  writeFileSync(join(into, 'tls.crt'), pair.cert);
  writeFileSync(join(into, 'tls.key'), pair.key);
}

/** What the echo webhook saw: each body and signal it was given. */
const seen: { body: unknown; signal: AbortSignal }[] = [];
const echo: Webhook = {
  type: 'validating',
  path: '/validate-echo',
  review: (body, signal) => {
    seen.push({ body, signal });
    return Promise.resolve({ status: 200, body: { echoed: body } });
  },
};

/** A manager serving only `webhooks` on loopback from a fresh certificate directory holding `first`; resolves the port. */
async function serve(webhooks: readonly Webhook[] = [echo], extra: Partial<ManagerOptions> = {}): Promise<number> {
  dir = mkdtempSync(join(tmpdir(), 'rxkube-certs-'));
  writePair(dir, first);
  seen.length = 0;
  running = start({ controllers: [], webhooks, webhookBindAddress: '127.0.0.1:0', webhookCertDir: dir, healthProbeBindAddress: '0', ...extra });
  const r = running;
  return waitFor(() => {
    const e = r.events.find((x) => x.type === 'serving' && x.server === 'webhooks');
    return e?.type === 'serving' && e.port;
  }, 'the webhook server', 10_000, { describe: () => String(r.ended) });
}

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request on a new connection, trusting `ca`. */
function send(port: number, opts: { method?: string; path?: string; body?: string; contentType?: string | null; ca?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
    const req = request(
      { host: '127.0.0.1', port, method: opts.method ?? 'POST', path: opts.path ?? '/validate-echo', headers, ca: opts.ca ?? first.cert, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The common name of the certificate a new TLS connection is shown. */
function servedName(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerX509Certificate();
      socket.destroy();
      resolve(raw === undefined ? '' : new X509Certificate(raw.raw).subject);
    });
    socket.on('error', reject);
  });
}

describe('the webhook server', () => {
  it('serves webhooks alone, with no controller or informer, and hands each its parsed body', async () => {
    const port = await serve();
    const reply = await send(port, { body: JSON.stringify({ kind: 'AdmissionReview', n: 1 }) });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(JSON.parse(reply.body)).toEqual({ echoed: { kind: 'AdmissionReview', n: 1 } });
    expect(running?.events.find((e) => e.type === 'serving')).toMatchObject({ server: 'webhooks', address: '127.0.0.1', url: `https://127.0.0.1:${port}` });
  });

  it('routes by exact path and answers POST only, with a JSON content type', async () => {
    const port = await serve();
    expect((await send(port, { path: '/validate-echo/', body: '{}' })).status).toBe(404);
    expect((await send(port, { path: '/validate-ech', body: '{}' })).status).toBe(404);
    const get = await send(port, { method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.headers['allow']).toBe('POST');
    const text = await send(port, { body: '{}', contentType: 'text/plain' });
    expect(text.status).toBe(400);
    expect(JSON.parse(text.body).message).toMatch(/contentType=text\/plain, expected application\/json/);
    expect((await send(port, { body: '{}', contentType: null })).status).toBe(400);
    expect((await send(port, { body: '{}', contentType: 'application/json; charset=utf-8' })).status).toBe(200);
    expect((await send(port, { body: '' })).status).toBe(400);
    expect(seen).toHaveLength(1);
  });

  it('hands a body that is not JSON to the webhook as undefined', async () => {
    const port = await serve();
    const reply = await send(port, { body: '{"kind":' });
    expect(reply.status).toBe(200);
    expect(seen.map((s) => s.body)).toEqual([undefined]);
  });

  it('answers 413 to a body past maxBodyBytes, announced or streamed, and stops reading it', async () => {
    const port = await serve([echo], { serverLimits: { maxBodyBytes: 1_000 } });
    expect((await send(port, { body: JSON.stringify({ pad: 'x'.repeat(1_000) }) })).status).toBe(413);
    expect((await send(port, { body: JSON.stringify({ pad: 'x'.repeat(900) }) })).status).toBe(200);
    // Chunked, with no length announced: refused once the bytes read pass the limit, and the connection ends.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/validate-echo', headers: { 'content-type': 'application/json' }, ca: first.cert, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('['.padEnd(2_000, ' '));
      // The rest is never sent: the answer must come without it.
    });
    expect(status).toBe(413);
    expect(seen).toHaveLength(1);
  });

  it('aborts the signal of a review whose client left', async () => {
    let release: ((a: WebhookAnswer) => void) | undefined;
    const slow: Webhook = {
      type: 'mutating',
      path: '/mutate-slow',
      review: (body, signal) => {
        seen.push({ body, signal });
        return new Promise((resolve) => (release = resolve));
      },
    };
    const port = await serve([slow]);
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/mutate-slow', headers: { 'content-type': 'application/json' }, ca: first.cert, agent: false });
    req.on('error', () => undefined);
    req.end('{}');
    const { signal } = await waitFor(() => seen[0], 'the review to start');
    expect(signal.aborted).toBe(false);
    req.destroy();
    await waitFor(() => signal.aborted, 'the signal to abort');
    release?.({ status: 200, body: {} });
  });

  it('answers 503 and aborts the signal of a review still unanswered after answerTimeoutMs', async () => {
    const never: Webhook = {
      type: 'conversion',
      path: '/convert',
      review: (body, signal) => {
        seen.push({ body, signal });
        return new Promise(() => undefined);
      },
    };
    const port = await serve([never], { serverLimits: { answerTimeoutMs: 100 } });
    const reply = await send(port, { path: '/convert', body: '{}' });
    expect(reply.status).toBe(503);
    expect(JSON.parse(reply.body).message).toBe('no answer within 100 ms');
    expect(seen[0]?.signal.aborted).toBe(true);
  });

  it("waits for an admission webhook past answerTimeoutMs up to its timeoutSeconds, so its handler's deadline answers first", async () => {
    // answerTimeoutMs 100 ms, the webhook's timeoutSeconds 1 (handler deadline 750 ms): the denial for overrunning, not a 503.
    const slow = admission.validating('apps/v1/deployments', () => new Promise(() => undefined), { timeoutSeconds: 1, path: '/slow' });
    const port = await serve([slow], { serverLimits: { answerTimeoutMs: 100 } });
    const reply = await send(port, { path: '/slow', body: JSON.stringify(review({ uid: 'u-slow' })) });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).response).toMatchObject({ uid: 'u-slow', allowed: false, status: { code: 500, message: 'the handler overran its deadline' } });
    expect(reported.map((e) => e.name)).toEqual(['AdmissionWebhookError']);
  });

  it('answers a webhook that throws or gives what JSON cannot write with a 500, and keeps serving', async () => {
    const throwing: Webhook = { type: 'validating', path: '/throws', review: () => Promise.reject(new Error('boom\u001b[31m')) };
    const cyclic: Webhook = {
      type: 'validating',
      path: '/cyclic',
      review: () => {
        const body: Record<string, unknown> = {};
        body['self'] = body;
        return Promise.resolve({ status: 200, body });
      },
    };
    const port = await serve([throwing, cyclic, echo]);
    const threw = await send(port, { path: '/throws', body: '{}' });
    expect(threw.status).toBe(500);
    expect(threw.body).not.toContain('\u001b');
    expect((await send(port, { path: '/cyclic', body: '{}' })).status).toBe(500);
    expect((await send(port, { body: '{}' })).status).toBe(200);
  });

  it('speaks TLS 1.2 or later and HTTP/1.1 only, and drops what is not TLS', async () => {
    const port = await serve();
    const refused = (opts: ConnectionOptions): Promise<string> =>
      new Promise((resolve) => {
        const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...opts }, () => {
          resolve(`connected with ${s.getProtocol()} ${String(s.alpnProtocol)}`);
          s.destroy();
        });
        s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
    expect(await refused({ maxVersion: 'TLSv1.1', minVersion: 'TLSv1' })).not.toMatch(/^connected/);
    expect(await refused({ ALPNProtocols: ['h2'] })).not.toMatch(/^connected/);
    expect(await refused({ ALPNProtocols: ['h2', 'http/1.1'] })).toBe('connected with TLSv1.3 http/1.1');
    // Plain HTTP and garbage on the TLS port: the connection ends, nothing escapes.
    for (const bytes of ['GET / HTTP/1.1\r\nHost: x\r\n\r\n', '\u0016\u0003\u0001\u0000\u0005hello', '\u0000'.repeat(100)]) {
      await new Promise<void>((resolve) => {
        const s = tcpConnect(port, '127.0.0.1', () => s.end(bytes));
        s.on('data', () => undefined);
        s.on('error', () => resolve());
        s.on('close', () => resolve());
      });
    }
    expect((await send(port, { body: '{}' })).status).toBe(200);
  });

  it("serves admission's own webhooks: a review in, the handler's verdict out", async () => {
    const replicas = admission.validating('apps/v1/deployments', ({ object }) =>
      (object?.spec?.replicas ?? 0) > 10 ? admission.deny('spec.replicas: at most 10', { field: 'spec.replicas' }) : admission.allow(),
    );
    const port = await serve([replicas]);
    const answer = await send(port, { path: replicas.path, body: JSON.stringify(review()) });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'AdmissionReview', response: { uid: '705ab4f5-6393-11e8-b7cc-42010a800002', allowed: true } });
    const notReview = await send(port, { path: replicas.path, body: '{"kind":' });
    expect(notReview.status).toBe(400);
  });

  it('keeps its connection cap over TLS: idle connections and stalled handshakes make room for a request', async () => {
    const port = await serve([echo], { serverLimits: { maxConnections: 2 } });
    const idle = await Promise.all(
      Array.from({ length: 6 }, () => new Promise<import('node:net').Socket>((resolve) => {
        const s = tcpConnect(port, '127.0.0.1', () => resolve(s));
        s.on('error', () => undefined);
      })),
    );
    expect((await send(port, { body: '{}' })).status).toBe(200);
    await waitFor(() => idle.filter((s) => s.destroyed || s.readableEnded).length >= 5, 'the idle connections to be pushed out');
    for (const s of idle) s.destroy();
  });

  it('answers malformed HTTP inside TLS with a bare status and closes, nothing escaping', async () => {
    const port = await serve([echo], { serverLimits: { maxHeaderBytes: 1_024 } });
    /** The status line of the one answer to `bytes` sent over TLS, or '' when the server closed without one. */
    const rawOverTls = (bytes: string): Promise<string> =>
      new Promise((resolve) => {
        let got = '';
        const s = tlsConnect({ host: '127.0.0.1', port, ca: first.cert }, () => s.end(bytes));
        s.on('data', (c: Buffer) => (got += c.toString('latin1')));
        s.on('error', () => undefined);
        s.on('close', () => resolve(got.split('\r\n', 1)[0] ?? ''));
      });
    const post = (target: string, rest: string): string => `POST ${target} HTTP/1.1\r\nHost: x\r\n${rest}`;
    expect(await rawOverTls('NOT HTTP AT ALL\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    expect(await rawOverTls(post('/validate-echo', `X-Big: ${'a'.repeat(2_000)}\r\n\r\n`))).toMatch(/^HTTP\/1\.1 431/);
    expect(await rawOverTls(post('/validate-echo', 'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'))).toMatch(/^HTTP\/1\.1 400/);
    expect(await rawOverTls(post('//[', 'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'))).toMatch(/^HTTP\/1\.1 400/);
    expect(await rawOverTls(post('/validate-echo', 'Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'))).toMatch(/^HTTP\/1\.1 400/);
    expect(seen).toHaveLength(0);
    expect((await send(port, { body: '{}' })).status).toBe(200);
  });

  it('ends a connection whose body comes too slowly', async () => {
    const port = await serve([echo], { serverLimits: { headersTimeoutMs: 200, requestTimeoutMs: 400 } });
    const ended = await new Promise<string>((resolve) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/validate-echo', headers: { 'content-type': 'application/json', 'content-length': '100' }, ca: first.cert, agent: false }, (res) => {
        res.resume();
        resolve(String(res.statusCode));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      req.write('{');
    });
    expect(['408', 'ECONNRESET', 'socket hang up']).toContain(ended);
    expect(seen).toHaveLength(0);
  });
});

describe('certificates from the directory', () => {
  it('serves a rewritten pair to new connections without a restart, and keeps the old one while the files are wrong', async () => {
    const port = await serve();
    expect(await servedName(port)).toBe('CN=first');
    // The key of another certificate: reported, the old pair kept.
    writeFileSync(join(dir, 'tls.key'), second.key);
    await waitFor(() => reported.find((e) => /not reloaded/.test(e.message)), 'the mismatch to be reported');
    expect(reported.find((e) => /not reloaded/.test(e.message))?.message).toMatch(/key does not match the certificate/);
    expect(await servedName(port)).toBe('CN=first');
    writeFileSync(join(dir, 'tls.crt'), second.cert);
    await waitFor(async () => (await servedName(port)) === 'CN=second', 'the new certificate to be served');
    expect((await send(port, { body: '{}', ca: second.cert })).status).toBe(200);
  });

  it("follows a kubelet Secret volume's swap of its ..data symlink", async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-certs-'));
    const version = (name: string, pair: TlsPair): void => {
      mkdirSync(join(dir, name));
      writePair(join(dir, name), pair);
    };
    version('..v1', first);
    symlinkSync('..v1', join(dir, '..data'));
    symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
    symlinkSync('..data/tls.key', join(dir, 'tls.key'));
    running = start({ controllers: [], webhooks: [echo], webhookBindAddress: '127.0.0.1:0', webhookCertDir: dir, healthProbeBindAddress: '0' });
    const r = running;
    const port = await waitFor(() => {
      const e = r.events.find((x) => x.type === 'serving');
      return e?.type === 'serving' && e.port;
    }, 'the webhook server');
    expect(await servedName(port)).toBe('CN=first');
    version('..v2', second);
    symlinkSync('..v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    await waitFor(async () => (await servedName(port)) === 'CN=second', 'the swapped certificate to be served');
  });

  it('fails the manager at start, naming the directory and the files, when the pair is missing or unusable', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-certs-'));
    running = start({ controllers: [], webhooks: [echo], webhookBindAddress: '127.0.0.1:0', webhookCertDir: dir, healthProbeBindAddress: '0' });
    const missing = await running.end();
    expect(String(missing)).toContain(`no usable serving certificate in ${dir}`);
    expect(String(missing)).toContain(join(dir, 'tls.crt'));
    writeFileSync(join(dir, 'tls.crt'), first.cert);
    writeFileSync(join(dir, 'tls.key'), second.key);
    running = start({ controllers: [], webhooks: [echo], webhookBindAddress: '127.0.0.1:0', webhookCertDir: dir, healthProbeBindAddress: '0' });
    expect(String(await running.end())).toMatch(/key does not match the certificate/);
    running = undefined;
  });
});

describe('webhook options', () => {
  it('certDirPairs checks its directory and poll interval up front', () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-certs-'));
    expect(() => certDirPairs('')).toThrow(/the directory must be a non-empty string, got ""/);
    expect(() => certDirPairs(dir, { pollMs: 0 })).toThrow(/option "pollMs" must be an integer from 1 to 2147483647, got 0/);
    expect(() => certDirPairs(dir, { pollMs: 2 ** 31 })).toThrow(TypeError);
  });

  it('refuse two webhooks on one path, an address without webhooks, and webhooks with no address', () => {
    expect(() => manager({ controllers: [], webhooks: [echo, { ...echo }] })).toThrow(/webhooks\[0\] and webhooks\[1\] both have path "\/validate-echo"/);
    expect(() => manager({ controllers: [], webhooks: [{ ...echo, path: 'validate' }] })).toThrow(/a path starts with "\/"/);
    expect(() => manager({ controllers: [], webhooks: [] })).toThrow(/"controllers", "informers" and "webhooks" are all empty/);
    expect(() => manager({ controllers: [], webhooks: [echo], webhookBindAddress: '0' })).toThrow(/"webhookBindAddress" is "0" but "webhooks" are given/);
    expect(() => manager({ controllers: [], webhooks: [echo], webhookBindAddress: ':8081' })).toThrow(/"webhookBindAddress" and "healthProbeBindAddress" both use port 8081/);
    expect(() => manager({ controllers: [], webhooks: [{ type: 'x', path: '/a', review: echo.review } as unknown as Webhook] })).toThrow(/webhooks\[0\] must be a webhook/);
  });
});
