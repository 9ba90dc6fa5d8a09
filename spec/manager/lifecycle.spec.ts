/**
 * The manager's lifetime on the simulator: a graceful stop drains the reconcile in flight, then releases the
 * Lease so the standby (whose caches are warm) reconciles at once; a lost Lease, a source that failed for good
 * and a port in use end it with exit code 1; the metrics object is served and told what to export.
 */
import { createServer } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { firstValueFrom, filter, type Observable } from 'rxjs';
import { leaseLock, type Lease } from '../../src/leaderelection/leaseLock.js';
import { runManager } from '../../src/manager/runManager.js';
import type { ManagerEvent, ManagerMetrics } from '../../src/manager/options.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { probe } from '../helpers/probe.js';
import { deployment, deploymentsController, start, type Running } from './harness.js';

let server: ApiServer | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await server?.close();
  server = undefined;
});

/** A Lease that changes hands quickly once released, but takes 15 s to expire when it is not. */
const TIMINGS = { leaseDuration: 15_000, renewDeadline: 1_000, retryPeriod: 200 } as const;

const holder = (s: ApiServer, name = 'mgr'): string | undefined => s.get<Lease>('coordination.k8s.io/v1/leases', 'default', name)?.spec?.holderIdentity;

/** Writes that go to a string instead of stderr. */
function capture(): { write(text: string): boolean; text: string } {
  return {
    text: '',
    write(t: string) {
      this.text += t;
      return true;
    },
  };
}

const url = (events: readonly ManagerEvent[], which: 'probes' | 'metrics'): string | undefined => {
  const e = events.find((x) => x.type === 'serving' && x.server === which);
  return e?.type === 'serving' ? e.url : undefined;
};

