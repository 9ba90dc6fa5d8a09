/**
 * Secure metrics (WH-80…WH-83): /metrics over HTTPS, each scrape's bearer token reviewed by the simulator's
 * TokenReview and SubjectAccessReview, the answers cached within bounds, an unreachable API server a 500.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setErrorReporter } from '../../src/errors/reportError.js';
import type { TlsPair } from '../../src/manager/certificates/tlsPair.js';
import type { ManagerMetricsSecure } from '../../src/manager/servingOptions.js';
import { startApiServer, type AccessAttributes, type ApiServer } from '../../src/testing/index.js';
import { startHostileServer, type HostileServer } from '../helpers/hostileServer.js';
import { trapUnhandled } from '../helpers/unhandled.js';
import { waitFor } from '../helpers/waitFor.js';
import { deploymentsController, start, type Running } from './harness.js';
import { selfSignedPair } from './tlsFiles.js';

const escaped = trapUnhandled();
const PROMETHEUS = 'system:serviceaccount:monitoring:prometheus';
let pair: TlsPair;
let server: ApiServer | undefined;
let running: Running | undefined;
let dir: string | undefined;
const reported: Error[] = [];
/** Every SubjectAccessReview the simulator was asked, in order. */
const asked: AccessAttributes[] = [];

beforeAll(() => {
  pair = selfSignedPair('metrics');
});
afterEach(async () => {
  await running?.stop();
  running = undefined;
  await server?.close();
  server = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  setErrorReporter(undefined);
  reported.length = 0;
  asked.length = 0;
  expect(escaped).toEqual([]);
});

/** A simulator knowing prometheus (allowed /metrics), nobody (not allowed) and three readers; a manager serving secure metrics; resolves the metrics port. */
async function serve(secure: Partial<ManagerMetricsSecure> = {}, withCertDir = true): Promise<number> {
  setErrorReporter((err) => void reported.push(err as Error));
  server = await startApiServer({
    port: 0,
    token: 'admin-token',
    users: [
      { token: 'prometheus-token', username: PROMETHEUS, groups: ['system:serviceaccounts'] },
      { token: 'nobody-token', username: 'system:serviceaccount:default:nobody' },
      ...['r1', 'r2', 'r3'].map((r) => ({ token: `${r}-token`, username: `reader-${r}` })),
    ],
    authorize: (a) => {
      asked.push(a);
      return a.nonResourceAttributes?.path === '/metrics' && a.nonResourceAttributes.verb === 'get' && (a.user === PROMETHEUS || a.user.startsWith('reader-'));
    },
  });
  if (withCertDir) {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-metrics-certs-'));
    writeFileSync(join(dir, 'tls.crt'), pair.cert);
    writeFileSync(join(dir, 'tls.key'), pair.key);
  }
  const { ctl } = deploymentsController(server);
  running = start({
    controllers: [ctl],
    healthProbeBindAddress: '0',
    metrics: { contentType: 'text/plain; version=0.0.4', metrics: () => Promise.resolve('up 1\n') },
    metricsBindAddress: '127.0.0.1:0',
    metricsSecure: { kubeConfig: server.kubeConfig(), ...(dir !== undefined && { certDir: dir }), ...secure },
  });
  const r = running;
  return waitFor(() => {
    const e = r.events.find((x) => x.type === 'serving' && x.server === 'metrics');
    return e?.type === 'serving' && e.port;
  }, 'the metrics server', 10_000, { describe: () => String(r.ended) });
}

interface Reply {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly cert: X509Certificate | undefined;
}

