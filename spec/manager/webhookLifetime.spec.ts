/**
 * WH-61: webhooks are served on every replica whatever its leadership, from the start to the end of the drain.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Webhook } from '../../src/admission/types.js';
import type { TlsPair } from '../../src/manager/certificates/tlsPair.js';
import { leaseLock } from '../../src/leaderelection/leaseLock.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { deployment, deploymentsController, start, type Running } from './harness.js';
import { selfSignedPair } from './tlsFiles.js';

let pair: TlsPair;
let server: ApiServer | undefined;
let dir: string | undefined;
const runs: Running[] = [];
const cleanups: (() => void)[] = [];

beforeAll(() => {
  pair = selfSignedPair('lifetime');
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) c();
  for (const r of runs.splice(0)) await r.stop();
  await server?.close();
  server = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const ok: Webhook = { type: 'validating', path: '/validate-ok', review: () => Promise.resolve({ status: 200, body: { ok: true } }) };

function certDir(): string {
  dir = mkdtempSync(join(tmpdir(), 'rxkube-certs-'));
  writeFileSync(join(dir, 'tls.crt'), pair.cert);
  writeFileSync(join(dir, 'tls.key'), pair.key);
  return dir;
}

function post(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/validate-ok', headers: { 'content-type': 'application/json' }, ca: pair.cert, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

const webhookPort = (r: Running): Promise<number> =>
  waitFor(() => {
    const e = r.events.find((x) => x.type === 'serving' && x.server === 'webhooks');
    return e?.type === 'serving' && e.port;
  }, 'the webhook server');

describe('webhooks and leadership', () => {
  it('are answered by a standby that does not lead, and during the drain until the servers close', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    await s.create('apps/v1/deployments', deployment('web'));
    const lock = leaseLock(s.kubeConfig(), { namespace: 'default', name: 'mgr' });
    const timings = { leaseDuration: 15_000, renewDeadline: 1_000, retryPeriod: 200 };
    const inFlight = deferred();
    const finish = deferred();
    cleanups.push(() => finish.resolve());
    const a = deploymentsController(s, {
      reconcile: async () => {
        inFlight.resolve();
        await finish.promise;
      },
    });
    const dirPath = certDir();
    const leader = start({ controllers: [a.ctl], leaderElection: { lock, identity: 'a', ...timings }, healthProbeBindAddress: '0', webhooks: [ok], webhookBindAddress: '127.0.0.1:0', webhookCertDir: dirPath });
    runs.push(leader);
    await inFlight.promise;

    const b = deploymentsController(s);
    const standby = start({ controllers: [b.ctl], leaderElection: { lock, identity: 'b', ...timings }, healthProbeBindAddress: '0', webhooks: [ok], webhookBindAddress: '127.0.0.1:0', webhookCertDir: dirPath });
    runs.push(standby);
    expect(await post(await webhookPort(standby))).toBe(200);
    expect(standby.events.some((e) => e.type === 'leadership' && e.leading)).toBe(false);

    // The leader drains: its reconcile holds the stop, and its webhooks still answer meanwhile.
    const leaderPort = await webhookPort(leader);
    const ended = leader.stop();
    await waitFor(() => leader.events.find((e) => e.type === 'stopping'), 'the drain to begin');
    expect(await post(leaderPort)).toBe(200);
    finish.resolve();
    expect(await ended).toBe('completed');
    await expect(post(leaderPort)).rejects.toThrow(/ECONNREFUSED/);
  });
});