describe('manager: graceful stop', () => {
  it('on abort drains the reconcile in flight, then releases the Lease: the warm standby leads and reconciles at once; exit 0', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    await s.create('apps/v1/deployments', deployment('web'));
    const lock = leaseLock(s.kubeConfig(), { namespace: 'default', name: 'mgr' });

    // Replica a: its reconcile of web holds until the test lets it go.
    const inFlight = deferred();
    const finish = deferred();
    const a = deploymentsController(s, {
      reconcile: async () => {
        inFlight.resolve();
        await finish.promise;
      },
    });
    const stopA = new AbortController();
    const eventsA: ManagerEvent[] = [];
    const exitA = runManager({
      controllers: [a.ctl],
      leaderElection: { lock, identity: 'a', ...TIMINGS },
      healthProbeBindAddress: '127.0.0.1:0',
      signal: stopA.signal,
      signals: [],
      onEvent: (e) => eventsA.push(e),
    });
    cleanups.push(async () => {
      stopA.abort();
      finish.resolve();
      await exitA;
    });
    await inFlight.promise;
    expect(holder(s)).toBe('a');

    // Replica b: a standby whose informers sync although its controller does not run.
    const b = deploymentsController(s, { reconcile: () => undefined });
    const runningB: Running = start({ controllers: [b.ctl], leaderElection: { lock, identity: 'b', ...TIMINGS }, healthProbeBindAddress: '127.0.0.1:0' });
    cleanups.push(() => runningB.stop());
    const baseB = await runningB.probes();
    await waitFor(() => runningB.events.some((e) => e.type === 'leadership' && e.leader === 'a'), 'b to see a leading');
    await waitFor(() => b.deployments.status().synced && b.configMaps.status().synced, "b's caches to sync");
    expect(b.ctl.status().state).toBe('idle');
    const standby = await probe(`${baseB}/readyz?verbose`);
    expect(standby.status).toBe(200);
    expect(standby.body).toMatch(/^\[\+\]controller apps\/v1\/deployments ok: standby \(not leading\)$/m);

    // SIGTERM's equivalent: a stops taking work, says it is not ready, and waits for its reconcile.
    stopA.abort();
    await waitFor(() => eventsA.some((e) => e.type === 'stopping'), 'a to begin stopping');
    const baseA = url(eventsA, 'probes') ?? '';
    const draining = await probe(`${baseA}/readyz?verbose`);
    expect(draining.status).toBe(503);
    expect(draining.body).toMatch(/^\[-\]manager failed: shutting down$/m);
    expect((await probe(`${baseA}/healthz`)).status).toBe(200);
    expect(holder(s)).toBe('a');

    finish.resolve();
    expect(await exitA).toBe(0);
    // Released after the reconcile, not at the abort: by the time a has exited, its 15 s Lease is free (or already
    // b's, taken at b's next attempt), where a Lease a kept would still name a.
    expect(holder(s)).not.toBe('a');
    await waitFor(() => runningB.events.some((e) => e.type === 'leadership' && e.leading), 'b to lead', 30_000);
    expect(holder(s)).toBe('b');
    const reconciledByB = await waitFor(() => runningB.events.find((e) => e.type === 'reconcile'), 'b to reconcile', 5_000);
    expect(reconciledByB).toMatchObject({ outcome: { type: 'reconciled', key: 'default/web' } });
    expect(a.ctl.status().state).toBe('stopped');
    // a's servers are closed.
    await expect(fetch(`${baseA}/healthz`)).rejects.toThrow();
  });

  it('does not wait past the controller shutdownTimeoutMs for a reconcile that ignores its signal, and still exits 0', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    await s.create('apps/v1/deployments', deployment('web'));
    const inFlight = deferred();
    let signal: AbortSignal | undefined;
    const a = deploymentsController(s, {
      shutdownTimeoutMs: 200,
      reconcile: (_d, ctx) => {
        signal = ctx.signal;
        inFlight.resolve();
        return new Promise(() => {});
      },
    });
    const stop = new AbortController();
    const exit = runManager({ controllers: [a.ctl], healthProbeBindAddress: '0', signal: stop.signal, signals: [] });
    await inFlight.promise;
    stop.abort();
    expect(await exit).toBe(0);
    expect(signal?.aborted).toBe(true);
    expect(a.errors.map((e) => e.message)).toContainEqual(expect.stringMatching(/still running 200 ms after shutdown began \(default\/web\)/));
  });
});

describe('manager: other ways to stop', () => {
  it('unsubscribing is the same graceful stop, in the background: the Lease is released and the servers close', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    const lock = leaseLock(s.kubeConfig(), { namespace: 'default', name: 'mgr' });
    const a = deploymentsController(s);
    const running = start({ controllers: [a.ctl], leaderElection: { lock, identity: 'a', ...TIMINGS }, healthProbeBindAddress: '127.0.0.1:0' });
    const base = await running.probes();
    await waitFor(() => running.events.some((e) => e.type === 'leadership' && e.leading), 'a to lead');
    running.subscription.unsubscribe();
    await waitFor(() => holder(s) === '', 'the Lease to be released');
    await waitFor(() => a.ctl.status().state === 'stopped', 'the controller to stop');
    await waitFor(() => fetch(`${base}/healthz`).then(() => false, () => true), 'the probe server to close');
  });

  it('a second signal while draining gives up waiting: runManager resolves 1 at once', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    await s.create('apps/v1/deployments', deployment('web'));
    const inFlight = deferred();
    const finish = deferred();
    const a = deploymentsController(s, {
      reconcile: async () => {
        inFlight.resolve();
        await finish.promise;
      },
    });
    const stderr = capture();
    const events: ManagerEvent[] = [];
    const exit = runManager({ controllers: [a.ctl], healthProbeBindAddress: '0', signals: ['SIGUSR2'], stderr, onEvent: (e) => events.push(e) });
    cleanups.push(async () => {
      finish.resolve();
      await a.ctl.shutdown();
    });
    await inFlight.promise;
    process.kill(process.pid, 'SIGUSR2');
    await waitFor(() => events.some((e) => e.type === 'stopping'), 'the drain to begin');
    process.kill(process.pid, 'SIGUSR2');
    expect(await exit).toBe(1);
    expect(stderr.text).toBe('manager: SIGUSR2 again while stopping; not waiting any longer\n');
    // The reconcile was still in flight: the exit did not wait for it.
    expect(a.ctl.status().inFlight).toBe(1);
    expect(process.listenerCount('SIGUSR2')).toBe(0);
  });
});

