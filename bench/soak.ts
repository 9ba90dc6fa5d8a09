// Soak: `npm run soak -- --minutes 10`.
//
//   npm run soak -- --minutes 10                       # the default run: a sample each minute
//   npm run soak -- --minutes 3 --sample-seconds 15    # a short run with enough samples for a trend
//   options: --pods 1000 (key space; about half live), --writes-per-second 100, --fault-every-seconds 20,
//            --fault-take-seconds 5, --max-lag-seconds 30, --lag-sample-ms 250,
//            --warmup-seconds (default: 2 minutes, at most 30 % of the run), --max-slope-kib 256 (per minute)
//
// One informer with a subscriber and handlers under every buffer policy watches a simulator that runs in a
// child process (so its memory is not measured): steady writes over a fixed key space (creates, updates,
// label changes, deletes, delete-and-recreate), and a random fault from the chaos suite's table every few
// seconds, one at a time: armed once, taken by the informer's next request or event, or cleared when it was
// not taken within --fault-take-seconds, before the next one. Three criteria, each of which fails the run:
// - liveness: the store's lag behind the server (the age of the oldest write it has not seen, sampled every
//   --lag-sample-ms), leaving out the time the server was unhealthy for the informer (a fault armed until the
//   informer took it, a restart under way), must never exceed --max-lag-seconds;
// - memory: each sample is the informer process's heap after a full GC (`--expose-gc`) and its RSS; after the
//   warm-up, a least-squares slope of heap-after-GC above the threshold fails the run, as a steady workload
//   over a bounded set of objects must not grow the heap;
// - convergence: at the end the writes and faults stop and the store must equal the server's state.

import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { BufferOverflowError, informer, kubeSource, metaNamespaceKey, type EventHandler, type Informer, type KubeObject } from 'rxkube';
import { startApiServer } from 'rxkube/testing';
import { heapAfterGc, MiB } from './lib/heap.js';
import { Child, serve } from './lib/ipc.js';
import { LagMeter, type ServerProgress } from './lib/liveness.js';
import { FaultSchedule, type FaultRecord } from './lib/soakFaults.js';
import { Rng } from '../spec/helpers/random.js';
import { Workload } from '../spec/chaos/workload.js';

interface ServeArgs {
  readonly writesPerSecond: number;
  readonly faultEverySeconds: number;
  readonly faultTakeSeconds: number;
  readonly seed: number;
}

interface Quiet {
  readonly writes: number;
  readonly faults: FaultRecord[];
  readonly state: [string, string][];
}

/** The simulator side: steady writes and periodic faults until told to stop. */
async function runServer(): Promise<void> {
  let stop: (() => Promise<Quiet>) | undefined;
  let schedule: FaultSchedule | undefined;
  const server = await startApiServer({ bookmarkIntervalMs: 5000 });
  serve({
    start: async (args: ServeArgs) => {
      const rng = new Rng(args.seed);
      const workRng = rng.fork();
      const faultRng = rng.fork();
      const workload = new Workload(server);
      workload.populate(workRng, 500);
      // Every write of the run is a pod's (the workload's), so the global resourceVersion is the newest pod write.
      const faults = new FaultSchedule(server, faultRng, () => workload.touchMatching(workRng), args.faultTakeSeconds * 1000, () => Number(server.resourceVersion()));
      schedule = faults;
      let writes = 0;
      const perTick = args.writesPerSecond / 100;
      let owed = 0;
      const writer = setInterval(() => {
        for (owed += perTick; owed >= 1; owed--) {
          workload.step(workRng);
          writes++;
        }
        faults.settle();
      }, 10);
      const faulter = setInterval(() => faults.next(), args.faultEverySeconds * 1000);
      stop = async () => {
        clearInterval(writer);
        clearInterval(faulter);
        // A fault still armed would hit whatever comes next; the run is over.
        await faults.stop();
        if (workload.refused.length > 0) throw new Error(`the simulator refused writes: ${workload.refused.slice(0, 3).join('; ')}`);
        const state = server.list<{ metadata: { namespace: string; name: string; resourceVersion: string } }>('v1/pods').map((p): [string, string] => [`${p.metadata.namespace}/${p.metadata.name}`, p.metadata.resourceVersion]);
        return { writes, faults: faults.records, state };
      };
      return { kubeconfig: server.kubeConfigYaml() };
    },
    progress: (): ServerProgress => {
      if (schedule === undefined) throw new Error('not started');
      return schedule.progress();
    },
    quiesce: async () => {
      if (stop === undefined) throw new Error('not started');
      return stop();
    },
  });
}

