// Bench 3 — informer sync: N pods in the simulator (its own process); for
// each client, a fresh process syncs an informer over all of them and
// reports the time and the heap the cache holds after GC. Clients run
// interleaved (rxkube, client-node, … repeated) so machine noise hits both.
//
// Each client gets a clean process rather than sharing the runner's, whose
// heap has seen the other benchmarks: heap-after-GC minus baseline is then
// the informer and nothing else.

import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { MiB } from './lib/heap.js';
import { Child } from './lib/ipc.js';
import { row, type Row } from './lib/report.js';
import { summarize } from './lib/stats.js';
import type { SimReady } from './simServer.js';
import type { SyncArgs, SyncMode, SyncResult } from './syncClient.js';

const CHILD_FLAGS = ['--expose-gc', '--max-old-space-size=8192'];

const LABELS: Record<SyncMode, string> = {
  'raw-list': 'raw paged LIST, no parse (calibration)',
  rxkube: 'rxkube informer (paged list)',
  'rxkube-watchlist': 'rxkube informer (streaming list)',
  'client-node': 'client-node makeInformer',
};

function modes(): SyncMode[] {
  const raw = process.env.BENCH_SYNC_MODES;
  if (raw === undefined || raw === '') return ['raw-list', 'rxkube', 'client-node'];
  const list = raw.split(',').map((s) => s.trim());
  for (const m of list) if (!(m in LABELS)) throw new TypeError(`BENCH_SYNC_MODES: unknown mode ${JSON.stringify(m)}; use ${Object.keys(LABELS).join(', ')}`);
  return list as SyncMode[];
}

export const informerSync: Benchmark = {
  name: 'informer-sync',
  description: 'time and heap to sync N pods: rxkube informer vs client-node makeInformer, each in a fresh process',
  async run(ctx: Context): Promise<Row[]> {
    const n = ctx.scaled(envNumber('BENCH_SYNC_PODS', 100_000));
    const namespaces = envNumber('BENCH_SIM_NAMESPACES', 20);
    ctx.log(`informer-sync: starting the simulator with ${n} pods in ${namespaces} namespaces`);
    const sim = new Child(new URL('./simServer.js', import.meta.url), [`--pods=${n}`, `--namespaces=${namespaces}`], ['--max-old-space-size=8192']);
    try {
      const ready = await sim.next<SimReady>(600_000);
      const jsonPerObject = ready.listJsonBytes / n;
      ctx.log(`informer-sync: seeded in ${(ready.seedMs / 1000).toFixed(1)} s, ${(ready.listJsonBytes / 1e6).toFixed(1)} MB of JSON (${jsonPerObject.toFixed(0)} B/pod)`);
      const results = new Map<SyncMode, SyncResult[]>();
      const list = modes();
      for (let r = 0; r < ctx.repeats; r++) {
        for (const mode of list) {
          const client = new Child(new URL('./syncClient.js', import.meta.url), [], CHILD_FLAGS);
          try {
            const args: SyncArgs = { mode, kubeConfigYaml: ready.kubeConfigYaml, expected: n, timeoutMs: 300_000, url: ready.url };
            const res = await client.request<SyncResult>('run', args, 330_000);
            ctx.log(
              `informer-sync: ${LABELS[mode]} run ${r + 1}: ${(res.syncMs / 1000).toFixed(2)} s, heap ${(res.heapBytes / MiB).toFixed(0)} MiB (${(res.heapBytes / n).toFixed(0)} B/pod), peak RSS ${(res.maxRssBytes / MiB).toFixed(0)} MiB`,
            );
            const rs = results.get(mode) ?? [];
            rs.push(res);
            results.set(mode, rs);
          } finally {
            await client.close();
          }
        }
      }
      const rows: Row[] = [
        row('informer-sync', 'simulator', 'seed (server.create)', 's', summarize([ready.seedMs / 1000]), `${n} pods`),
        row('informer-sync', 'simulator', 'JSON per pod', 'B', summarize([jsonPerObject]), `${(ready.listJsonBytes / 1e6).toFixed(1)} MB list`),
      ];
      for (const [mode, rs] of results) {
        const label = LABELS[mode];
        rows.push(row('informer-sync', label, 'time to sync', 's', summarize(rs.map((x) => x.syncMs / 1000)), `${n} pods`));
        rows.push(row('informer-sync', label, 'sync rate', 'objects/s', summarize(rs.map((x) => n / (x.syncMs / 1000)))));
        // The raw client keeps nothing; its heap figures would only describe garbage.
        if (mode === 'raw-list') continue;
        rows.push(row('informer-sync', label, 'heap after gc', 'MiB', summarize(rs.map((x) => x.heapBytes / MiB))));
        rows.push(row('informer-sync', label, 'heap per object', 'B', summarize(rs.map((x) => x.heapBytes / n))));
        rows.push(row('informer-sync', label, 'heap / JSON bytes', 'x', summarize(rs.map((x) => x.heapBytes / ready.listJsonBytes))));
        rows.push(row('informer-sync', label, 'peak heap during sync', 'MiB', summarize(rs.map((x) => x.peakHeapBytes / MiB)), '10 ms sampler; lower bound'));
        rows.push(row('informer-sync', label, 'peak RSS (process)', 'MiB', summarize(rs.map((x) => x.maxRssBytes / MiB))));
      }
      return rows;
    } finally {
      await sim.request('close', {}, 30_000).catch(() => undefined);
      await sim.close();
    }
  },
};