describe('manager: fatal ends', () => {
  it('losing the Lease after leading stops at once without releasing it, aborts the reconcile in flight, and exits 1 naming the Lease', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    await s.create('apps/v1/deployments', deployment('web'));
    const lock = leaseLock(s.kubeConfig(), { namespace: 'default', name: 'mgr' });
    let signal: AbortSignal | undefined;
    // The reconcile ends when its signal aborts; the default shutdownTimeoutMs (30 s) would abort it only long after the exit.
    const a = deploymentsController(s, {
      reconcile: (_d, ctx) => {
        signal = ctx.signal;
        return new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      },
    });
    const stderr = capture();
    const events: ManagerEvent[] = [];
    const stop = new AbortController();
    const exit = runManager({ controllers: [a.ctl], leaderElection: { lock, identity: 'a', ...TIMINGS }, healthProbeBindAddress: '0', signal: stop.signal, signals: [], stderr, onEvent: (e) => events.push(e) });
    cleanups.push(() => {
      stop.abort();
      return exit;
    });
    await waitFor(() => events.some((e) => e.type === 'leadership' && e.leading), 'a to lead');
    await waitFor(() => signal, 'the reconcile to start');
    // Someone else writes the Lease as theirs, fresh: a's next renewal conflicts and it reads the new holder.
    const lease = s.get<Lease>('coordination.k8s.io/v1/leases', 'default', 'mgr');
    await s.update('coordination.k8s.io/v1/leases', { ...lease, spec: { ...lease?.spec, holderIdentity: 'intruder', leaseDurationSeconds: 15 } });
    expect(await exit).toBe(1);
    expect(stderr.text).toMatch(/^manager: stopped on an error: lost the lease default\/mgr after leading \(holder now intruder\)/);
    expect(holder(s)).toBe('intruder');
    expect(signal?.aborted).toBe(true);
    await waitFor(() => a.ctl.status().state === 'stopped', 'the controller to stop');
  });

  it('losing the Lease while a graceful stop drains ends the drain at once: the reconcile in flight is aborted, not waited for', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    await s.create('apps/v1/deployments', deployment('web'));
    const lock = leaseLock(s.kubeConfig(), { namespace: 'default', name: 'mgr' });
    const inFlight = deferred();
    const finish = deferred();
    let signal: AbortSignal | undefined;
    // Only the lost Lease can end the drain before this long; the reconcile ignores its signal.
    const a = deploymentsController(s, {
      shutdownTimeoutMs: 600_000,
      reconcile: async (_d, ctx) => {
        signal = ctx.signal;
        inFlight.resolve();
        await finish.promise;
      },
    });
    const stderr = capture();
    const events: ManagerEvent[] = [];
    const stop = new AbortController();
    const exit = runManager({ controllers: [a.ctl], leaderElection: { lock, identity: 'a', ...TIMINGS }, healthProbeBindAddress: '0', signal: stop.signal, signals: [], stderr, onEvent: (e) => events.push(e) });
    cleanups.push(() => {
      finish.resolve();
      return exit;
    });
    await inFlight.promise;
    stop.abort();
    await waitFor(() => events.some((e) => e.type === 'stopping'), 'the drain to begin');
    const lease = s.get<Lease>('coordination.k8s.io/v1/leases', 'default', 'mgr');
    await s.update('coordination.k8s.io/v1/leases', { ...lease, spec: { ...lease?.spec, holderIdentity: 'intruder', leaseDurationSeconds: 15 } });
    expect(await exit).toBe(1);
    expect(stderr.text).toMatch(/^manager: stopped on an error: lost the lease default\/mgr after leading \(holder now intruder\)/);
    expect(signal?.aborted).toBe(true);
    expect(a.ctl.status().inFlight).toBe(1);
    expect(holder(s)).toBe('intruder');
  });

  it('a source that failed for good (a 400 to its list) ends with exit 1 naming it', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    s.faults.inject({ type: 'status', status: 400, message: 'no such field selector' }, { verb: 'list', resource: 'v1/configmaps' });
    const a = deploymentsController(s);
    const stderr = capture();
    expect(await runManager({ controllers: [a.ctl], healthProbeBindAddress: '0', signals: [], stderr })).toBe(1);
    expect(stderr.text).toMatch(/manager: stopped on an error: .*no such field selector/);
  });

  it('a probe address in use ends with exit 1 naming the address, before any lease is taken', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    cleanups.push(async () => {
      taken.close();
      await once(taken, 'close');
    });
    const port = (taken.address() as { port: number }).port;
    const a = deploymentsController(s);
    const stderr = capture();
    const lock = leaseLock(s.kubeConfig(), { namespace: 'default', name: 'mgr' });
    const code = await runManager({ controllers: [a.ctl], leaderElection: { lock, identity: 'a' }, healthProbeBindAddress: `127.0.0.1:${port}`, signals: [], stderr });
    expect(code).toBe(1);
    expect(stderr.text).toContain(`the health probe server cannot listen on 127.0.0.1:${port}`);
    expect(holder(s)).toBeUndefined();
  });
});

