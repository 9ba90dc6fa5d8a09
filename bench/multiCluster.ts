// Bench — many clusters: a fleet of C simulated clusters of N pods each,
// synced by one multi-cluster informer, against one cluster of C × N pods
// synced by one informer (and by a multi-cluster informer, to show what the
// merging itself costs). Each sync runs in a fresh client process; the
// servers run in processes of their own; clients run interleaved so machine
// noise hits each alike. With BENCH_BASELINE each also runs the baseline
// build, interleaved, and the rows become side-by-side ones with the median
// of the per-round ratios.
//
//   npm run bench -- multicluster
//   BENCH_FLEET_CLUSTERS=10 BENCH_FLEET_PODS=5000 BENCH_REPEATS=5 npm run bench -- multicluster
//   BENCH_BASELINE=../old BENCH_FLEET_PODS=2000 BENCH_REPEATS=5 npm run bench -- multicluster

import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { MiB } from './lib/heap.js';
import { Child } from './lib/ipc.js';
import { buildLabel, builds, buildsOfRound, type Build } from './lib/library.js';
import { row, sideRow, type Row } from './lib/report.js';
import { summarize } from './lib/stats.js';
import type { FleetArgs, FleetMode, FleetResult } from './fleetClient.js';
import type { FleetReady } from './fleetServer.js';

const CHILD_FLAGS = ['--expose-gc', '--max-old-space-size=4096'];

export const multiCluster: Benchmark = {
  name: 'multicluster',
  description: 'sync time and memory: C clusters of N pods in one multi-cluster informer, against one cluster of C × N pods',
  async run(ctx: Context): Promise<Row[]> {
    const clusters = envNumber('BENCH_FLEET_CLUSTERS', 10);
    const perCluster = ctx.scaled(envNumber('BENCH_FLEET_PODS', 5_000));
    const total = clusters * perCluster;
    const namespaces = 10;
    const labels: Record<FleetMode, string> = {
      single: `1 cluster of ${total}: informer`,
      fleet: `${clusters} clusters of ${perCluster}: multiClusterInformer`,
      'fleet-of-one': `1 cluster of ${total}: multiClusterInformer`,
    };
    const withBaseline = builds().length > 1;
    ctx.log(`multicluster: seeding ${clusters} clusters of ${perCluster} pods, and 1 of ${total}`);
    const fleetServer = new Child(new URL('./fleetServer.js', import.meta.url), [`--clusters=${clusters}`, `--pods=${perCluster}`, `--namespaces=${namespaces}`], ['--max-old-space-size=8192']);
    const singleServer = new Child(new URL('./fleetServer.js', import.meta.url), ['--clusters=1', `--pods=${total}`, `--namespaces=${namespaces}`], ['--max-old-space-size=8192']);
    try {
      const [fleet, single] = [await fleetServer.next<FleetReady>(900_000), await singleServer.next<FleetReady>(900_000)];
      ctx.log(`multicluster: seeded in ${(fleet.seedMs / 1000).toFixed(1)} s and ${(single.seedMs / 1000).toFixed(1)} s; ${(fleet.jsonBytes / total).toFixed(0)} B of JSON per pod`);
      const results = new Map<FleetMode, FleetResult[]>();
      for (let r = 0; r < ctx.repeats; r++) {
        for (const mode of ['single', 'fleet', 'fleet-of-one'] as const) {
          for (const build of buildsOfRound(r)) {
            const client = new Child(new URL('./fleetClient.js', import.meta.url), [], CHILD_FLAGS);
            try {
              const args: FleetArgs = { mode, build, kubeConfigYamls: mode === 'fleet' ? fleet.kubeConfigYamls : single.kubeConfigYamls, expected: total, timeoutMs: 600_000 };
              const res = await client.request<FleetResult>('run', args, 660_000);
              ctx.log(
                `multicluster: ${labels[mode]}${withBaseline ? ` (${buildLabel(build)})` : ''} run ${r + 1}: ${(res.syncMs / 1000).toFixed(2)} s, CPU ${(res.cpuMs / 1000).toFixed(2)} s, heap ${(res.heapBytes / MiB).toFixed(0)} MiB, peak RSS ${(res.maxRssBytes / MiB).toFixed(0)} MiB`,
              );
              results.set(mode, [...(results.get(mode) ?? []), res]);
            } finally {
              await client.close();
            }
          }
        }
      }
      const spread = (values: number[], digits: number): string => `min ${Math.min(...values).toFixed(digits)}, max ${Math.max(...values).toFixed(digits)}`;
      const rows: Row[] = [];
      for (const [mode, all] of results) {
        if (withBaseline) {
          // Side by side, one column per build, each value in round order so the ratios pair runs of one round.
          for (const build of ['current', 'baseline'] as const satisfies readonly Build[]) {
            const rs = all.filter((x) => x.build === build);
            rows.push(sideRow(`multicluster ${labels[mode]}`, buildLabel(build), 'time to sync', 's', rs.map((x) => x.syncMs / 1000)));
            rows.push(sideRow(`multicluster ${labels[mode]}`, buildLabel(build), 'CPU over the sync', 's', rs.map((x) => x.cpuMs / 1000)));
            rows.push(sideRow(`multicluster ${labels[mode]}`, buildLabel(build), 'heap after gc', 'MiB', rs.map((x) => x.heapBytes / MiB)));
            rows.push(sideRow(`multicluster ${labels[mode]}`, buildLabel(build), 'peak RSS (process)', 'MiB', rs.map((x) => x.maxRssBytes / MiB)));
          }
          continue;
        }
        const secs = all.map((x) => x.syncMs / 1000);
        const cpu = all.map((x) => x.cpuMs / 1000);
        const heap = all.map((x) => x.heapBytes / MiB);
        const rss = all.map((x) => x.maxRssBytes / MiB);
        rows.push(row('multicluster', labels[mode], 'time to sync', 's', summarize(secs), spread(secs, 2)));
        rows.push(row('multicluster', labels[mode], 'CPU over the sync', 's', summarize(cpu), spread(cpu, 2)));
        rows.push(row('multicluster', labels[mode], 'heap after gc', 'MiB', summarize(heap), spread(heap, 0)));
        rows.push(row('multicluster', labels[mode], 'peak RSS (process)', 'MiB', summarize(rss), spread(rss, 0)));
      }
      return rows;
    } finally {
      await Promise.all([fleetServer, singleServer].map((s) => s.request('close', {}, 60_000).catch(() => undefined)));
      await Promise.all([fleetServer.close(), singleServer.close()]);
    }
  },
};
