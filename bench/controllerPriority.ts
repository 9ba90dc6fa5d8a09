// Live change vs backlog: N pods in the simulator (its own process); a
// controller syncs them all, then reconciles them one at a time, each
// reconcile taking R ms (an awaited timer, as an API call would). Once it has
// started on that backlog, one pod it has already reconciled is changed, and
// we measure how long until that change is reconciled: with the priority
// queue (the default: the initial list waits at LOW_PRIORITY, the change
// goes first) and with `priorityQueue: false` (client-go's FIFO: behind the
// whole backlog). Rounds alternate the two, so machine noise hits both.
//
//   BENCH_FILTER=controller-priority npm run bench
//   BENCH_PRIORITY_PODS (20k), BENCH_PRIORITY_RECONCILE_MS (2), BENCH_PRIORITY_CONCURRENCY (1),
//   BENCH_REPEATS rounds of each (3)

import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { controller, informer, kubeSource } from 'rxkube';
import { envNumber, wallNow, type Benchmark, type Context } from './lib/context.js';
import { Child } from './lib/ipc.js';
import { row, type Row } from './lib/report.js';
import { summarize } from './lib/stats.js';
import type { SimReady, TouchReply } from './simServer.js';

// Reconciles done before the change is made: the controller is well into its backlog.
const STARTED_AFTER = 200;

interface Round {
  /** From the write (simulator's clock) to the start of the reconcile that saw it. */
  readonly latencyMs: number;
  /** Keys waiting in the queue when the change was written. */
  readonly backlog: number;
  /** From subscribing to the informer having synced. */
  readonly syncMs: number;
}

async function round(kubeConfigYaml: string, sim: Child, priorityQueue: boolean, reconcileMs: number, concurrency: number): Promise<Round> {
  const kc = new KubeConfig();
  kc.loadFromString(kubeConfigYaml);
  const pods = informer<V1Pod>(kubeSource(kc, 'v1/pods'));
  let reconciled = 0;
  let target: { key: string; resourceVersion: string } | undefined;
  let first: string | undefined;
  let seenAt: number | undefined;
  const ctl = controller<V1Pod>({
    for: pods,
    concurrency,
    priorityQueue,
    shutdownTimeoutMs: 5_000,
    reconcile: async (pod, ctx) => {
      if (target !== undefined && ctx.key === target.key && pod.metadata?.resourceVersion === target.resourceVersion) seenAt ??= wallNow();
      first ??= ctx.key;
      await sleep(reconcileMs);
      reconciled++;
    },
  });
  const t0 = performance.now();
  const sub = ctl.subscribe({ next: () => {}, error: () => {} });
  try {
    await pods.whenSynced({ timeout: 300_000 });
    const syncMs = performance.now() - t0;
    while (reconciled < STARTED_AFTER) await sleep(5);
    const key = first as string;
    const [namespace = '', name = ''] = key.split('/');
    const backlog = ctl.status().queueDepth;
    const touched = await sim.request<TouchReply>('touch', { namespace, name });
    target = { key, resourceVersion: touched.resourceVersion };
    // The event may have been reconciled before the reply arrived: the check above reads the store, so it is not missed.
    const deadline = performance.now() + 600_000;
    while (seenAt === undefined) {
      if (performance.now() > deadline) throw new Error(`controller-priority: ${key} was not reconciled within 10 minutes of its change`);
      await sleep(1);
    }
    return { latencyMs: seenAt - touched.at, backlog, syncMs };
  } finally {
    await ctl.shutdown();
    sub.unsubscribe();
  }
}

export const controllerPriority: Benchmark = {
  name: 'controller-priority',
  description: 'time until a change is reconciled while a controller works through the backlog of its initial list, with and without the priority queue',
  async run(ctx: Context): Promise<Row[]> {
    const n = ctx.scaled(envNumber('BENCH_PRIORITY_PODS', 20_000));
    const reconcileMs = envNumber('BENCH_PRIORITY_RECONCILE_MS', 2);
    const concurrency = envNumber('BENCH_PRIORITY_CONCURRENCY', 1);
    ctx.log(`controller-priority: starting the simulator with ${n} pods`);
    const sim = new Child(new URL('./simServer.js', import.meta.url), [`--pods=${n}`, '--namespaces=20'], ['--max-old-space-size=4096']);
    try {
      const ready = await sim.next<SimReady>(600_000);
      ctx.log(`controller-priority: seeded in ${(ready.seedMs / 1000).toFixed(1)} s`);
      const results = new Map<boolean, Round[]>([
        [true, []],
        [false, []],
      ]);
      for (let r = 0; r < ctx.repeats; r++) {
        for (const priorityQueue of [true, false]) {
          const res = await round(ready.kubeConfigYaml, sim, priorityQueue, reconcileMs, concurrency);
          ctx.log(
            `controller-priority: priorityQueue ${priorityQueue} round ${r + 1}: change reconciled after ${res.latencyMs.toFixed(1)} ms with ${res.backlog} keys waiting (sync ${(res.syncMs / 1000).toFixed(2)} s)`,
          );
          results.get(priorityQueue)?.push(res);
        }
      }
      const rows: Row[] = [];
      for (const [priorityQueue, rs] of results) {
        const label = priorityQueue ? 'priority queue (default)' : 'priorityQueue: false (FIFO)';
        const latency = summarize(rs.map((x) => x.latencyMs));
        const spread = `median ${latency.p50.toFixed(1)} ms, min ${latency.min.toFixed(1)}, max ${latency.max.toFixed(1)}; ${n} pods, ${reconcileMs} ms per reconcile, concurrency ${concurrency}`;
        rows.push(row('controller-priority', label, 'change → reconcile', 'ms', latency, spread));
        rows.push(row('controller-priority', label, 'keys waiting at the change', 'keys', summarize(rs.map((x) => x.backlog))));
        rows.push(row('controller-priority', label, 'time to sync', 's', summarize(rs.map((x) => x.syncMs / 1000))));
      }
      return rows;
    } finally {
      await sim.request('close', {}).catch(() => undefined);
      await sim.close();
    }
  },
};