function scrape(port: number, token: string | undefined, trust: 'ca' | 'any' = 'ca', path = '/metrics'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
        agent: false,
        ...(trust === 'ca' ? { ca: pair.cert } : { rejectUnauthorized: false }),
      },
      (res) => {
        const raw = (res.socket as import('node:tls').TLSSocket).getPeerX509Certificate();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers, cert: raw }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('secure metrics against an API server that answers what none would', () => {
  let hostile: HostileServer | undefined;
  afterEach(async () => {
    await hostile?.close();
    hostile = undefined;
  });

  /** A manager serving only secure metrics (and a webhook, to have something to run) against `hostile`. */
  async function serveAgainst(h: HostileServer, reviewTimeoutMs?: number): Promise<number> {
    setErrorReporter((err) => void reported.push(err as Error));
    dir = mkdtempSync(join(tmpdir(), 'rxkube-metrics-certs-'));
    writeFileSync(join(dir, 'tls.crt'), pair.cert);
    writeFileSync(join(dir, 'tls.key'), pair.key);
    running = start({
      controllers: [],
      webhooks: [{ type: 'conversion', path: '/convert', review: () => Promise.resolve({ status: 200, body: {} }) }],
      webhookBindAddress: '127.0.0.1:0',
      webhookCertDir: dir,
      healthProbeBindAddress: '0',
      metrics: { contentType: 'text/plain', metrics: () => Promise.resolve('up 1\n') },
      metricsBindAddress: '127.0.0.1:0',
      metricsSecure: { kubeConfig: h.kubeConfig(), certDir: dir, ...(reviewTimeoutMs !== undefined && { reviewTimeoutMs }) },
    });
    const r = running;
    return waitFor(() => {
      const e = r.events.find((x) => x.type === 'serving' && x.server === 'metrics');
      return e?.type === 'serving' && e.port;
    }, 'the metrics server');
  }

  it('stops a review when the scraper leaves, without reporting it', async () => {
    hostile = await startHostileServer(() => undefined); // never answers
    const h = hostile;
    // A review bound far beyond the wait: only the scraper leaving can end the review in time.
    const port = await serveAgainst(h, 2 ** 31 - 1);
    const req = request({ host: '127.0.0.1', port, path: '/metrics', headers: { authorization: 'Bearer slow-token' }, ca: pair.cert, agent: false });
    req.on('error', () => undefined);
    req.end();
    await waitFor(() => h.requests === 1 && h.open === 1, 'the TokenReview to be sent');
    req.destroy();
    await waitFor(() => h.open === 0, 'the TokenReview to be given up');
    expect(reported).toEqual([]);
  });

  it('takes only a true `allowed` and a string username, escapes what it names, and answers 500 to what is not JSON', async () => {
    hostile = await startHostileServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.includes('tokenreviews')) {
        res.end(JSON.stringify({ status: { authenticated: true, user: { username: 'eve\u001b[2J', groups: 'admins', extra: { a: 1 } } } }));
      } else res.end(JSON.stringify({ status: { allowed: 'yes' } }));
    });
    const port = await serveAgainst(hostile);
    const denied = await scrape(port, 'any-token');
    expect(denied.status).toBe(403);
    expect(denied.body).not.toContain('\u001b');
    expect(denied.body).toContain('eve');
    hostile.handle((_req, res) => void res.end('<html>proxy error</html>'));
    const broken = await scrape(port, 'another-token');
    expect(broken.status).toBe(500);
    hostile.handle((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url?.includes('tokenreviews') ? { status: { authenticated: true, user: { username: 42 } } } : { status: { allowed: true } }));
    });
    expect((await scrape(port, 'third-token')).status).toBe(401);
  });
  it('tries a review once more after a 5xx, within reviewTimeoutMs, and not after a refusal (WH-91)', async () => {
    let failures = 1;
    const paths: string[] = [];
    hostile = await startHostileServer((req, res) => {
      paths.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      if (failures > 0) {
        failures--;
        res.statusCode = 503;
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 503, message: 'etcd leader changed' }));
      } else if (req.url?.includes('tokenreviews')) res.end(JSON.stringify({ status: { authenticated: true, user: { username: 'prometheus' } } }));
      else res.end(JSON.stringify({ status: { allowed: true } }));
    });
    const port = await serveAgainst(hostile);
    expect((await scrape(port, 'flaky-token')).status).toBe(200);
    expect(paths.map((p) => p.split('/').pop())).toEqual(['tokenreviews', 'tokenreviews', 'subjectaccessreviews']);
    // A 403 from the API server (no auth delegation) will not change on a second try.
    paths.length = 0;
    hostile.handle((req, res) => {
      paths.push(req.url ?? '');
      res.statusCode = 403;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'forbidden' }));
    });
    expect((await scrape(port, 'other-token')).status).toBe(500);
    expect(paths).toHaveLength(1);
  });

  it('tells the caller only that a review failed, and reports which one and why (WH-88)', async () => {
    const forbidden = 'tokenreviews.authentication.k8s.io is forbidden: User "system:serviceaccount:ops:manager" cannot create resource "tokenreviews"';
    hostile = await startHostileServer((_req, res) => {
      res.statusCode = 403;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: forbidden }));
    });
    const h = hostile;
    const port = await serveAgainst(h);
    const authn = await scrape(port, 'any-token');
    expect(authn).toMatchObject({ status: 500, body: 'Authentication failed\n' });
    await waitFor(() => reported.find((e) => e.message.includes('system:serviceaccount:ops:manager')), 'the TokenReview failure to be reported');
    expect(reported.find((e) => e.message.includes('system:serviceaccount:ops:manager'))?.message).toMatch(/secure metrics: Authentication failed: the TokenReview could not be made/);
    h.handle((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.includes('tokenreviews')) res.end(JSON.stringify({ status: { authenticated: true, user: { username: 'prometheus' } } }));
      else {
        res.statusCode = 503;
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 503, message: 'etcd leader changed' }));
      }
    });
    const authz = await scrape(port, 'other-token');
    expect(authz).toMatchObject({ status: 500, body: 'Authorization failed\n' });
    await waitFor(() => reported.find((e) => /Authorization for user prometheus failed/.test(e.message)), 'the SubjectAccessReview failure to be reported');
  });
});

