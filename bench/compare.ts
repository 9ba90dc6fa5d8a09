// The side-by-side benchmarks: the floor, client-node's makeInformer, Go's
// client-go informer and rxkube's informer, each in its own fresh process
// (bench/wireClient.ts; client-go: the Go program bench/go/informer, driven by
// bench/goClient.ts), against one benchmark server per workload
// (bench/wireServer.ts, its own process) serving the same 4–5 KB pods with
// managedFields. Clients run interleaved (floor, client-node, client-go,
// rxkube, … repeated) so machine noise hits each alike; every figure is the
// median of the repeats with their min–max, and a ratio is the median of the
// per-repeat ratios.

import { runGoClient } from './goClient.js';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { goInformerBinary } from './lib/goInformer.js';
import { MiB } from './lib/heap.js';
import { Child } from './lib/ipc.js';
import { runnerNodeOptions } from './lib/runnerFlags.js';
import { IMAGE_CASE, type Row } from './lib/report.js';
import type { ClientArgs, ClientMode, ClientResult, Workload } from './wireClient.js';
import type { WireReady } from './wireServer.js';

const CLIENT_FLAGS = ['--expose-gc', '--max-old-space-size=8192'];

export const LABELS: Record<ClientMode, string> = {
  floor: 'floor',
  'client-node': 'client-node',
  'client-go': 'client-go',
  rxkube: 'rxkube',
  'rxkube-keep': 'rxkube keep mF',
  'rxkube-baseline': 'rxkube baseline',
  'rxkube-image': IMAGE_CASE,
};

/** One workload: how many pods the server holds, who runs it, and what each run yields. */
interface Plan {
  readonly name: string;
  readonly pods: number;
  readonly modes: readonly ClientMode[];
  readonly workload: Workload;
  readonly timeoutMs: number;
  readonly metrics: readonly Metric[];
  /** Extra Node flags for the clients (a GC setting the workload is also measured with). */
  readonly nodeFlags?: readonly string[];
  /** Rounds per BENCH_REPEATS (1 unless said): a short run whose tail moves a lot between rounds takes more. */
  readonly roundsPerRepeat?: number;
}

interface Metric {
  readonly metric: string;
  readonly unit: string;
  readonly value: (r: ClientResult) => number | undefined;
  /** Which direction is better, for the ratio columns' reading. */
  readonly better: 'lower' | 'higher';
}

const syncTime: Metric = { metric: 'time to sync (every add handled; 0 handlers: all cached)', unit: 's', value: (r) => r.syncMs / 1000, better: 'lower' };
const syncRss: Metric = { metric: 'RSS after sync + GC', unit: 'MiB', value: (r) => r.rssAfterSync / MiB, better: 'lower' };
/** The watch phase of a `sync` workload with events: rate, CPU (the Node clients), then memory after it. */
const watchMetrics = (pods: number, events: number): Metric[] => [
  { metric: 'watch rate (until the last event is cached and handled)', unit: 'events/s', value: (r) => r.eventsPerSecond, better: 'higher' },
  // The rate is the main thread's; this counts every thread, so a client whose collector works beside it shows here.
  { metric: 'CPU per watch event (the process, every thread)', unit: 'µs', value: (r) => (r.watchCpuMs === undefined ? undefined : (r.watchCpuMs * 1000) / events), better: 'lower' },
  { metric: 'RSS after watch + GC', unit: 'MiB', value: (r) => (r.rssAfterWatch ?? Number.NaN) / MiB, better: 'lower' },
  { metric: 'heap after watch + GC (V8 used; Go HeapInuse)', unit: 'MiB', value: (r) => (r.heapAfterWatch ?? Number.NaN) / MiB, better: 'lower' },
  {
    metric: 'heap after watch + GC per cached pod, above the empty client',
    unit: 'B/pod',
    value: (r) => ((r.heapAfterWatch ?? Number.NaN) - (r.heapAtStart ?? Number.NaN)) / pods,
    better: 'lower',
  },
];

