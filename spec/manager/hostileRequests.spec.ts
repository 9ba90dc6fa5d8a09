/**
 * The runner's probe and metrics servers given what no kubelet or Prometheus sends, raw over TCP: request-targets
 * WHATWG's URL parser throws on, malformed request lines and headers, odd methods, bodies, early aborts,
 * half-closed sockets, clients that leave before the answer, routes that throw or never answer. Nothing may
 * reject unhandled or throw out of the servers (HI-1…HI-3), and a normal probe answers afterwards.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ManagerMetrics } from '../../src/manager/options.js';
import type { ManagerServerLimits } from '../../src/manager/serverLimits.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { probe, probeUntil } from '../helpers/probe.js';
import { parseResponses, sendRaw, type RawEnding } from '../helpers/rawHttp.js';
import { trapUnhandled } from '../helpers/unhandled.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { deploymentsController, start, type Running } from './harness.js';

let server: ApiServer | undefined;
let running: Running | undefined;
// What escaped to the process: the trap stands in for the exit a real process would take.
const escaped = trapUnhandled();

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await server?.close();
  server = undefined;
});

/** A manager serving probes and metrics on loopback, with `metrics()` answered by `scrape`; resolves the two ports once it is ready. */
async function serve(scrape: ManagerMetrics['metrics'], answerTimeoutMs = 10_000, limits: ManagerServerLimits = {}): Promise<{ probes: number; metrics: number }> {
  server = await startApiServer({ port: 0 });
  const { ctl } = deploymentsController(server);
  running = start({
    controllers: [ctl],
    healthProbeBindAddress: '127.0.0.1:0',
    metrics: { contentType: 'text/plain', metrics: scrape },
    metricsBindAddress: '127.0.0.1:0',
    serverLimits: { answerTimeoutMs, ...limits },
  });
  const r = running;
  const port = (which: 'probes' | 'metrics'): Promise<number> =>
    waitFor(() => {
      const e = r.events.find((x) => x.type === 'serving' && x.server === which);
      return e?.type === 'serving' && e.port;
    }, `the ${which} server`);
  const ports = { probes: await port('probes'), metrics: await port('metrics') };
  await probeUntil(`http://127.0.0.1:${ports.probes}/readyz`, 200, 'sync');
  return ports;
}

const get = (target: string, headers = 'Host: probe\r\n'): string => `GET ${target} HTTP/1.1\r\n${headers}\r\n`;

/** The status of the one answer to `request`, or undefined when the server closed without one. */
async function statusOf(port: number, chunks: readonly (string | Buffer)[], ending: RawEnding = 'end'): Promise<number | undefined> {
  const x = await sendRaw(port, chunks, ending);
  expect(x.closed, 'the server ends the connection once the client has').toBe(true);
  const [first] = parseResponses(x.received);
  return first?.status;
}

async function stillAnswers(ports: { probes: number; metrics: number }): Promise<void> {
  expect((await probe(`http://127.0.0.1:${ports.probes}/healthz`)).status).toBe(200);
  expect((await probe(`http://127.0.0.1:${ports.metrics}/metrics`)).status).toBe(200);
  expect(escaped).toEqual([]);
}

describe('manager servers: request-targets', () => {
  it('answers 400 to a target the URL parser throws on (//[, http://[), on both ports, and stays up', async () => {
    const ports = await serve(async () => 'up 1\n');
    for (const port of [ports.probes, ports.metrics]) {
      expect(await statusOf(port, [get('//[')])).toBe(400);
      expect(await statusOf(port, [get('http://[')])).toBe(400);
      expect(await statusOf(port, [get('http://x:99999/')])).toBe(400);
      // A path of empty segments is a path by RFC 9112, served nowhere; WHATWG's parser took it for a host.
      expect(await statusOf(port, [get('//x:99999/')])).toBe(404);
      expect(await statusOf(port, [get('*')])).toBe(400);
    }
    // Absolute-form is served as its path.
    expect(await statusOf(ports.probes, [get('http://pod:8081/healthz')])).toBe(200);
    await stillAnswers(ports);
  });
});