describe('secure metrics', () => {
  it('answer 401 without a token or with one the TokenReview does not know, 403 to a user not allowed, and the text to one allowed', async () => {
    const port = await serve();
    const none = await scrape(port, undefined);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect((await scrape(port, 'made-up-token')).status).toBe(401);
    const nobody = await scrape(port, 'nobody-token');
    expect(nobody.status).toBe(403);
    expect(nobody.body).toContain('Authorization denied for user system:serviceaccount:default:nobody');
    const prometheus = await scrape(port, 'prometheus-token');
    expect(prometheus).toMatchObject({ status: 200, body: 'up 1\n' });
    expect(asked.find((a) => a.user === PROMETHEUS)).toMatchObject({ nonResourceAttributes: { path: '/metrics', verb: 'get' }, groups: expect.arrayContaining(['system:serviceaccounts']) });
    // Other paths and methods are refused before any review.
    const before = asked.length;
    expect((await scrape(port, 'prometheus-token', 'ca', '/debug')).status).toBe(404);
    expect(asked.length).toBe(before);
  });

  it('keep the answers for a while, so a scrape every few seconds asks the API server nothing', async () => {
    const port = await serve();
    for (let i = 0; i < 3; i++) expect((await scrape(port, 'prometheus-token')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await scrape(port, 'nobody-token')).status).toBe(403);
    expect(asked.map((a) => a.user)).toEqual([PROMETHEUS, 'system:serviceaccount:default:nobody']);
  });

  it('keep at most cacheSize answers, dropping the oldest', async () => {
    const port = await serve({ cacheSize: 2 });
    for (const r of ['r1', 'r2', 'r3', 'r1']) expect((await scrape(port, `${r}-token`)).status).toBe(200);
    expect(asked.map((a) => a.user)).toEqual(['reader-r1', 'reader-r2', 'reader-r3', 'reader-r1']);
  });

  it('answer 500, not 401, when the API server cannot be reached, and report it; a cached answer still serves', async () => {
    const port = await serve();
    expect((await scrape(port, 'prometheus-token')).status).toBe(200);
    await server?.close();
    server = undefined;
    const down = await scrape(port, 'nobody-token');
    expect(down.status).toBe(500);
    expect(down.body).toBe('Authentication failed\n');
    await waitFor(() => reported.find((e) => /secure metrics: Authentication failed/.test(e.message)), 'the failure to be reported');
    expect((await scrape(port, 'prometheus-token')).status).toBe(200);
  });

  it('serve a self-signed certificate made in memory when no certDir is given', async () => {
    const port = await serve({}, false);
    const reply = await scrape(port, 'prometheus-token', 'any');
    expect(reply.status).toBe(200);
    expect(reply.cert?.subjectAltName).toContain('DNS:localhost');
    expect(reply.cert?.subjectAltName).toContain('IP Address:127.0.0.1');
  });
});
