// Paging: what the informer's pages of 500 cost against one unpaged LIST of
// the same pods, from the benchmark server (bench/wireServer.ts, which costs
// next to nothing per page, so what differs is the client's). Fresh processes,
// the four modes interleaved round by round. BENCH_PAGING_PROFILE=dir also
// writes a CPU profile of every run there (node --cpu-prof).
//
//   npm run bench -- paging
//   BENCH_PAGING_PODS=20000 BENCH_PAGING_PROFILE=/tmp/prof npm run bench -- paging

import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { Child } from './lib/ipc.js';
import { row, type Row } from './lib/report.js';
import { summarize } from './lib/stats.js';
import type { PagingArgs, PagingMode, PagingResult } from './pagingClient.js';
import type { WireReady } from './wireServer.js';

const MODES: readonly PagingMode[] = ['informer paged', 'informer unpaged', 'listAll paged', 'listAll unpaged'];

export const paging: Benchmark = {
  name: 'paging',
  description: "the informer's paged initial LIST against one unpaged LIST of the same pods, and listAll alone",
  async run(ctx: Context): Promise<Row[]> {
    const pods = ctx.scaled(envNumber('BENCH_PAGING_PODS', 20_000));
    const profileDir = process.env.BENCH_PAGING_PROFILE;
    const server = new Child(new URL('./wireServer.js', import.meta.url), [`--pods=${pods}`], []);
    try {
      const ready = await server.next<WireReady>(300_000);
      const runs = new Map<PagingMode, PagingResult[]>();
      for (let r = 0; r < ctx.repeats; r++) {
        for (const mode of MODES) {
          const flags = ['--expose-gc', ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${mode.replace(' ', '-')}-${r + 1}.cpuprofile`])];
          const client = new Child(new URL('./pagingClient.js', import.meta.url), [], flags);
          try {
            const res = await client.request<PagingResult>('run', { mode, kubeConfigYaml: ready.kubeConfigYaml, pods } satisfies PagingArgs, 330_000);
            runs.set(mode, [...(runs.get(mode) ?? []), res]);
            ctx.log(
              `paging: round ${r + 1} ${mode}: ${res.ms.toFixed(0)} ms, CPU ${res.cpuMs.toFixed(0)} ms; ${res.pages} requests: waiting ${res.waitMs.toFixed(0)} ms, bodies ${res.bodyMs.toFixed(0)} ms, between ${res.betweenMs.toFixed(0)} ms, before and after ${res.edgesMs.toFixed(0)} ms`,
            );
          } finally {
            await client.close();
          }
        }
      }
      const rows: Row[] = [];
      const bench = `paging (${pods} pods)`;
      for (const mode of MODES) {
        const rs = runs.get(mode) ?? [];
        rows.push(row(bench, mode, 'time to list', 'ms', summarize(rs.map((x) => x.ms))));
        rows.push(row(bench, mode, 'client CPU', 'ms', summarize(rs.map((x) => x.cpuMs))));
        rows.push(row(bench, mode, 'waiting for headers (sum)', 'ms', summarize(rs.map((x) => x.waitMs)), `${rs[0]?.pages ?? 0} requests`));
        rows.push(row(bench, mode, 'headers to end of body (sum)', 'ms', summarize(rs.map((x) => x.bodyMs))));
        rows.push(row(bench, mode, 'between requests (sum)', 'ms', summarize(rs.map((x) => x.betweenMs))));
        rows.push(row(bench, mode, 'before the first, after the last', 'ms', summarize(rs.map((x) => x.edgesMs))));
      }
      for (const [a, b] of [['informer paged', 'informer unpaged'], ['listAll paged', 'listAll unpaged'], ['informer unpaged', 'listAll unpaged']] as const) {
        const ra = runs.get(a) ?? [];
        const rb = runs.get(b) ?? [];
        rows.push(row(bench, `${a} / ${b}`, 'time', 'x', summarize(ra.map((x, i) => x.ms / (rb[i] as PagingResult).ms)), 'per-round ratio; p50 is the median'));
      }
      return rows;
    } finally {
      await server.close();
    }
  },
};
