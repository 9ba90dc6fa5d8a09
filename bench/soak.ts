// Soak: `npm run soak -- --minutes 10`.
//
//   npm run soak -- --minutes 10                       # the default run: a sample each minute
//   npm run soak -- --minutes 3 --sample-seconds 15    # a short run with enough samples for a trend
//   options: --pods 1000 (key space; about half live), --writes-per-second 100, --fault-every-seconds 20,
//            --warmup-seconds (default: 2 minutes, at most 30 % of the run), --max-slope-kib 256 (per minute)
//
// One informer with a subscriber and handlers under every buffer policy watches a simulator that runs in a
// child process (so its memory is not measured): steady writes over a fixed key space (creates, updates,
// label changes, deletes, delete-and-recreate), and a random fault from the chaos suite's table every few
// seconds. Each sample is the informer process's heap after a full GC (`--expose-gc`) and its RSS. After
// the warm-up, a least-squares slope of heap-after-GC above the threshold fails the run: a steady
// workload over a bounded set of objects must not grow the heap. At the end the writes and faults stop
// and the store must equal the server's state.

import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { BufferOverflowError, informer, kubeSource, metaNamespaceKey, type EventHandler, type Informer, type KubeObject } from 'rxkube';
import { startApiServer } from 'rxkube/testing';
import { heapAfterGc, MiB } from './lib/heap.js';
import { Child, serve } from './lib/ipc.js';
import { FAULT_KINDS, type FaultKind } from '../spec/chaos/faults.js';
import { Rng } from '../spec/helpers/random.js';
import { Workload } from '../spec/chaos/workload.js';

interface ServeArgs {
  readonly writesPerSecond: number;
  readonly faultEverySeconds: number;
  readonly seed: number;
}

interface Quiet {
  readonly writes: number;
  readonly faults: Record<string, number>;
  readonly state: [string, string][];
}

/** The simulator side: steady writes and periodic faults until told to stop. */
async function runServer(): Promise<void> {
  let stop: (() => Promise<Quiet>) | undefined;
  const server = await startApiServer({ bookmarkIntervalMs: 5000 });
  serve({
    start: async (args: ServeArgs) => {
      const rng = new Rng(args.seed);
      const workRng = rng.fork();
      const faultRng = rng.fork();
      const workload = new Workload(server);
      workload.populate(workRng, 500);
      let writes = 0;
      const faults: Record<string, number> = {};
      let restarting: Promise<void> | undefined;
      const perTick = args.writesPerSecond / 100;
      let owed = 0;
      const writer = setInterval(() => {
        for (owed += perTick; owed >= 1; owed--) {
          workload.step(workRng);
          writes++;
        }
      }, 10);
      const faulter = setInterval(() => {
        if (restarting !== undefined) return;
        const kind: FaultKind = faultRng.pick(FAULT_KINDS);
        faults[kind.name] = (faults[kind.name] ?? 0) + 1;
        const done = kind.cause({ server, rng: faultRng, touch: () => workload.touchMatching(workRng) });
        if (done instanceof Promise) restarting = done.finally(() => (restarting = undefined));
      }, args.faultEverySeconds * 1000);
      stop = async () => {
        clearInterval(writer);
        clearInterval(faulter);
        await restarting;
        // Faults still armed would hit whatever comes next; the run is over.
        server.faults.clear();
        if (workload.refused.length > 0) throw new Error(`the simulator refused writes: ${workload.refused.slice(0, 3).join('; ')}`);
        const state = server.list<{ metadata: { namespace: string; name: string; resourceVersion: string } }>('v1/pods').map((p): [string, string] => [`${p.metadata.namespace}/${p.metadata.name}`, p.metadata.resourceVersion]);
        return { writes, faults, state };
      };
      return { kubeconfig: server.kubeConfigYaml() };
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

  const child = new Child(new URL(import.meta.url), ['--role=server'], []);
  const { kubeconfig } = await child.request<{ kubeconfig: string }>('start', {
    writesPerSecond: num('writes-per-second'),
    faultEverySeconds: num('fault-every-seconds'),
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
      `${s.minute.toFixed(2).padStart(6)} min  heap ${s.heapMiB.toFixed(2).padStart(7)} MiB  rss ${s.rssMiB.toFixed(1).padStart(6)} MiB  objects ${String(s.objects).padStart(4)}  events ${s.events}  relists ${s.relists}  watches ${s.watches}  errors ${s.errors}${s.minute * 60_000 < warmupMs ? '  (warm-up)' : ''}`,
    );
    return s;
  };
  console.log(`soak: ${minutes} min, a sample every ${sampleMs / 1000} s, warm-up ${warmupMs / 1000} s, fail above ${maxSlopeKiB} KiB/min of heap after GC; node ${process.version}`);
  await sample();
  for (let next = sampleMs; next <= durationMs; next += sampleMs) {
    await delay(Math.max(0, started + next - performance.now()));
    await sample();
  }

  const quiet = await child.request<Quiet>('quiesce');
  const expected = new Map(quiet.state);
  const deadline = performance.now() + 60_000;
  const differs = (m: ReadonlyMap<string, string>): boolean => m.size !== expected.size || [...expected].some(([k, rv]) => m.get(k) !== rv);
  const storeView = (): Map<string, string> => new Map(pods.store.list().map((o) => [metaNamespaceKey(o), o.metadata?.resourceVersion ?? '']));
  while ((differs(storeView()) || Object.values(views).some(differs)) && performance.now() < deadline) await delay(50);
  const converged = !differs(storeView()) && !Object.values(views).some(differs);

  sub.unsubscribe();
  await Promise.all(registrations.map((r) => r.remove()));
  child.process.kill();

  const measured = samples.filter((s) => s.minute * 60_000 >= warmupMs);
  const heapFit = fit(measured.map((s) => s.minute), measured.map((s) => s.heapMiB));
  const rssFit = fit(measured.map((s) => s.minute), measured.map((s) => s.rssMiB));
  const slopeKiB = heapFit.slope * 1024;
  const growing = measured.length >= 3 && slopeKiB > maxSlopeKiB;
  console.log(`writes ${quiet.writes}, faults ${Object.entries(quiet.faults).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`);
  console.log(`heap after GC over ${measured.length} samples after warm-up: slope ${slopeKiB.toFixed(1)} KiB/min (r² ${heapFit.r2.toFixed(2)}); rss slope ${(rssFit.slope * 1024).toFixed(1)} KiB/min`);
  console.log(`store and handler views equal to the server after the faults stopped: ${converged ? 'yes' : 'NO'}`);
  if (unexpected.length > 0) console.log(`unexpected errors: ${unexpected.join(' | ')}`);
  const verdict = measured.length < 3 ? 'INCONCLUSIVE (fewer than 3 samples after warm-up)' : growing ? `FAIL: heap grows ${slopeKiB.toFixed(1)} KiB/min > ${maxSlopeKiB}` : 'PASS: no growth trend';
  console.log(`verdict: ${verdict}${converged ? '' : '; FAIL: did not converge'}${unexpected.length > 0 ? '; FAIL: unexpected errors' : ''}`);
  process.exitCode = growing || !converged || unexpected.length > 0 || measured.length < 3 ? 1 : 0;
}

if (process.argv.includes('--role=server')) await runServer();
else await runClient();
