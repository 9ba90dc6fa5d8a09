// Bench — the multi-cluster controller: C simulated clusters of N pods
// (bench/fleetServer.ts, a process of its own), one
// multiClusterController({ for: multiClusterInformer(...), reconcile,
// concurrency }) in a fresh client process (bench/mcControllerClient.ts):
// the time from subscribing until every pod of every cluster was reconciled
// once, the client's CPU over that span and its peak RSS. With BENCH_BASELINE
// the baseline build runs too, interleaved round by round, and the report
// gives the median of the per-round ratios.
//
//   npm run bench -- mccontroller
//   BENCH_BASELINE=../old BENCH_REPEATS=7 npm run bench -- mccontroller

import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { MiB } from './lib/heap.js';
import { Child } from './lib/ipc.js';
import { buildLabel, builds, buildsOfRound, type Build } from './lib/library.js';
import { sideRow, type Row } from './lib/report.js';
import type { McControllerArgs, McControllerResult, McWork } from './mcControllerClient.js';
import type { FleetReady } from './fleetServer.js';

const CHILD_FLAGS = ['--expose-gc', '--max-old-space-size=4096'];

export const mcController: Benchmark = {
  name: 'mccontroller',
  description: 'multi-cluster controller: C clusters of N pods, from subscribe until every pod was reconciled once; CPU and peak RSS (BENCH_BASELINE: before/after)',
  async run(ctx: Context): Promise<Row[]> {
    const clusters = envNumber('BENCH_MCC_CLUSTERS', 10);
    const perCluster = ctx.scaled(envNumber('BENCH_MCC_PODS', 2_000));
    const concurrency = envNumber('BENCH_MCC_CONCURRENCY', 4);
    const work = (process.env.BENCH_MCC_WORK ?? 'microtask') as McWork;
    if (work !== 'none' && work !== 'microtask') throw new TypeError(`BENCH_MCC_WORK: expected none or microtask, got ${JSON.stringify(work)}`);
    const total = clusters * perCluster;
    const bench = `mccontroller ${clusters}×${perCluster} pods, concurrency ${concurrency}, reconcile ${work === 'none' ? 'sync' : 'awaits a microtask'}`;
    ctx.log(`mccontroller: ${builds().join(' and ')} build; seeding ${clusters} clusters of ${perCluster} pods`);
    const server = new Child(new URL('./fleetServer.js', import.meta.url), [`--clusters=${clusters}`, `--pods=${perCluster}`, '--namespaces=10'], ['--max-old-space-size=4096']);
    try {
      const fleet = await server.next<FleetReady>(600_000);
      ctx.log(`mccontroller: seeded in ${(fleet.seedMs / 1000).toFixed(1)} s`);
      const results = new Map<Build, McControllerResult[]>();
      const runOnce = async (build: Build): Promise<McControllerResult> => {
        const client = new Child(new URL('./mcControllerClient.js', import.meta.url), [], CHILD_FLAGS);
        try {
          const args: McControllerArgs = { build, kubeConfigYamls: fleet.kubeConfigYamls, expected: total, concurrency, work, timeoutMs: 300_000 };
          return await client.request<McControllerResult>('run', args, 330_000);
        } finally {
          await client.close();
        }
      };
      // One run not counted: the servers' first LISTs are slower (their code not yet optimised), which would weigh on round 1's first build.
      await runOnce('current');
      for (let r = 0; r < ctx.repeats; r++) {
        for (const build of buildsOfRound(r)) {
          const res = await runOnce(build);
          ctx.log(
            `mccontroller: ${buildLabel(build)} round ${r + 1}: ${(res.ms / 1000).toFixed(2)} s, CPU ${(res.cpuMs / 1000).toFixed(2)} s, peak RSS ${(res.maxRssBytes / MiB).toFixed(0)} MiB` +
              `, ${res.reconciles} reconciles${res.failures > 0 ? `, ${res.failures} failed` : ''}`,
          );
          results.set(build, [...(results.get(build) ?? []), res]);
        }
      }
      const rows: Row[] = [];
      for (const [build, rs] of results) {
        const kase = buildLabel(build);
        rows.push(sideRow(bench, kase, 'time until every pod was reconciled once', 's', rs.map((x) => x.ms / 1000)));
        rows.push(sideRow(bench, kase, 'CPU of the client process over that time', 's', rs.map((x) => x.cpuMs / 1000)));
        rows.push(sideRow(bench, kase, 'peak RSS of the client process', 'MiB', rs.map((x) => x.maxRssBytes / MiB)));
      }
      return rows;
    } finally {
      await server.request('close', {}, 60_000).catch(() => undefined);
      await server.close();
    }
  },
};
