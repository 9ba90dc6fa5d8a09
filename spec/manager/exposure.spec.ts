/**
 * What the runner's servers tell whoever reaches them: the address really bound (HI-9), probe bodies with
 * names and states only unless `?verbose` is asked, and never a raw control character (HI-8); and /healthz
 * judging an informer that never synced, after `maxInitialSyncMs` (HI-13).
 */
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { probe, probeUntil } from '../helpers/probe.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { deployment, deploymentsController, start, type Running } from './harness.js';

let server: ApiServer | undefined;
let running: Running | undefined;

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await server?.close();
  server = undefined;
});

const serving = (r: Running, which: 'probes' | 'metrics') =>
  waitFor(() => {
    const e = r.events.find((x) => x.type === 'serving' && x.server === which);
    return e?.type === 'serving' ? e : undefined;
  }, `the ${which} server`);

describe('manager: the address bound', () => {
  it('reports every interface when it binds every interface, and loopback only when asked for it', async () => {
    server = await startApiServer({ port: 0 });
    const { ctl } = deploymentsController(server);
    running = start({ controllers: [ctl], healthProbeBindAddress: ':0', metrics: { contentType: 'text/plain', metrics: async () => '' }, metricsBindAddress: '127.0.0.1:0' });
    const probes = await serving(running, 'probes');
    // The unspecified address of either family: the kubelet reaches it on the pod IP.
    expect(['::', '0.0.0.0']).toContain(probes.address);
    expect(probes.url).toBe(`http://127.0.0.1:${probes.port}`);
    expect((await probe(`${probes.url}/livez`)).status).toBe(200);
    const metrics = await serving(running, 'metrics');
    expect(metrics.address).toBe('127.0.0.1');
  });
});

describe('manager: probe bodies', () => {
  it('name checks and states by default, give the reason only with ?verbose, and never a raw control character', async () => {
    server = await startApiServer({ port: 0 });
    await server.create('apps/v1/deployments', deployment('web'));
    const refusal = 'deployments.apps is forbidden: User "system:serviceaccount:ops:ctl" cannot list \u001b]0;pwned\u0007\u009b2J';
    server.faults.inject({ type: 'status', status: 403, message: refusal }, { verb: 'list', resource: 'apps/v1/deployments', times: 1_000 });
    const hang = deferred();
    const { ctl, configMaps } = deploymentsController(server, { reconcileTimeoutMs: 100, reconcile: () => hang.promise.then(() => undefined) });
    running = start({ controllers: [ctl], healthProbeBindAddress: '127.0.0.1:0' });
    const base = (await serving(running, 'probes')).url;

    const verbose = await probeUntil(`${base}/readyz?verbose`, 503, 'the 403 to be reported', { body: /forbidden/ });
    expect(verbose.body).toMatch(/^\[-\]informer apps\/v1\/deployments failed: not synced: .*system:serviceaccount:ops:ctl/m);
    expect(verbose.body).toContain('\\x1b]0;pwned\\x07\\u009b2J');
    expect(verbose.body).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);

    await waitFor(() => configMaps.status().synced, 'the configmaps to sync');
    const terse = await probe(`${base}/readyz`);
    expect(terse.status).toBe(503);
    expect(terse.body).toBe(
      ['[-]informer apps/v1/deployments failed', '[+]informer v1/configmaps ok', '[-]controller apps/v1/deployments failed', 'readyz check failed', ''].join('\n'),
    );

    // Stuck keys are a detail too.
    server.faults.clear();
    await probeUntil(`${base}/healthz?verbose`, 503, 'the reconcile to pass its timeout', { body: /stuck past reconcileTimeoutMs: default\/web/ });
    const healthz = await probe(`${base}/healthz`);
    expect(healthz.body).toContain('[-]controller apps/v1/deployments failed\n');
    expect(healthz.body).not.toContain('default/web');
    hang.resolve();
  });
});

describe('manager: /healthz and an informer that never syncs', () => {
  it('passes while the first list is young, fails past maxInitialSyncMs naming it, and passes once it syncs', async () => {
    server = await startApiServer({ port: 0 });
    server.faults.inject({ type: 'status', status: 503, message: 'etcd is sulking' }, { verb: 'list', resource: 'v1/configmaps', times: 1_000_000 });
    // The probes' clock, moved by hand: what is judged is the time since the start, not how fast this machine is.
    let now = 0;
    const clock: SchedulerLike = { now: () => now, schedule: asyncScheduler.schedule.bind(asyncScheduler) };
    const configMaps = informer(kubeSource(server.kubeConfig(), 'v1/configmaps'), { reflector: { backoff: { initialMs: 20, maxMs: 100 } }, onError: () => undefined });
    running = start({ controllers: [], informers: [configMaps], healthProbeBindAddress: '127.0.0.1:0', maxInitialSyncMs: 60_000, scheduler: clock });
    const base = (await serving(running, 'probes')).url;
    await waitFor(() => configMaps.status().lastError !== undefined, 'a failed list');

    now = 60_000;
    expect((await probe(`${base}/healthz`)).status).toBe(200);
    now = 60_001;
    const stuck = await probe(`${base}/healthz?verbose`);
    expect(stuck.status).toBe(503);
    expect(stuck.body).toMatch(/^\[-\]informer v1\/configmaps failed: not synced for 60 s \(limit maxInitialSyncMs 60 s\): .*etcd is sulking/m);
    expect((await probe(`${base}/livez`)).status).toBe(503);

    server.faults.clear();
    await probeUntil(`${base}/healthz`, 200, 'the informer to sync');
  });
});
