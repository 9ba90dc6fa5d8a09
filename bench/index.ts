// rxkube's benchmark suite: `npm run bench`.
//
//   npm run bench                    # the comparison and the micro-benchmarks (about 25 minutes on 2 cores);
//                                    # writes bench/RESULTS.md
//   BENCH_QUICK=1 npm run bench      # every size × 0.1, one repeat (about a minute), for development
//   BENCH_FILTER=micro npm run bench # benchmarks whose name contains one of a comma list
//   npm run bench -- micro queue     # the same, named as arguments
//                                    # (compare, micro, queue, store; decode, informer-sync, watch,
//                                    # controller-priority, readyourwrites, compression, writes,
//                                    # transport, paging, multicluster, mccontroller, sharding,
//                                    # newcomer, webhooks, apiserver run only when named)
//   BENCH_WORKLOADS=relist,slow      # compare: only the workloads whose name contains one of these
//   BENCH_SCALE=0.5 BENCH_REPEATS=5  # every default size × 0.5; repeats of each client run (default 3)
//   BENCH_BASELINE=../old            # compare, multicluster, mccontroller, sharding: also run the rxkube of
//                                    # another checkout (built: its dist/), interleaved, as `rxkube baseline`,
//                                    # to measure a change before/after
//   BENCH_CLIENT_GO=0                # compare: without Go's client-go (built from Go modules otherwise)
//
// Sizes (before BENCH_SCALE): compare: BENCH_LIST_PODS (20k), BENCH_UPDATE_EVENTS (50k), BENCH_LARGE_PODS
// (120k), BENCH_LARGE_EVENTS (20k), BENCH_RELIST_PODS (50k), BENCH_LATENCY_EVENTS (30k) at BENCH_LATENCY_RATE (10k/s), BENCH_SLOW_KEYS
// (5k) and BENCH_SLOW_EVENTS (200k); micro: BENCH_MICRO_RELIST (10k), BENCH_MICRO_BATCHES (50); queue:
// BENCH_QUEUE_BATCHES (200); store:
// BENCH_STORE_PODS (20k), BENCH_STORE_BATCHES (40); decode: BENCH_DECODE_PODS (100k); informer-sync:
// BENCH_SYNC_PODS (100k), BENCH_SIM_NAMESPACES (20), BENCH_SYNC_MODES; watch: BENCH_WATCH_PODS (10k),
// BENCH_WATCH_EVENTS (50k), BENCH_WATCH_REPLAY_EVENTS (30k), BENCH_WATCH_RATE (50000; 0 = flat out);
// controller-priority: BENCH_PRIORITY_PODS (20k), BENCH_PRIORITY_RECONCILE_MS (2), BENCH_PRIORITY_CONCURRENCY (1);
// readyourwrites: BENCH_RYW_DURATION (20 s), BENCH_RYW_CHURN (×1), BENCH_RYW_WATCH_DELAY_MS (0); webhooks:
// BENCH_WEBHOOK_ROUNDS (5), BENCH_WEBHOOK_SECONDS (10), BENCH_WEBHOOK_RATE (1000), BENCH_WEBHOOK_CREATES (400);
// apiserver: BENCH_APISERVER_PODS (20k), BENCH_APISERVER_PATCHES (5k), BENCH_APISERVER_CLIENTS (all; a comma list);
// multicluster: BENCH_FLEET_CLUSTERS (10), BENCH_FLEET_PODS (5k); mccontroller: BENCH_MCC_CLUSTERS (10), BENCH_MCC_PODS (2k),
// BENCH_MCC_CONCURRENCY (4), BENCH_MCC_WORK (microtask | none); sharding: BENCH_SHARD_REPLICAS (3), BENCH_SHARD_PODS (1k),
// BENCH_SHARD_CONCURRENCY (4), BENCH_SHARD_LEASE_MS / _RENEW_MS / _RETRY_MS (3000 / 2000 / 500), BENCH_SHARD_TIMEOUT_MS (120000).
// BENCH_JSON=path also writes the rows and the machine as JSON; BENCH_RESULTS=path moves RESULTS.md.
//
// Progress goes to stderr, the tables to stdout.

import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { apiserver } from './apiserver.js';
import { compare, LABELS } from './compare.js';
import { compression } from './compression.js';
import { controllerPriority } from './controllerPriority.js';
import { paging } from './paging.js';
import { transport } from './transport.js';
import { writes } from './writes.js';
import { decode } from './decode.js';
import { informerSync } from './informerSync.js';
import { micro } from './micro.js';
import { mcController } from './mcController.js';
import { multiCluster } from './multiCluster.js';
import { newcomer } from './newcomer.js';
import { queue } from './queue.js';
import { readYourWrites } from './readYourWrites.js';
import { sharding } from './sharding.js';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { describeMachine, machine, sideBySide, table, type Row } from './lib/report.js';
import { store } from './store.js';
import { watchThroughput } from './watchThroughput.js';
import { webhooks } from './webhooks.js';

