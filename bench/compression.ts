// Compression: what asking for gzip costs the client in CPU and saves on the
// wire. The simulator (its own process) holds N pods and gzips lists over
// 128 KiB as kube-apiserver does; a relay (its own process) stands for the
// network, once at loopback speed and once limited to BENCH_COMPRESSION_MBPS.
// Each list runs in a fresh client process (bench/listClient.ts), gzip and
// identity interleaved round by round, so a ratio compares runs made seconds
// apart.
//
//   npm run bench -- compression
//   BENCH_COMPRESSION_PODS=20000 BENCH_COMPRESSION_MBPS=100 BENCH_REPEATS=5 npm run bench -- compression

import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { Child } from './lib/ipc.js';
import { row, type Row } from './lib/report.js';
import { summarize } from './lib/stats.js';
import type { ListArgs, ListResult } from './listClient.js';
import type { RelayReady, RelayStats } from './relayProcess.js';
import type { SimReady } from './simServer.js';

interface Run {
  readonly ms: number;
  readonly cpuMs: number;
  readonly wireBytes: number;
}

const MODES = ['gzip', 'identity'] as const;
type Mode = (typeof MODES)[number];

/** The simulator's kubeconfig, pointed at the relay. */
export function throughRelay(ready: SimReady, relayPort: number): string {
  const port = new URL(ready.url).port;
  return ready.kubeConfigYaml.replace(`127.0.0.1:${port}`, `127.0.0.1:${relayPort}`);
}

/** Starts the relay process in front of `targetPort`. */
export async function startRelay(targetPort: number): Promise<{ readonly child: Child; readonly port: number }> {
  const child = new Child(new URL('./relayProcess.js', import.meta.url), [`--target=${targetPort}`], []);
  const ready = await child.next<RelayReady>(30_000);
  return { child, port: ready.port };
}

export const compression: Benchmark = {
  name: 'compression',
  description: 'LIST of N pods with and without gzip: client CPU against bytes on the wire, on loopback and a throttled link',
  async run(ctx: Context): Promise<Row[]> {
    const n = ctx.scaled(envNumber('BENCH_COMPRESSION_PODS', 20_000));
    const mbps = envNumber('BENCH_COMPRESSION_MBPS', 100);
    ctx.log(`compression: starting the simulator with ${n} pods`);
    const sim = new Child(new URL('./simServer.js', import.meta.url), [`--pods=${n}`, '--namespaces=20', '--tls=1'], ['--max-old-space-size=8192']);
    let relay: Awaited<ReturnType<typeof startRelay>> | undefined;
    try {
      const ready = await sim.next<SimReady>(600_000);
      relay = await startRelay(Number(new URL(ready.url).port));
      const kubeConfigYaml = throughRelay(ready, relay.port);
      const links = [
        { name: 'loopback', bytesPerSecond: undefined },
        { name: `${mbps} Mbit/s`, bytesPerSecond: (mbps * 1e6) / 8 },
      ] as const;
      const rows: Row[] = [];
      for (const link of links) {
        await relay.child.request('rate', { bytesPerSecond: link.bytesPerSecond });
        const runs: Record<Mode, Run[]> = { gzip: [], identity: [] };
        for (let r = 0; r < ctx.repeats; r++) {
          for (const mode of MODES) {
            const before = await relay.child.request<RelayStats>('stats');
            const client = new Child(new URL('./listClient.js', import.meta.url), [], []);
            try {
              const args: ListArgs = { kubeConfigYaml, transport: { compression: mode === 'gzip' }, expected: n, pageSize: 500, timeoutMs: 600_000 };
              const res = await client.request<ListResult>('run', args, 660_000);
              const after = await relay.child.request<RelayStats>('stats');
              const run = { ms: res.ms, cpuMs: res.cpuMs, wireBytes: after.bytesToClients - before.bytesToClients };
              runs[mode].push(run);
              ctx.log(`compression: ${link.name} ${mode} run ${r + 1}: ${(run.ms / 1000).toFixed(2)} s, CPU ${(run.cpuMs / 1000).toFixed(2)} s, ${(run.wireBytes / 1e6).toFixed(2)} MB on the wire`);
            } finally {
              await client.close();
            }
          }
        }
        const bench = `compression ${link.name}`;
        for (const mode of MODES) {
          const rs = runs[mode];
          rows.push(row(bench, mode, `time to list ${n} pods (pages of 500)`, 's', summarize(rs.map((x) => x.ms / 1000))));
          rows.push(row(bench, mode, 'client CPU (user+system, all threads)', 's', summarize(rs.map((x) => x.cpuMs / 1000))));
          rows.push(row(bench, mode, 'bytes from the server', 'MB', summarize(rs.map((x) => x.wireBytes / 1e6))));
        }
        const ratios = (f: (x: Run) => number): number[] => runs.gzip.map((g, i) => f(g) / f(runs.identity[i] as Run));
        const note = 'per-round ratio; p50 is the median';
        rows.push(row(bench, 'gzip / identity', 'time', 'x', summarize(ratios((x) => x.ms)), note));
        rows.push(row(bench, 'gzip / identity', 'client CPU', 'x', summarize(ratios((x) => x.cpuMs)), note));
        rows.push(row(bench, 'gzip / identity', 'bytes', 'x', summarize(ratios((x) => x.wireBytes)), note));
        const extraCpuPerMbSaved = runs.gzip.map((g, i) => {
          const id = runs.identity[i] as Run;
          return (g.cpuMs - id.cpuMs) / ((id.wireBytes - g.wireBytes) / 1e6);
        });
        rows.push(row(bench, 'gzip − identity', 'client CPU per MB saved', 'ms/MB', summarize(extraCpuPerMbSaved), 'per round'));
      }
      return rows;
    } finally {
      if (relay !== undefined) {
        await relay.child.request('close', {}, 10_000).catch(() => undefined);
        await relay.child.close();
      }
      await sim.request('close', {}, 30_000).catch(() => undefined);
      await sim.close();
    }
  },
};