describe('manager: metrics', () => {
  it('serves the object at /metrics with its content type and tells it, once, what to export', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    const a = deploymentsController(s);
    const added: string[] = [];
    let leading$: Observable<boolean> | undefined;
    const metrics: ManagerMetrics = {
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      metrics: async () => `reconciles_total ${a.ctl.status().reconciles}\n`,
      addController: (c) => added.push(`controller ${c.name}`),
      addInformer: (i) => added.push(`informer ${i.name}`),
      addLeaderElection: (name, l$) => {
        added.push(`leader election ${name}`);
        leading$ = l$;
      },
    };
    const lock = leaseLock(s.kubeConfig(), { namespace: 'default', name: 'mgr' });
    const running = start({ controllers: [a.ctl], informers: [a.deployments], leaderElection: { lock, identity: 'a', ...TIMINGS }, metrics, metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0' });
    cleanups.push(() => running.stop());
    // The deployments informer is both the controller's and an extra one: counted once.
    expect(added).toEqual(['controller apps/v1/deployments', 'informer apps/v1/deployments', 'informer v1/configmaps', 'leader election default/mgr']);
    expect(await firstValueFrom(leading$!.pipe(filter(Boolean)))).toBe(true);
    const at = await waitFor(() => url(running.events, 'metrics'), 'the metrics server');
    const res = await fetch(`${at}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await res.text()).toMatch(/^reconciles_total \d+\n$/);
    expect(running.events.some((e) => e.type === 'serving' && e.server === 'probes')).toBe(false);
  });

  it('answers 500 naming the error when the metrics object fails', async () => {
    const s = await startApiServer({ port: 0 });
    server = s;
    const a = deploymentsController(s);
    const running = start({
      controllers: [a.ctl],
      metrics: { contentType: 'text/plain', metrics: () => Promise.reject(new Error('collector broke')) },
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '0',
    });
    cleanups.push(() => running.stop());
    const at = await waitFor(() => url(running.events, 'metrics'), 'the metrics server');
    const res = await fetch(`${at}/metrics`);
    expect(res.status).toBe(500);
    expect(await res.text()).toContain('collector broke');
  });
});
