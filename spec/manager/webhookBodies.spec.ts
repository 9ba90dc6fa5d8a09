/**
 * What the webhook server holds of request bodies over all its connections (WH-84) and which connections its cap
 * may push out while their bodies arrive (WH-85).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { of } from 'rxjs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Webhook } from '../../src/admission/types.js';
import type { TlsPair } from '../../src/manager/certificates/tlsPair.js';
import { resolveServerLimits, type ManagerServerLimits } from '../../src/manager/serverLimits.js';
import { WebhookRecorder } from '../../src/manager/webhookMetrics.js';
import { listenWebhooks } from '../../src/manager/webhookServer.js';
import type { Listening } from '../../src/manager/servers.js';
import { manager } from '../../src/manager/manager.js';
import { trapUnhandled } from '../helpers/unhandled.js';
import { waitFor } from '../helpers/waitFor.js';
import { start, type Running } from './harness.js';
import { selfSignedPair } from './tlsFiles.js';

const escaped = trapUnhandled();
let pair: TlsPair;
let dir: string | undefined;
let running: Running | undefined;
let server: Listening | undefined;
const open: TLSSocket[] = [];

beforeAll(() => {
  pair = selfSignedPair('bodies');
});

afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  await running?.stop();
  running = undefined;
  await server?.close();
  server = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  expect(escaped).toEqual([]);
});

const echo: Webhook = { type: 'validating', path: '/validate-echo', review: (body) => Promise.resolve({ status: 200, body: { echoed: body } }) };

async function serve(serverLimits: ManagerServerLimits): Promise<number> {
  dir = mkdtempSync(join(tmpdir(), 'rxkube-certs-'));
  writeFileSync(join(dir, 'tls.crt'), pair.cert);
  writeFileSync(join(dir, 'tls.key'), pair.key);
  running = start({ controllers: [], webhooks: [echo], webhookBindAddress: '127.0.0.1:0', webhookCertDir: dir, healthProbeBindAddress: '0', serverLimits });
  const r = running;
  return waitFor(() => {
    const e = r.events.find((x) => x.type === 'serving' && x.server === 'webhooks');
    return e?.type === 'serving' && e.port;
  }, 'the webhook server', 10_000, { describe: () => String(r.ended) });
}

interface Reply {
  readonly status: number;
  readonly connection: string | undefined;
}

/** One POST of `body` on a new connection. */
function post(port: number, body: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/validate-echo', headers: { 'content-type': 'application/json' }, ca: pair.cert, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A connection that sent the headers of a POST announcing `length` bytes and the first part of its body; the answer's status line once one comes. */
async function partial(port: number, length: number, first: string): Promise<{ socket: TLSSocket; status: Promise<string> }> {
  const socket = await new Promise<TLSSocket>((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, ca: pair.cert }, () => resolve(s));
    s.once('error', reject);
  });
  socket.on('error', () => undefined);
  open.push(socket);
  let got = '';
  const status = new Promise<string>((resolve) => {
    socket.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      if (got.includes('\r\n')) resolve(got.split('\r\n', 1)[0] ?? '');
    });
    socket.on('close', () => resolve(got.split('\r\n', 1)[0] ?? ''));
  });
  socket.write(`POST /validate-echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${first}`);
  return { socket, status };
}

describe('the bodies the webhook server holds', () => {
  it('refuses a request with 503 and Connection: close while partial bodies fill the budget, and still answers those once they finish', async () => {
    const port = await serve({ maxBodyBytes: 1_000, maxBufferedBodyBytes: 2_500 });
    const body = JSON.stringify({ pad: 'x'.repeat(890) }); // 900 bytes
    expect(body).toHaveLength(900);
    const held = await Promise.all([0, 1, 2].map(() => partial(port, 900, body.slice(0, 800))));
    // 2,400 bytes held: a next body of 200 does not fit, once the server has read the parts sent.
    const small = JSON.stringify({ pad: 'y'.repeat(190) });
    const refused = await waitFor(async () => {
      const r = await post(port, small);
      return r.status === 503 && r;
    }, 'a request to be refused for the bodies held');
    expect(refused.connection).toBe('close');
    for (const h of held) h.socket.write(body.slice(800));
    expect(await Promise.all(held.map((h) => h.status))).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    // Answered, they gave their bytes back.
    expect((await post(port, small)).status).toBe(200);
  });

  it('answers 408 and ends the connection when the body is not all there within headersTimeoutMs (WH-90)', async () => {
    // The request and idle timeouts far past the wait: only the body's own bound can answer.
    const port = await serve({ headersTimeoutMs: 200, requestTimeoutMs: 600_000, idleTimeoutMs: 600_000 });
    const slow = await partial(port, 100, '{');
    let line: string | undefined;
    void slow.status.then((l) => (line = l));
    expect(await waitFor(() => line, 'an answer to the unfinished body')).toBe('HTTP/1.1 408 Request Timeout');
    await waitFor(() => slow.socket.destroyed || slow.socket.readableEnded, 'the connection to end');
    expect((await post(port, '{}')).status).toBe(200);
  });

  it('checks maxBufferedBodyBytes against maxBodyBytes, and raises its default to fit one body', () => {
    expect(() => manager({ controllers: [], webhooks: [echo], serverLimits: { maxBodyBytes: 1_000, maxBufferedBodyBytes: 999 } })).toThrow(
      /option "serverLimits.maxBufferedBodyBytes" \(999\) must not be less than "serverLimits.maxBodyBytes" \(1000\)/,
    );
    expect(() => manager({ controllers: [], webhooks: [echo], serverLimits: { maxBodyBytes: 64 * 1024 * 1024 } })).not.toThrow();
    expect(() => manager({ controllers: [], webhooks: [echo], serverLimits: { maxBufferedBodyBytes: 0 } })).toThrow(/"serverLimits.maxBufferedBodyBytes" must be an integer >= 1, got 0/);
  });
});

describe('the connection cap while bodies arrive', () => {
  it('pushes out the oldest connection still sending its body, so a request past the cap is answered', async () => {
    const recorder = new WebhookRecorder([echo.path]);
    server = await listenWebhooks({ host: '127.0.0.1', port: 0 }, [echo], of(pair), resolveServerLimits({ maxConnections: 3 }), recorder);
    const port = server.port;
    const trickling = [];
    for (let i = 0; i < 3; i++) trickling.push(await partial(port, 100_000, '{'));
    // Each is a request the server is reading the body of.
    await waitFor(() => recorder.snapshot().webhooks[0]?.inFlight === 3, 'the three uploads to be under way');
    expect((await post(port, '{}')).status).toBe(200);
    // The oldest upload made room; its client sees the connection end without an answer.
    expect(await trickling[0]?.status).toBe('');
    expect(trickling.slice(1).map((t) => t.socket.destroyed)).toEqual([false, false]);
  });
});
