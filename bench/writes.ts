// Writes over TLS: rxkube's objectClient against client-node's CoreV1Api,
// creating and JSON-patching ConfigMaps in the simulator (its own process),
// one at a time and 16 in flight. Each client runs in a fresh process per
// round, the two interleaved round by round; the simulator counts the
// connections (TLS handshakes) each case opened.
//
//   npm run bench -- writes
//   BENCH_WRITES=300 BENCH_REPEATS=5 npm run bench -- writes

import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { Child } from './lib/ipc.js';
import { row, type Row } from './lib/report.js';
import { summarize } from './lib/stats.js';
import type { SimReady } from './simServer.js';
import type { WriteArgs, WriteClientMode, WriteResult } from './writeClient.js';

const CLIENTS: readonly WriteClientMode[] = ['rxkube', 'client-node'];
const CASES = [
  { kind: 'create', concurrency: 1 },
  { kind: 'patch', concurrency: 1 },
  { kind: 'create', concurrency: 16 },
  { kind: 'patch', concurrency: 16 },
] as const;

interface Sample {
  readonly msPerWrite: number;
  readonly connections: number;
}

const caseName = (c: (typeof CASES)[number]): string => `${c.kind}, ${c.concurrency === 1 ? 'one at a time' : `${c.concurrency} in flight`}`;

export const writes: Benchmark = {
  name: 'writes',
  description: 'creates and patches over TLS, one at a time and 16 in flight: rxkube objectClient vs client-node CoreV1Api',
  async run(ctx: Context): Promise<Row[]> {
    const count = ctx.scaled(envNumber('BENCH_WRITES', 300), 16);
    const sim = new Child(new URL('./simServer.js', import.meta.url), ['--pods=0', '--tls=1'], []);
    try {
      const ready = await sim.next<SimReady>(60_000);
      const samples = new Map<string, Sample[]>();
      for (let r = 0; r < ctx.repeats; r++) {
        for (const mode of CLIENTS) {
          const client = new Child(new URL('./writeClient.js', import.meta.url), [], []);
          try {
            // Warm-up, unmeasured: module loading, the JIT and the first handshake are no write's cost.
            await client.request<WriteResult>('run', { mode, kubeConfigYaml: ready.kubeConfigYaml, kind: 'create', prefix: `r${r}-${mode}-warm`, count: 20, concurrency: 1 } satisfies WriteArgs, 600_000);
            for (const [ci, c] of CASES.entries()) {
              // A patch case patches what the create case of the same concurrency made.
              const prefix = `r${r}-${mode}-c${c.concurrency}`;
              const before = (await sim.request<{ connectionsAccepted: number }>('stats')).connectionsAccepted;
              const args: WriteArgs = { mode, kubeConfigYaml: ready.kubeConfigYaml, kind: c.kind, prefix, count, concurrency: c.concurrency };
              const res = await client.request<WriteResult>('run', args, 600_000);
              const connections = (await sim.request<{ connectionsAccepted: number }>('stats')).connectionsAccepted - before;
              const key = `${mode}\u0000${ci}`;
              samples.set(key, [...(samples.get(key) ?? []), { msPerWrite: res.ms / count, connections }]);
              ctx.log(`writes: round ${r + 1} ${mode} ${caseName(c)}: ${(res.ms / count).toFixed(3)} ms/write, ${connections} connections`);
            }
          } finally {
            await client.close();
          }
        }
      }
      const rows: Row[] = [];
      for (const [ci, c] of CASES.entries()) {
        const bench = `writes: ${caseName(c)} (${count})`;
        const of = (mode: WriteClientMode): Sample[] => samples.get(`${mode}\u0000${ci}`) ?? [];
        for (const mode of CLIENTS) {
          rows.push(row(bench, mode, 'time per write', 'ms', summarize(of(mode).map((s) => s.msPerWrite))));
          rows.push(row(bench, mode, 'connections opened', 'count', summarize(of(mode).map((s) => s.connections))));
        }
        const rx = of('rxkube');
        const cn = of('client-node');
        const ratios = rx.map((s, i) => (cn[i] as Sample).msPerWrite / s.msPerWrite);
        rows.push(row(bench, 'rxkube / client-node', 'throughput', 'x', summarize(ratios), 'per-round ratio; p50 is the median'));
      }
      return rows;
    } finally {
      await sim.request('close', {}, 30_000).catch(() => undefined);
      await sim.close();
    }
  },
};