async function runPlan(ctx: Context, plan: Plan, goBinary: string | undefined): Promise<Row[]> {
  ctx.log(`${plan.name}: starting the benchmark server with ${plan.pods} pods`);
  const server = new Child(new URL('./wireServer.js', import.meta.url), [`--pods=${plan.pods}`], ['--max-old-space-size=8192']);
  const results = new Map<ClientMode, ClientResult[]>();
  const record = (mode: ClientMode, r: number, res: ClientResult): void => {
    ctx.log(`${plan.name}: ${LABELS[mode]} run ${r + 1}: ${plan.metrics.map((m) => `${m.metric} ${fmt(m.value(res))} ${m.unit}`).join(', ')}`);
    const list = results.get(mode) ?? [];
    list.push(res);
    results.set(mode, list);
  };
  try {
    const ready = await server.next<WireReady>(300_000);
    ctx.log(`${plan.name}: ${(ready.podBytes / 1000).toFixed(2)} KB per pod`);
    for (let r = 0; r < ctx.repeats * (plan.roundsPerRepeat ?? 1); r++) {
      for (const mode of plan.modes) {
        const args: ClientArgs = { mode, workload: plan.workload, url: ready.url, kubeConfigYaml: ready.kubeConfigYaml, pods: plan.pods, timeoutMs: plan.timeoutMs };
        if (mode === 'client-go') {
          if (goBinary === undefined) throw new Error('client-go: the informer program was not built');
          record(mode, r, await runGoClient(goBinary, args));
          continue;
        }
        // rxkube-image: the same rxkube with the Node options the runner's image sets (PF-47).
        const flags = [...CLIENT_FLAGS, ...(plan.nodeFlags ?? []), ...(mode === 'rxkube-image' ? runnerNodeOptions() : [])];
        const client = new Child(new URL('./wireClient.js', import.meta.url), [], flags);
        try {
          record(mode, r, await client.request<ClientResult>('run', args, plan.timeoutMs * 3));
        } finally {
          await client.close();
        }
      }
    }
  } finally {
    await server.request('close', {}, 30_000).catch(() => undefined);
    await server.close();
  }
  const rows: Row[] = [];
  for (const m of plan.metrics) {
    for (const [mode, rs] of results) {
      const values = rs.map(m.value).filter((v): v is number => v !== undefined && Number.isFinite(v));
      if (values.length === 0) continue;
      rows.push({ bench: plan.name, case: LABELS[mode], metric: m.metric, unit: m.unit, mean: median(values), values, n: values.length, better: m.better });
    }
  }
  return rows;
}

