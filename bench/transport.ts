// HTTP/1.1 against HTTP/2 on a real kube-apiserver (the e2e tier's etcd and
// kube-apiserver, built by spec/e2e/build.sh). For each protocol, in a fresh
// process and interleaved round by round: K informers on the ConfigMaps of one
// namespace (K watches), then U updates written by this process at 16 in
// flight while the informers count what reaches them (watch throughput), then
// C creates one at a time beside the open watches (write latency), then the
// connections the process opened and its memory.
//
//   npm run bench -- transport
//   BENCH_TRANSPORT_INFORMERS=20 BENCH_TRANSPORT_UPDATES=1000 BENCH_TRANSPORT_WRITES=200 npm run bench -- transport

import { objectClient } from 'rxkube';
import { startCluster } from '../spec/e2e/cluster.js';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { MiB } from './lib/heap.js';
import { Child } from './lib/ipc.js';
import { row, type Row } from './lib/report.js';
import { percentile, summarize } from './lib/stats.js';
import type { TransportEventsReply, TransportSetupArgs, TransportStats, TransportWritesReply } from './transportClient.js';
import { locateBinaries } from './lib/e2eBinaries.js';

const PROTOCOLS = [
  { name: 'HTTP/2', http2: true },
  { name: 'HTTP/1.1', http2: false },
] as const;

interface Sample {
  readonly eventsPerSecond: number;
  readonly writeP50: number;
  readonly writeP99: number;
  readonly connections: number;
  readonly heapMiB: number;
  readonly rssMiB: number;
}

export const transport: Benchmark = {
  name: 'transport',
  description: 'HTTP/1.1 keep-alive against HTTP/2 on a real kube-apiserver: connections, memory, watch throughput, write latency',
  async run(ctx: Context): Promise<Row[]> {
    const informers = ctx.scaled(envNumber('BENCH_TRANSPORT_INFORMERS', 20), 2);
    const objects = ctx.scaled(envNumber('BENCH_TRANSPORT_OBJECTS', 100), 10);
    const updates = ctx.scaled(envNumber('BENCH_TRANSPORT_UPDATES', 1000), 50);
    const writes = ctx.scaled(envNumber('BENCH_TRANSPORT_WRITES', 200), 20);
    locateBinaries();
    ctx.log(`transport: starting etcd and kube-apiserver`);
    const cluster = await startCluster();
    try {
      const kubeConfigYaml = cluster.kubeConfig.exportConfig();
      const admin = objectClient(cluster.kubeConfig, 'v1/namespaces');
      await admin.create({ metadata: { name: 'watched' } });
      await admin.create({ metadata: { name: 'written' } });
      const watched = objectClient(cluster.kubeConfig, 'v1/configmaps', { namespace: 'watched' });
      for (let i = 0; i < objects; i++) await watched.create({ metadata: { name: `cm-${i}` }, data: { v: '0' } } as never);
      const samples = new Map<string, Sample[]>();
      let version = 0;
      for (let r = 0; r < ctx.repeats; r++) {
        for (const protocol of PROTOCOLS) {
          const client = new Child(new URL('./transportClient.js', import.meta.url), [], ['--expose-gc']);
          try {
            const setup: TransportSetupArgs = { kubeConfigYaml, http2: protocol.http2, informers, namespace: 'watched' };
            await client.request('setup', setup, 300_000);
            const received = client.request<TransportEventsReply>('events', { expected: informers * updates, timeoutMs: 600_000 }, 660_000);
            let next = 0;
            await Promise.all(
              Array.from({ length: 16 }, async () => {
                while (next < updates) {
                  const i = next++;
                  await watched.patch(`cm-${i % objects}`, { data: { v: String(++version) } });
                }
              }),
            );
            const ev = await received;
            const wr = await client.request<TransportWritesReply>('writes', { namespace: 'written', count: writes, prefix: `r${r}-${protocol.http2 ? 'h2' : 'h1'}` }, 600_000);
            const st = await client.request<TransportStats>('stats', {}, 60_000);
            await client.request('stop', {}, 60_000);
            const sorted = [...wr.latencies].sort((a, b) => a - b);
            const sample: Sample = {
              eventsPerSecond: ev.events / (ev.ms / 1000),
              writeP50: percentile(sorted, 0.5),
              writeP99: percentile(sorted, 0.99),
              connections: st.connections,
              heapMiB: st.heapBytes / MiB,
              rssMiB: st.rssBytes / MiB,
            };
            samples.set(protocol.name, [...(samples.get(protocol.name) ?? []), sample]);
            ctx.log(
              `transport: round ${r + 1} ${protocol.name}: ${sample.eventsPerSecond.toFixed(0)} events/s, write p50 ${sample.writeP50.toFixed(2)} ms p99 ${sample.writeP99.toFixed(2)} ms, ${sample.connections} connections, heap ${sample.heapMiB.toFixed(1)} MiB, RSS ${sample.rssMiB.toFixed(0)} MiB`,
            );
          } finally {
            await client.close();
          }
        }
      }
      const rows: Row[] = [];
      const bench = `transport (${informers} informers)`;
      const metrics: readonly [keyof Sample, string, string][] = [
        ['connections', 'connections opened', 'count'],
        ['eventsPerSecond', `watch throughput (${updates} updates × ${informers} watches)`, 'events/s'],
        ['writeP50', `create latency p50 (${writes}, watches open)`, 'ms'],
        ['writeP99', `create latency p99 (${writes}, watches open)`, 'ms'],
        ['heapMiB', 'heap after GC', 'MiB'],
        ['rssMiB', 'RSS', 'MiB'],
      ];
      for (const [key, metric, unit] of metrics) {
        for (const protocol of PROTOCOLS) rows.push(row(bench, protocol.name, metric, unit, summarize((samples.get(protocol.name) ?? []).map((s) => s[key]))));
        const h2 = samples.get('HTTP/2') ?? [];
        const h1 = samples.get('HTTP/1.1') ?? [];
        rows.push(row(bench, 'HTTP/2 / HTTP/1.1', metric, 'x', summarize(h2.map((s, i) => s[key] / (h1[i] as Sample)[key])), 'per-round ratio; p50 is the median'));
      }
      return rows;
    } finally {
      await cluster.stop();
    }
  },
};
