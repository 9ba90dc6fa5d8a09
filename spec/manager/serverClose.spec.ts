/**
 * Closing a server of the runner ends every connection it holds, HTTP or not yet (WH-86), and a TLS server that
 * could not start lets go of its port (WH-87).
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { of, Subject } from 'rxjs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Webhook } from '../../src/admission/types.js';
import type { TlsPair } from '../../src/manager/certificates/tlsPair.js';
import { resolveServerLimits } from '../../src/manager/serverLimits.js';
import { listenWebhooks } from '../../src/manager/webhookServer.js';
import { listenTls } from '../../src/manager/servers.js';
import { trapUnhandled } from '../helpers/unhandled.js';
import { waitFor } from '../helpers/waitFor.js';
import { selfSignedPair } from './tlsFiles.js';

const escaped = trapUnhandled();
let pair: TlsPair;
const sockets: Socket[] = [];

beforeAll(() => {
  pair = selfSignedPair('close');
});
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  expect(escaped).toEqual([]);
});

const echo: Webhook = { type: 'validating', path: '/validate-echo', review: (body) => Promise.resolve({ status: 200, body: { echoed: body } }) };

/** A TCP connection to `port` that has sent `bytes` (maybe none); resolves once connected, with whether the server ended it. */
async function raw(port: number, bytes: string): Promise<{ ended: () => boolean }> {
  let ended = false;
  const s = await new Promise<Socket>((resolve, reject) => {
    const c = tcpConnect(port, '127.0.0.1', () => resolve(c));
    c.once('error', reject);
  });
  sockets.push(s);
  s.on('error', () => undefined);
  s.on('data', () => undefined);
  s.on('close', () => (ended = true));
  if (bytes !== '') s.write(bytes, 'latin1');
  return { ended: () => ended };
}

function post(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: echo.path, headers: { 'content-type': 'application/json' }, ca: pair.cert, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

describe('closing a TLS server', () => {
  it('ends connections that never sent a byte or are mid-handshake, rather than waiting for them to time out', async () => {
    // Timeouts far past the wait below: only the close itself can end these connections.
    const limits = resolveServerLimits({ headersTimeoutMs: 600_000, requestTimeoutMs: 600_000, idleTimeoutMs: 600_000 });
    const server = await listenWebhooks({ host: '127.0.0.1', port: 0 }, [echo], of(pair), limits);
    const silent = await raw(server.port, '');
    const handshaking = await raw(server.port, '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u01fc\u0003\u0003');
    // A request answered after them: the server has taken both connections in by then.
    expect(await post(server.port)).toBe(200);
    expect([silent.ended(), handshaking.ended()]).toEqual([false, false]);
    let closed = false;
    void server.close().then(() => (closed = true));
    await waitFor(() => closed, 'close() to resolve');
    await waitFor(() => silent.ended() && handshaking.ended(), 'both connections to be ended by the server');
  });
});

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Whether something accepts a TCP connection on `port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = tcpConnect(port, '127.0.0.1', () => {
      c.destroy();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  });
}

describe('a TLS server that cannot start', () => {
  it('lets go of its port when its certificates fail while it binds', async () => {
    const port = await freePort();
    const pairs = new Subject<TlsPair>();
    const started = listenTls('webhook', { host: '127.0.0.1', port }, pairs, resolveServerLimits(undefined), (_req, res) => res.end());
    pairs.next(pair);
    pairs.error(new Error('the Secret informer failed for good'));
    await expect(started).rejects.toThrow(/the Secret informer failed for good/);
    await waitFor(async () => !(await accepts(port)), 'the port to be let go');
  });
});
