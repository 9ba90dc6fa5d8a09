// Read your own writes: how many 409s the example ConfigMap controller (examples/configmap-controller.ts) meets
// because a reconcile read a cache older than its own last write, with the controller's readYourWrites off and on.
//
// One run is what `npm run example configmap-controller -- --simulator --duration 20s` does, in this process: the
// simulator (bookmarks every 5 s) seeded with four deployments, the controller (concurrency 2) until they have their
// ConfigMaps, then the simulator's churn of deployments (4 creates, 10 updates, 3 deletes at 30/s, seed 7) until
// the duration is over, then up to 5 s to converge. Runs alternate off and on, BENCH_REPEATS of each.
//
// Counting, from the simulator's audit hook, in the turn each answer is sent: every HTTP write in this process is
// the controller's (seeding and churn write to the storage directly), so a 409 Conflict is "own" when the version the
// server holds at that moment was written by the controller: the request carried a resourceVersion older than the
// controller's own last write, i.e. it was made from a stale read of its own write. A 409 whose object was last
// written by the churn is someone else's and no wait could have avoided it. An AlreadyExists on a create is "own" the
// same way (the controller created the object and its cache did not show it yet).
//
// Knobs: BENCH_RYW_DURATION (s, default 20), BENCH_RYW_CHURN (multiplies the churn's counts, default 1),
// BENCH_RYW_WATCH_DELAY_MS (every watch line held that long, a lagging watch cache; default 0).

import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { startApiServer, type ApiServer, type AuditEvent } from 'rxkube/testing';
import { configMapController, convergenceProblems, sampleDeployment } from '../examples/configmap-controller.js';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { row, type Row } from './lib/report.js';
import { summarize } from './lib/stats.js';

/** What one run counted. */
interface RunCounts {
  readonly ownConflicts: number;
  readonly otherConflicts: number;
  readonly ownAlreadyExists: number;
  readonly reconciles: number;
  readonly failed: number;
  readonly waitTimeouts: number;
  readonly converged: boolean;
}

const problemsOf = (server: ApiServer): string[] =>
  convergenceProblems(server.list<V1Deployment>('apps/v1/deployments'), server.list<V1ConfigMap>('v1/configmaps'));

