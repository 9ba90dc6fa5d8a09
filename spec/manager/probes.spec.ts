/**
 * The manager's probes on the simulator, over real HTTP: /readyz waits for the caches, /healthz names an
 * informer that went deaf (a silent or failing watch) and a stuck reconcile, and both recover.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer, type Churn } from '../../src/testing/index.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { probe, probeUntil } from '../helpers/probe.js';
import { deployment, deploymentsController, start, type Running } from './harness.js';

let server: ApiServer | undefined;
let running: Running | undefined;
let churn: Churn | undefined;

afterEach(async () => {
  churn?.stop();
  churn = undefined;
  await running?.stop();
  running = undefined;
  await server?.close();
  server = undefined;
});

/** A simulator whose resourceVersion keeps moving (writes to secrets), so every quiet watch gets a bookmark every 50 ms. */
async function liveServer(): Promise<ApiServer> {
  const s = await startApiServer({ port: 0, bookmarkIntervalMs: 50 });
  churn = s.churn({ resource: 'v1/secrets', creates: 1, updates: 10_000_000, perSecond: 100, seed: 3 });
  return s;
}

describe('manager: /readyz', () => {
  it('answers 503 naming the informer that cannot list and the controller waiting for it, then 200 once synced', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    await s.create('apps/v1/deployments', deployment('web'));
    s.faults.inject({ type: 'status', status: 503, message: 'etcd is sulking' }, { verb: 'list', resource: 'apps/v1/deployments', times: 1_000 });
    const { ctl } = deploymentsController(s);
    running = start({ controllers: [ctl], healthProbeBindAddress: '127.0.0.1:0' });
    const base = await running.probes();

    const { body } = await probeUntil(`${base}/readyz?verbose`, 503, 'a failed list to be reported', { body: /etcd is sulking/ });
    expect(body).toMatch(/^\[-\]informer apps\/v1\/deployments failed: not synced: .*503.*etcd is sulking/m);
    expect(body).toMatch(/^\[\+\]informer v1\/configmaps ok$/m);
    expect(body).toMatch(/^\[-\]controller apps\/v1\/deployments failed: waiting for its informers to sync$/m);
    expect(body).toMatch(/readyz check failed\n$/);
    // Not synced is not unhealthy: a pod still listing is not restarted.
    expect((await probe(`${base}/healthz`)).status).toBe(200);

    s.faults.clear();
    const ready = await probeUntil(`${base}/readyz`, 200, 'the caches to sync');
    expect(ready.body).toMatch(/^\[\+\]informer apps\/v1\/deployments ok$/m);
    expect(ready.body).toMatch(/^\[\+\]controller apps\/v1\/deployments ok$/m);
    expect(ready.body).toMatch(/readyz check passed\n$/);
    // Ready says the controller runs; its first reconcile ends a moment later.
    const reconciled = await waitFor(() => running?.events.find((e) => e.type === 'reconcile'), 'the first reconcile');
    expect(reconciled).toMatchObject({ controller: 'apps/v1/deployments', outcome: { type: 'reconciled', key: 'default/web' } });
  });
});