function fmt(v: number | undefined): string {
  if (v === undefined) return '—';
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * A latency run's p99 is also given over the events written this long after its first: in its first hundred
 * milliseconds, right after the sync, a client may fall behind (PF-113), and the whole run's p99 holds those.
 */
const SETTLE_MS = 500;

/**
 * Between a latency run's two bursts, nothing is written for this long: the second burst finds a client that has
 * handled one before, as a controller's next burst does, with its code compiled for it (PF-113).
 */
const IDLE_MS = 1000;

function plans(ctx: Context): Plan[] {
  const small = ctx.scaled(envNumber('BENCH_LIST_PODS', 20_000), 500);
  const large = ctx.scaled(envNumber('BENCH_LARGE_PODS', 120_000), 1000);
  const events = ctx.scaled(envNumber('BENCH_UPDATE_EVENTS', 50_000), 1000);
  const largeEvents = ctx.scaled(envNumber('BENCH_LARGE_EVENTS', 20_000), 1000);
  const relistPods = ctx.scaled(envNumber('BENCH_RELIST_PODS', 50_000), 500);
  const latencyEvents = ctx.scaled(envNumber('BENCH_LATENCY_EVENTS', 30_000), 1000);
  const latencyRate = envNumber('BENCH_LATENCY_RATE', 10_000);
  const slowKeys = ctx.scaled(envNumber('BENCH_SLOW_KEYS', 5_000), 100);
  const slowEvents = ctx.scaled(envNumber('BENCH_SLOW_EVENTS', 200_000), 1000);
  // BENCH_BASELINE=<another checkout, built>: its rxkube runs beside this one's, interleaved, for a before/after.
  const baseline: ClientMode[] = (process.env.BENCH_BASELINE ?? '') === '' ? [] : ['rxkube-baseline'];
  // BENCH_CLIENT_GO=0: without Go's client-go (no Go toolchain on the machine).
  const go: ClientMode[] = process.env.BENCH_CLIENT_GO === '0' ? [] : ['client-go'];
  const watched: ClientMode[] = ['floor', 'client-node', ...go, 'rxkube', ...baseline];
  // A list and then a watch of `events` MODIFIED events at once, with no handler or with ten.
  const listWatch = (pods: number, events: number, handlers: number, modes: readonly ClientMode[], timeoutMs: number): Plan => ({
    name: `list ${k(pods)} + watch ${k(events)}, ${handlers} handlers`,
    pods,
    modes,
    workload: { kind: 'sync', handlers, watchEvents: events },
    timeoutMs,
    metrics: [syncTime, syncRss, ...watchMetrics(pods, events)],
  });
  const latency = (name: string, nodeFlags: readonly string[]): Plan => ({
    name,
    pods: ctx.scaled(10_000, 500),
    modes: ['client-node', 'rxkube', ...baseline],
    workload: { kind: 'latency', handlers: 10, events: latencyEvents, perSecond: latencyRate, settleMs: SETTLE_MS, idleMs: IDLE_MS },
    timeoutMs: 120_000,
    nodeFlags,
    // A run takes seconds, and one stall of the machine can set its p99: three rounds for every repeat.
    roundsPerRepeat: 3,
    metrics: [
      { metric: 'write → handler p50', unit: 'ms', value: (r) => r.latencyP50, better: 'lower' },
      { metric: 'write → handler p99', unit: 'ms', value: (r) => r.latencyP99, better: 'lower' },
      { metric: 'write → handler max', unit: 'ms', value: (r) => r.latencyMax, better: 'lower' },
      { metric: `write → handler p99 after ${SETTLE_MS} ms`, unit: 'ms', value: (r) => r.latencySettledP99, better: 'lower' },
      { metric: `write → handler p50, second burst (after ${IDLE_MS / 1000} s idle)`, unit: 'ms', value: (r) => r.latencySecondP50, better: 'lower' },
      { metric: `write → handler p99, second burst (after ${IDLE_MS / 1000} s idle)`, unit: 'ms', value: (r) => r.latencySecondP99, better: 'lower' },
    ],
  });
  return [
    // Also under the runner image's Node options (PF-47), which set how much memory V8 keeps committed.
    listWatch(small, events, 0, [...watched, 'rxkube-image', 'rxkube-keep'], 120_000),
    listWatch(small, events, 10, [...watched, 'rxkube-image'], 120_000),
    listWatch(large, largeEvents, 0, [...watched, 'rxkube-image'], 300_000),
    listWatch(large, largeEvents, 10, [...watched, 'rxkube-image'], 300_000),
    {
      name: `relist ${k(relistPods)} after 410`,
      pods: relistPods,
      // rxkube only: the target is its own peak over its steady state, and a run costs a 50k sync.
      modes: ['rxkube'],
      workload: { kind: 'relist' },
      timeoutMs: 180_000,
      metrics: [
        syncRss,
        { metric: 'peak RSS during relist', unit: 'MiB', value: (r) => (r.relistPeakRss ?? Number.NaN) / MiB, better: 'lower' },
        { metric: 'relist peak / steady RSS', unit: '×', value: (r) => (r.relistPeakRss ?? Number.NaN) / r.rssAfterSync, better: 'lower' },
        { metric: 'relist time', unit: 's', value: (r) => (r.relistMs ?? Number.NaN) / 1000, better: 'lower' },
      ],
    },
    latency(`10 handlers, ${k(latencyRate)}/s`, []),
    // Every cached object survives young-generation collections, whose pauses grow with the young generation: the
    // same workload with the young generation the runner's image sets shows how much of the tail those pauses are.
    latency(`10 handlers, ${k(latencyRate)}/s, ${runnerNodeOptions().join(' ')} (the runner image's)`, runnerNodeOptions()),
    {
      name: `slow handler, ${k(slowEvents)} events / ${k(slowKeys)} keys`,
      pods: slowKeys,
      modes: ['rxkube'],
      workload: { kind: 'slow', events: slowEvents, handlerMs: 10 },
      timeoutMs: 180_000,
      metrics: [
        { metric: 'most entries buffered (coalesce byKey)', unit: 'entries', value: (r) => r.maxDepth, better: 'lower' },
        { metric: 'RSS before burst (after GC)', unit: 'MiB', value: (r) => (r.rssBeforeBurst ?? Number.NaN) / MiB, better: 'lower' },
        { metric: 'RSS half-way through the burst', unit: 'MiB', value: (r) => (r.rssHalfBurst ?? Number.NaN) / MiB, better: 'lower' },
        { metric: 'RSS after burst (after GC)', unit: 'MiB', value: (r) => (r.rssAfterBurst ?? Number.NaN) / MiB, better: 'lower' },
        { metric: 'peak RSS during burst', unit: 'MiB', value: (r) => (r.rssPeakBurst ?? Number.NaN) / MiB, better: 'lower' },
        { metric: 'JS heap after GC, before burst', unit: 'MiB', value: (r) => (r.heapBeforeBurst ?? Number.NaN) / MiB, better: 'lower' },
        { metric: 'JS heap after GC, after burst', unit: 'MiB', value: (r) => (r.heapAfterBurst ?? Number.NaN) / MiB, better: 'lower' },
      ],
    },
  ];
}

function k(n: number): string {
  return n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

export const compare: Benchmark = {
  name: 'compare',
  description: 'floor vs client-node vs client-go vs rxkube, each client in its own process against one benchmark server: list + watch, relist, latency, slow handler',
  async run(ctx: Context): Promise<Row[]> {
    const filter = (process.env.BENCH_WORKLOADS ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    const selected = plans(ctx).filter((plan) => filter.length === 0 || filter.some((f) => plan.name.toLowerCase().includes(f)));
    // Built once (or found in its cache) before any workload, so no run is timed with a build beside it.
    const goBinary = selected.some((p) => p.modes.includes('client-go')) ? await goInformerBinary(ctx.log) : undefined;
    const rows: Row[] = [];
    for (const plan of selected) rows.push(...(await runPlan(ctx, plan, goBinary)));
    return rows;
  },
};