/** Resolves once the server shows no problem, or after `limitMs`; says which. */
async function converge(server: ApiServer, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  // The condition is the server's state, checked between turns; nothing here waits a fixed time for it.
  while (problemsOf(server).length > 0) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

async function oneRun(readYourWrites: boolean, durationMs: number, churnScale: number, watchDelayMs: number): Promise<RunCounts> {
  // The controller's writes, by object, with the resourceVersion each produced.
  const written = new Map<string, Set<string>>();
  let ownConflicts = 0;
  let otherConflicts = 0;
  let ownAlreadyExists = 0;
  let server: ApiServer | undefined;
  const objectKey = (e: AuditEvent): string => `${e.resource} ${e.namespace ?? ''}/${e.name ?? ''}`;
  const audit = (e: AuditEvent): void => {
    if (e.verb === 'get' || server === undefined) return;
    const key = objectKey(e);
    if (e.code >= 200 && e.code < 300 && e.resourceVersion !== undefined) {
      let set = written.get(key);
      if (set === undefined) written.set(key, (set = new Set()));
      set.add(e.resourceVersion);
      return;
    }
    if (e.code !== 409) return;
    const current = server.get<{ metadata?: { resourceVersion?: string } }>(e.resource as 'v1/configmaps', e.namespace, e.name ?? '');
    const ours = current?.metadata?.resourceVersion !== undefined && written.get(key)?.has(current.metadata.resourceVersion) === true;
    if (e.reason === 'AlreadyExists') {
      if (ours) ownAlreadyExists++;
    } else if (ours) ownConflicts++;
    else otherConflicts++;
  };
  const started = Date.now();
  server = await startApiServer({ port: 0, bookmarkIntervalMs: 5_000, audit });
  for (const [name, replicas, image] of [['web', 3, 'nginx:1.27'], ['api', 2, 'api:4.1'], ['db', 1, 'postgres:17'], ['cache', 2, 'redis:7']] as const) {
    await server.create('apps/v1/deployments', sampleDeployment(name, replicas, image));
  }
  if (watchDelayMs > 0) server.faults.delayWatches({ delayMs: watchDelayMs });
  const stop = new AbortController();
  const running = configMapController(server.kubeConfig(), { signal: stop.signal, readYourWrites });
  let reconciles = 0;
  let failed = 0;
  let waitTimeouts = 0;
  running.controller.errors$.subscribe((err) => {
    if (err.message.includes('readYourWritesTimeoutMs')) waitTimeouts++;
  });
  const ended = new Promise<void>((resolve, reject) => {
    running.controller.subscribe({
      next: (o) => {
        if (o.type === 'gone') return;
        reconciles++;
        if (o.type === 'failed') failed++;
      },
      complete: resolve,
      error: reject,
    });
  });
  await converge(server, 10_000);
  const n = (x: number): number => Math.round(x * churnScale);
  const churn = server.churn({ resource: 'apps/v1/deployments', creates: n(4), updates: n(10), deletes: n(3), perSecond: 30, namePrefix: 'churn-', seed: 7 });
  const left = started + durationMs - Date.now();
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
  churn.stop();
  const converged = await converge(server, 5_000);
  stop.abort();
  await ended;
  await server.close();
  return { ownConflicts, otherConflicts, ownAlreadyExists, reconciles, failed, waitTimeouts, converged };
}

async function run(ctx: Context): Promise<Row[]> {
  const durationMs = envNumber('BENCH_RYW_DURATION', 20) * 1000;
  const churnScale = envNumber('BENCH_RYW_CHURN', 1);
  const watchDelayMs = envNumber('BENCH_RYW_WATCH_DELAY_MS', 0);
  const results: Record<'off' | 'on', RunCounts[]> = { off: [], on: [] };
  for (let i = 0; i < ctx.repeats; i++) {
    for (const mode of ['off', 'on'] as const) {
      const r = await oneRun(mode === 'on', durationMs, churnScale, watchDelayMs);
      results[mode].push(r);
      ctx.log(
        `readYourWrites ${mode} #${i + 1}: own 409 Conflict ${r.ownConflicts}, other 409 ${r.otherConflicts}, own AlreadyExists ${r.ownAlreadyExists}, ` +
          `${r.reconciles} reconciles (${r.failed} failed), ${r.waitTimeouts} wait timeouts, ${r.converged ? 'converged' : 'NOT converged'}`,
      );
    }
  }
  const setting = `${durationMs / 1000} s, churn ×${churnScale}${watchDelayMs > 0 ? `, watch +${watchDelayMs} ms` : ''}`;
  const rows: Row[] = [];
  const metrics: [keyof RunCounts, string][] = [
    ['ownConflicts', '409 Conflict, own stale read'],
    ['otherConflicts', '409 Conflict, another writer'],
    ['ownAlreadyExists', '409 AlreadyExists, own stale read'],
    ['failed', 'failed reconciles'],
    ['reconciles', 'reconciles'],
    ['waitTimeouts', 'read-your-writes wait timeouts'],
  ];
  for (const mode of ['off', 'on'] as const) {
    const runs = results[mode];
    for (const [field, metric] of metrics) {
      const values = runs.map((r) => Number(r[field]));
      const note = `runs: ${values.join(', ')}; min–max ${Math.min(...values)}–${Math.max(...values)}${runs.every((r) => r.converged) ? '' : '; a run did not converge'}`;
      rows.push(row('readyourwrites', `readYourWrites ${mode} (${setting})`, metric, 'per run', summarize(values), note));
    }
  }
  return rows;
}

export const readYourWrites: Benchmark = {
  name: 'readyourwrites',
  description: 'the example ConfigMap controller under churn on the simulator: 409s from stale reads of its own writes, readYourWrites off vs on',
  run,
};