describe('manager servers: the class', () => {
  it('survives malformed lines, headers, methods, bodies, aborts and half-closed sockets, answering 4xx or closing', async () => {
    const ports = await serve(async () => 'up 1\n');
    const cases: [string, readonly (string | Buffer)[], RawEnding][] = [
      ['no version', ['GET /healthz\r\n\r\n'], 'end'],
      ['an unknown version', ['GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n'], 'end'],
      ['binary', [Buffer.from([0, 1, 2, 0xff, 0xfe, 13, 10, 13, 10])], 'end'],
      ['a header without a colon', ['GET /healthz HTTP/1.1\r\nHost: x\r\nnocolon\r\n\r\n'], 'end'],
      ['a NUL in a header', ['GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n'], 'end'],
      ['no Host', ['GET /healthz HTTP/1.1\r\n\r\n'], 'end'],
      ['headers past maxHeaderBytes', [get('/healthz', `Host: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n`)], 'end'],
      ['an unknown method', ['BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n'], 'end'],
      ['a POST', ['POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc'], 'end'],
      ['CONNECT', ['CONNECT probe:443 HTTP/1.1\r\nHost: probe:443\r\n\r\n'], 'end'],
      ['an upgrade', ['GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'], 'end'],
      ['Expect: 100-continue', ['GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n'], 'end'],
      ['an unknown Expect', ['GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: tea\r\n\r\n'], 'end'],
      ['a GET with a body', ['GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'], 'end'],
      ['a body shorter than its length', ['GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\nabc'], 'end'],
      ['conflicting lengths', ['GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'], 'end'],
      ['a negative length', ['GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'], 'end'],
      ['a broken chunk', ['GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'], 'end'],
      ['chunked and a length', ['GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n'], 'end'],
      ['half a request line', ['GET /hea'], 'end'],
      ['half the headers', ['GET /healthz HTTP/1.1\r\nHost: x\r\nX-'], 'end'],
      ['bytes split across writes', ['G', 'ET /hea', 'lthz HTTP/1.1\r', '\nHost: x\r\n', '\r\n'], 'end'],
      ['pipelined requests', [get('/healthz') + get('/readyz') + get('//[')], 'end'],
      ['an abort mid-request', ['GET /healthz HTTP/1.1\r\nHo'], 'abort'],
      ['an abort right after the request', [get('/healthz')], 'abort'],
      ['control characters in the target', ['GET /\u001b[2J HTTP/1.1\r\nHost: x\r\n\r\n'], 'end'],
    ];
    for (const port of [ports.probes, ports.metrics]) {
      for (const [what, chunks, ending] of cases) {
        const x = await sendRaw(port, chunks, ending);
        expect(x.closed, what).toBe(true);
        let statuses: number[] = [];
        expect(() => (statuses = parseResponses(x.received).map((r) => r.status)), `${what}: ${JSON.stringify(x.received.toString('latin1'))}`).not.toThrow();
        for (const s of statuses) expect(s < 500, `${what}: ${statuses.join(', ')}`).toBe(true);
        expect(escaped, what).toEqual([]);
      }
    }
    await stillAnswers(ports);
  });

  it('answers 503 for a route that never answers, 500 for one that throws, and writes nothing after the client left', async () => {
    let next: 'hang' | 'throw' | 'late' | 'ok' = 'ok';
    let lateAsked = false;
    const late = deferred<string>();
    const ports = await serve(() => {
      if (next === 'hang') return new Promise<string>(() => undefined);
      if (next === 'throw') return Promise.reject(new Error('collector \u001b]52;c;broke\u0007'));
      if (next === 'late') {
        lateAsked = true;
        return late.promise;
      }
      return Promise.resolve('up 1\n');
    }, 300);

    // Connection: close, so the server ends the connection once it answered (a half-close would abort the request).
    const once = get('/metrics', 'Host: x\r\nConnection: close\r\n');
    next = 'hang';
    const hung = await sendRaw(ports.metrics, [once], 'open');
    expect(parseResponses(hung.received)[0]).toMatchObject({ status: 503, body: 'no answer within 300 ms\n' });

    next = 'throw';
    const threw = parseResponses((await sendRaw(ports.metrics, [once], 'open')).received)[0];
    expect(threw?.status).toBe(500);
    // The error is named, its control characters escaped.
    expect(threw?.body).toBe('Error: collector \\x1b]52;c;broke\\x07\n');

    // The client leaves once the route is asked; the answer comes after its socket is gone.
    next = 'late';
    const client = connect({ port: ports.metrics, host: '127.0.0.1' });
    client.on('error', () => undefined);
    client.write(once);
    await waitFor(() => lateAsked, 'the route to be asked');
    client.destroy();
    next = 'ok';
    // A request on a new connection is answered after the server read the reset of the one before.
    expect((await probe(`http://127.0.0.1:${ports.metrics}/metrics`)).status).toBe(200);
    late.resolve('late 1\n');
    await stillAnswers(ports);
  });

  it('answers the pipelined requests of one connection one at a time: the route is never called twice at once for it', async () => {
    // Each scrape waits until the spec answers it; `most` is the most calls in flight at once.
    const pending: ((text: string) => void)[] = [];
    let most = 0;
    const ports = await serve(
      () =>
        new Promise<string>((resolve) => {
          pending.push(resolve);
          most = Math.max(most, pending.length);
        }),
    );
    const client = connect({ port: ports.metrics, host: '127.0.0.1' });
    client.on('error', () => undefined);
    let received = Buffer.alloc(0);
    client.on('data', (d: Buffer) => (received = Buffer.concat([received, d])));
    // Twenty requests in one write: Node's parser hands them all to the server at once.
    client.write(get('/metrics').repeat(20));
    for (let i = 1; i <= 20; i++) {
      await waitFor(() => pending.length > 0, `scrape ${i} to be asked`);
      pending.shift()?.(`n ${i}\n`);
      await waitFor(() => parseResponses(received).length === i, `answer ${i}`);
    }
    client.destroy();
    expect(parseResponses(received).map((r) => r.body)).toEqual(Array.from({ length: 20 }, (_, i) => `n ${i + 1}\n`));
    expect(most).toBe(1);
  });

  it('answers 408 to headers that come too slowly, or not at all, and closes the connection', async () => {
    const ports = await serve(async () => 'up 1\n', 10_000, { headersTimeoutMs: 300, requestTimeoutMs: 1_000, idleTimeoutMs: 2_000 });
    const slow = await sendRaw(ports.probes, ['GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: '], 'open');
    expect(slow.closed).toBe(true);
    expect(parseResponses(slow.received).map((r) => r.status)).toEqual([408]);
    const silent = await sendRaw(ports.metrics, [], 'open');
    expect(silent.closed).toBe(true);
    expect(parseResponses(silent.received).map((r) => r.status)).toEqual([408]);
    await stillAnswers(ports);
  });
});