interface Sample {
  readonly minute: number;
  readonly heapMiB: number;
  readonly rssMiB: number;
  readonly objects: number;
  readonly events: number;
  readonly relists: number;
  readonly watches: number;
  readonly errors: number;
}

/** Least-squares slope of y over x, and r². */
function fit(xs: readonly number[], ys: readonly number[]): { slope: number; r2: number } {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] as number) - mx;
    const dy = (ys[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  return { slope, r2: sxx === 0 || syy === 0 ? 0 : (sxy * sxy) / (sxx * syy) };
}

async function runClient(): Promise<void> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '10' },
      'sample-seconds': { type: 'string', default: '60' },
      'writes-per-second': { type: 'string', default: '100' },
      'fault-every-seconds': { type: 'string', default: '20' },
      'fault-take-seconds': { type: 'string', default: '5' },
      'max-lag-seconds': { type: 'string', default: '30' },
      'lag-sample-ms': { type: 'string', default: '250' },
      'warmup-seconds': { type: 'string' },
      'max-slope-kib': { type: 'string', default: '256' },
      seed: { type: 'string', default: '1' },
    },
    strict: true,
  });
  const num = (name: keyof typeof values): number => {
    const v = Number(values[name]);
    if (!(v >= 0) || !Number.isFinite(v)) throw new TypeError(`--${name}: expected a non-negative number, got ${JSON.stringify(values[name])}`);
    return v;
  };
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') throw new Error('the soak needs `node --expose-gc` (npm run soak passes it)');
  const minutes = num('minutes');
  const sampleMs = num('sample-seconds') * 1000;
  const durationMs = minutes * 60_000;
  const warmupMs = values['warmup-seconds'] !== undefined ? num('warmup-seconds') * 1000 : Math.min(120_000, 0.3 * durationMs);
  const maxSlopeKiB = num('max-slope-kib');
  if (!(sampleMs > 0) || durationMs < 2 * sampleMs) throw new TypeError('--minutes must allow at least two samples of --sample-seconds');
  const faultEverySeconds = num('fault-every-seconds');
  const faultTakeSeconds = num('fault-take-seconds');
  if (!(faultEverySeconds > 0) || !(faultTakeSeconds > 0) || faultTakeSeconds >= faultEverySeconds) {
    throw new TypeError('--fault-take-seconds must be positive and shorter than --fault-every-seconds, so one fault ends before the next');
  }
  const maxLagMs = num('max-lag-seconds') * 1000;
  const lagSampleMs = num('lag-sample-ms');
  if (!(lagSampleMs > 0) || lagSampleMs * 4 > maxLagMs) throw new TypeError('--lag-sample-ms must be positive and at most a quarter of --max-lag-seconds');

  const child = new Child(new URL(import.meta.url), ['--role=server'], []);
  const { kubeconfig } = await child.request<{ kubeconfig: string }>('start', {
    writesPerSecond: num('writes-per-second'),
    faultEverySeconds,
    faultTakeSeconds,
    seed: num('seed'),
  } satisfies ServeArgs);
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);

  const pods = informer(kubeSource(kc, 'v1/pods', { idleTimeoutMs: 15_000 }), { name: 'soak', reflector: { minWatchTimeoutSeconds: 10 } }) as unknown as Informer<KubeObject>;
  let errors = 0;
  const unexpected: string[] = [];
  let relists = 0;
  let watches = 0;
  pods.errors$.subscribe((err) => {
    errors++;
    if (err.name === 'HandlerError' || err.name === 'KeyError' || err.name === 'IndexError' || (err instanceof BufferOverflowError && err.droppedKey === undefined)) {
      if (unexpected.length < 10) unexpected.push(`${err.name}: ${err.message}`);
    }
  });
  pods.status$.subscribe((s) => {
    if (s.reflector !== undefined) {
      relists = s.reflector.counters.relists;
      watches = s.reflector.counters.watches;
    }
  });
  let events = 0;
  const sub = pods.subscribe(() => events++);
  // Handlers keep a key → resourceVersion view, as a controller keeps its own bookkeeping.
  const viewHandler = (view: Map<string, string>, slow: boolean): EventHandler<KubeObject> => ({
    add: (obj) => {
      view.set(metaNamespaceKey(obj), obj.metadata?.resourceVersion ?? '');
      return slow ? delay(0) : undefined;
    },
    update: (_, obj) => {
      view.set(metaNamespaceKey(obj), obj.metadata?.resourceVersion ?? '');
      return slow ? delay(0) : undefined;
    },
    delete: (obj) => {
      view.delete('key' in obj && typeof obj.key === 'string' ? obj.key : metaNamespaceKey(obj as KubeObject));
      return slow ? delay(0) : undefined;
    },
  });
  const views = { unbounded: new Map<string, string>(), coalesce: new Map<string, string>(), limitError: new Map<string, string>() };
  const registrations = [
    pods.addHandler(viewHandler(views.unbounded, false)),
    pods.addHandler(viewHandler(views.coalesce, true), { buffer: { coalesce: 'byKey' } }),
    pods.addHandler(viewHandler(views.limitError, false), { buffer: { limit: 100_000, overflow: 'error' } }),
    pods.addHandler(viewHandler(new Map(), true), { buffer: { limit: 16, overflow: 'dropOldest' } }),
  ];
  await pods.whenSynced({ timeout: 30_000 });

  const started = performance.now();
  const startedWall = Date.now();
  const secondsIn = (wall: number): string => `${((wall - startedWall) / 1000).toFixed(1)} s`;
  // Liveness: the store's lag behind the server, sampled often, judged while the server is healthy.
  const meter = new LagMeter(Math.ceil(durationMs / lagSampleMs) + 64);
  let windowWorstMs = 0;
  let sampling = true;
  let samplingFailed: unknown;
  const lagLoop = (async (): Promise<void> => {
    while (sampling) {
      const progress = await child.request<ServerProgress>('progress');
      const lag = meter.sample(Date.now(), progress, Number(pods.store.lastSyncResourceVersion()) || 0);
      windowWorstMs = Math.max(windowWorstMs, lag.ms);
      await delay(lagSampleMs);
    }
  })().catch((err: unknown) => {
    samplingFailed = err;
  });
  const samples: Sample[] = [];
  const sample = async (): Promise<Sample> => {
    const heap = await heapAfterGc();
    const s: Sample = {
      minute: (performance.now() - started) / 60_000,
      heapMiB: heap / MiB,
      rssMiB: process.memoryUsage().rss / MiB,
      objects: pods.store.listKeys().length,
      events,
      relists,
      watches,
      errors,
    };
    samples.push(s);
    console.log(
      `${s.minute.toFixed(2).padStart(6)} min  heap ${s.heapMiB.toFixed(2).padStart(7)} MiB  rss ${s.rssMiB.toFixed(1).padStart(6)} MiB  objects ${String(s.objects).padStart(4)}  events ${s.events}  relists ${s.relists}  watches ${s.watches}  errors ${s.errors}  worst lag ${(windowWorstMs / 1000).toFixed(1)} s${s.minute * 60_000 < warmupMs ? '  (warm-up)' : ''}`,
    );
    windowWorstMs = 0;
    return s;
  };
  console.log(`soak: ${minutes} min, a sample every ${sampleMs / 1000} s, warm-up ${warmupMs / 1000} s, fail above ${maxSlopeKiB} KiB/min of heap after GC; node ${process.version}`);
  console.log(
    `liveness: one fault every ${faultEverySeconds} s, cleared if not taken within ${faultTakeSeconds} s; FAIL if the store has not seen a write the server made ` +
      `more than ${maxLagMs / 1000} s of healthy server time earlier (not counted: a fault armed until the informer took it, a restart under way); sampled every ${lagSampleMs} ms`,
  );
  await sample();
  for (let next = sampleMs; next <= durationMs; next += sampleMs) {
    await delay(Math.max(0, started + next - performance.now()));
    await sample();
  }

  sampling = false;
  await lagLoop;
  if (samplingFailed !== undefined) throw new Error('the lag sampling failed', { cause: samplingFailed });
  const quiet = await child.request<Quiet>('quiesce');
  const expected = new Map(quiet.state);
  const deadline = performance.now() + 60_000;
  const differs = (m: ReadonlyMap<string, string>): boolean => m.size !== expected.size || [...expected].some(([k, rv]) => m.get(k) !== rv);
  const storeView = (): Map<string, string> => new Map(pods.store.list().map((o) => [metaNamespaceKey(o), o.metadata?.resourceVersion ?? '']));
  while ((differs(storeView()) || Object.values(views).some(differs)) && performance.now() < deadline) await delay(50);
  const converged = !differs(storeView()) && !Object.values(views).some(differs);

  sub.unsubscribe();
  for (const r of registrations) r.unsubscribe();
  await Promise.all(registrations.map((r) => r.done));
  child.process.kill();

  const measured = samples.filter((s) => s.minute * 60_000 >= warmupMs);
  const heapFit = fit(measured.map((s) => s.minute), measured.map((s) => s.heapMiB));
  const rssFit = fit(measured.map((s) => s.minute), measured.map((s) => s.rssMiB));
  const slopeKiB = heapFit.slope * 1024;
  const growing = measured.length >= 3 && slopeKiB > maxSlopeKiB;
  console.log(`writes ${quiet.writes}, faults ${quiet.faults.length}:`);
  for (const f of quiet.faults) {
    const healthyAt = f.takenAt ?? f.expiredAt;
    const how = f.takenAt !== undefined ? `taken after ${f.takenAt - f.causedAt} ms` : f.expiredAt !== undefined ? `NOT taken, cleared after ${f.expiredAt - f.causedAt} ms` : 'still armed at the end';
    const caught = healthyAt === undefined || f.healthyRv === undefined ? undefined : meter.caughtUpAt(healthyAt, f.healthyRv);
    const catchUp = healthyAt === undefined ? '' : caught === undefined ? ', store not caught up when the sampling ended' : `, store caught up ${caught - healthyAt} ms later`;
    console.log(`  at ${secondsIn(f.causedAt).padStart(8)}  ${f.kind.padEnd(20)} ${how}${catchUp}`);
  }
  const worst = meter.worst;
  const worstHealthy = meter.worstHealthy;
  const deaf = worstHealthy.healthyMs > maxLagMs;
  console.log(`worst lag: ${(worst.ms / 1000).toFixed(1)} s (${worst.writes} writes behind) at ${secondsIn(worst.at)}`);
  console.log(
    `worst lag while the server was healthy: ${(worstHealthy.healthyMs / 1000).toFixed(1)} s (${worstHealthy.writes} writes behind) at ${secondsIn(worstHealthy.at)}; bound ${maxLagMs / 1000} s`,
  );
  console.log(`heap after GC over ${measured.length} samples after warm-up: slope ${slopeKiB.toFixed(1)} KiB/min (r² ${heapFit.r2.toFixed(2)}); rss slope ${(rssFit.slope * 1024).toFixed(1)} KiB/min`);
  console.log(`store and handler views equal to the server after the faults stopped: ${converged ? 'yes' : 'NO'}`);
  if (unexpected.length > 0) console.log(`unexpected errors: ${unexpected.join(' | ')}`);
  const verdict = measured.length < 3 ? 'INCONCLUSIVE (fewer than 3 samples after warm-up)' : growing ? `FAIL: heap grows ${slopeKiB.toFixed(1)} KiB/min > ${maxSlopeKiB}` : 'PASS: no growth trend';
  const liveness = deaf ? `; FAIL: liveness, the store stayed ${(worstHealthy.healthyMs / 1000).toFixed(1)} s behind a healthy server (bound ${maxLagMs / 1000} s)` : '';
  console.log(`verdict: ${verdict}${liveness}${converged ? '' : '; FAIL: did not converge'}${unexpected.length > 0 ? '; FAIL: unexpected errors' : ''}`);
  process.exitCode = growing || deaf || !converged || unexpected.length > 0 || measured.length < 3 ? 1 : 0;
}

if (process.argv.includes('--role=server')) await runServer();
else await runClient();