describe('manager: /healthz', () => {
  it('turns 503 naming the informer whose watch went silent, and 200 again once a watch is heard', async () => {
    const s = await liveServer();
    server = s;
    const { ctl } = deploymentsController(s);
    running = start({ controllers: [ctl], healthProbeBindAddress: '127.0.0.1:0', maxSilenceMs: 600 });
    const base = await running.probes();
    await probeUntil(`${base}/readyz`, 200, 'sync');
    await probeUntil(`${base}/healthz`, 200, 'a healthy start');

    // Every deployments watch from now on opens and then says nothing; the open one is ended so a silent one follows.
    s.faults.inject({ type: 'silentWatch' }, { verb: 'watch', resource: 'apps/v1/deployments', times: 1_000 });
    s.faults.closeWatches();
    const deaf = await probeUntil(`${base}/healthz?verbose`, 503, 'the silence to pass the limit');
    expect(deaf.body).toMatch(/^\[-\]informer apps\/v1\/deployments failed: not shown current by a watch event, bookmark or list for \d+\.\d s \(limit 0\.6 s\): watching from resourceVersion \d+/m);
    expect(deaf.body).toMatch(/^\[\+\]informer v1\/configmaps ok$/m);
    expect(deaf.body).toMatch(/healthz check failed\n$/);
    // The same answer on /livez.
    expect((await probe(`${base}/livez`)).status).toBe(503);

    s.faults.clear();
    s.faults.closeWatches();
    const healed = await probeUntil(`${base}/healthz`, 200, 'a watch that is heard again');
    expect(healed.body).toMatch(/^\[\+\]informer apps\/v1\/deployments ok$/m);
  });

  it('turns 503 with the error when every watch and list fails, and 200 once they work again', async () => {
    const s = await liveServer();
    server = s;
    const { ctl, errors } = deploymentsController(s);
    running = start({ controllers: [ctl], healthProbeBindAddress: '127.0.0.1:0', maxSilenceMs: 600 });
    const base = await running.probes();
    await probeUntil(`${base}/healthz`, 200, 'a healthy start');
    await probeUntil(`${base}/readyz`, 200, 'sync');

    // Relists that succeed keep the cache current (HI-57); here nothing does.
    s.faults.inject({ type: 'status', status: 500, message: 'watch cache is broken' }, { verb: 'watch', resource: 'v1/configmaps', times: 1_000_000 });
    s.faults.inject({ type: 'status', status: 500, message: 'watch cache is broken' }, { verb: 'list', resource: 'v1/configmaps', times: 1_000_000 });
    s.faults.closeWatches();
    const failing = await probeUntil(`${base}/healthz?verbose`, 503, 'failing watches and lists to pass the limit');
    expect(failing.body).toMatch(/^\[-\]informer v1\/configmaps failed: not shown current by a watch event, bookmark or list for [\d.]+ s \(limit 0\.6 s\): .*watch cache is broken/m);
    expect(failing.body).toMatch(/^\[\+\]informer apps\/v1\/deployments ok$/m);
    expect(errors.some((e) => e.message.includes('watch cache is broken'))).toBe(true);
    // Still synced: failing watches do not take the pod out of its Services, they get it restarted.
    expect((await probe(`${base}/readyz`)).status).toBe(200);

    s.faults.clear();
    await probeUntil(`${base}/healthz`, 200, 'working watches again');
  });

  it('turns 503 naming the controller and the key whose reconcile is stuck past its timeout, and 200 once it ends', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    await s.create('apps/v1/deployments', deployment('hung'));
    await s.create('apps/v1/deployments', deployment('fine'));
    const hang = deferred();
    const { ctl } = deploymentsController(s, {
      concurrency: 2,
      reconcileTimeoutMs: 100,
      // Ignores its signal: a worker that will not give up.
      reconcile: (d) => (d.metadata?.name === 'hung' ? hang.promise.then(() => undefined) : undefined),
    });
    running = start({ controllers: [ctl], healthProbeBindAddress: '127.0.0.1:0' });
    const base = await running.probes();
    const stuck = await probeUntil(`${base}/healthz?verbose`, 503, 'the reconcile to pass its timeout');
    expect(stuck.body).toMatch(/^\[-\]controller apps\/v1\/deployments failed: reconcile stuck past reconcileTimeoutMs: default\/hung$/m);
    expect(stuck.body).not.toMatch(/default\/fine/);
    hang.resolve();
    await probeUntil(`${base}/healthz`, 200, 'the stuck reconcile to end');
  });

  it('serves only GET and HEAD on known paths', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    const { ctl } = deploymentsController(s);
    running = start({ controllers: [ctl], healthProbeBindAddress: '127.0.0.1:0' });
    const base = await running.probes();
    expect((await probe(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`, { method: 'POST' })).status).toBe(405);
    const head = await fetch(`${base}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });
});