const all: readonly Benchmark[] = [
  compare, micro, queue, store, decode, informerSync, watchThroughput, controllerPriority, readYourWrites, compression, writes, transport, paging,
  multiCluster, mcController, sharding, newcomer, webhooks, apiserver,
];
/** What runs without BENCH_FILTER: the side-by-side comparison and the micro-benchmarks (about 25 minutes on 2 cores). */
const defaults = new Set(['compare', 'micro', 'queue', 'store']);

// BENCH_QUICK=1: every size × 0.1 and one repeat, for development (about a minute).
const quick = process.env.BENCH_QUICK === '1';
const scale = envNumber('BENCH_SCALE', quick ? 0.1 : 1);
if (!(scale > 0)) throw new TypeError(`BENCH_SCALE: expected a positive number, got ${process.env.BENCH_SCALE}`);
const repeats = envNumber('BENCH_REPEATS', quick ? 1 : 3);
if (!Number.isSafeInteger(repeats) || repeats < 1) throw new TypeError(`BENCH_REPEATS: expected a positive integer, got ${process.env.BENCH_REPEATS}`);
// Names may also follow the command, as BENCH_FILTER gives them: `npm run bench -- controller-priority queue`.
const filters = [process.env.BENCH_FILTER ?? '', ...process.argv.slice(2)]
  .flatMap((s) => s.split(','))
  .map((s) => s.trim().toLowerCase())
  .filter(Boolean);
const selected = all.filter((b) => (filters.length === 0 ? defaults.has(b.name) : filters.some((f) => b.name.includes(f))));
if (selected.length === 0) {
  throw new TypeError(`BENCH_FILTER / arguments: ${JSON.stringify(filters.join(','))} matches none of ${all.map((b) => b.name).join(', ')}`);
}
if ((globalThis as { gc?: unknown }).gc === undefined) throw new Error('run with `node --expose-gc` (npm run bench does)');

/** The BENCH_* variables this run was given, as a command prefix, so a figure can be reproduced. */
function benchEnv(): string {
  return Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v ?? ''} `)
    .join('');
}

/** The benchmarks named as arguments, as the command line shows them. */
function benchArgs(): string {
  return process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : '';
}

const started = performance.now();
const ctx: Context = {
  scale,
  repeats,
  scaled: (n, min = 1) => Math.max(min, Math.round(n * scale)),
  log: (message) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`),
};

const m = machine();
ctx.log(`${selected.map((b) => b.name).join(', ')}; scale ${scale}, ${repeats} repeats; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const rows: Row[] = [];
const failures: string[] = [];
for (const b of selected) {
  ctx.log(`== ${b.name}: ${b.description}`);
  const t0 = performance.now();
  try {
    rows.push(...(await b.run(ctx)));
  } catch (e) {
    // One broken benchmark must not hide the others' figures; it still fails the run.
    failures.push(`${b.name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    ctx.log(`!! ${b.name} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  ctx.log(`== ${b.name} took ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
m.loadAfter = os.loadavg();

const out = [
  '',
  describeMachine(m),
  `command: ${benchEnv()}npm run bench${benchArgs()} (scale ${scale}, ${repeats} repeats); total ${((performance.now() - started) / 1000).toFixed(0)} s`,
  'p50/p99: percentiles of the metric over its n samples (runs; store: batches; lag: events). rme: 95 % margin of error of the mean.',
  '',
  ...(rows.some((r) => r.values !== undefined) ? [sideBySide(rows, Object.values(LABELS)), ''] : []),
  ...(rows.some((r) => r.values === undefined) ? [table(rows.filter((r) => r.values === undefined)), ''] : []),
].join('\n');
process.stdout.write(out);
// A complete default run is the reference: it replaces bench/RESULTS.md (BENCH_RESULTS=path writes elsewhere, '' nowhere).
const resultsPath = process.env.BENCH_RESULTS ?? (filters.length === 0 && !quick && process.env.BENCH_SCALE === undefined ? fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url)) : '');
if (resultsPath !== '' && failures.length === 0) {
  writeFileSync(resultsPath, ['# rxkube benchmark results', '', 'Written by `npm run bench` (see README.md for what each row measures).', '', '```', out.trim(), '```', ''].join('\n'));
  process.stderr.write(`results written to ${resultsPath}\n`);
}
if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify({ machine: m, scale, repeats, rows, failures }, null, 2));
if (failures.length > 0) {
  process.stderr.write(`\n${failures.length} benchmark(s) failed:\n${failures.join('\n')}\n`);
  process.exitCode = 1;
}
