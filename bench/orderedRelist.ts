// What a relist costs in memory with each of the informer's queues (docs/semantics.md PF-20): the per-key queue
// applies a paged list page by page, the ordered one holds every page until the list ends and then replaces the
// store in one step. Each mode runs in a fresh child process against an in-memory source that pages like a server
// (500 objects a page, each page parsed from JSON text as a decoder would, managedFields stripped by the informer).
//
//   npm run build && tsc -p tsconfig.tools.json && node --expose-gc build/bench/orderedRelist.js
//   BENCH_RELIST_PODS=20000 node --expose-gc build/bench/orderedRelist.js
//
// Figures: live heap (after a full collection) and RSS, once synced and at their highest during a relist, sampled
// after each page request; the ratio is the relist's peak over the steady state.

import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import { informer, KubeApiError, type FifoMode, type ListerWatcher, type WatchEvent } from 'rxkube';
import { envNumber } from './lib/context.js';
import { heapAfterGc } from './lib/heap.js';
import { namespaceOf, storedPod } from './lib/pods.js';

interface Result {
  readonly fifo: FifoMode;
  readonly pods: number;
  readonly steadyHeap: number;
  readonly peakHeap: number;
  readonly steadyRss: number;
  readonly peakRss: number;
  readonly relistMs: number;
}

const PAGE = 500;

/** A source that lists `texts` page by page, parsing each page as it is asked for; its watch fails with 410 on demand. */
function pagedSource(texts: readonly string[], onPage: () => Promise<void>) {
  let expire: (() => void) | undefined;
  let rv = 1;
  const source: ListerWatcher<V1Pod> = {
    supportsWatchList: false,
    list: async (opts) => {
      await onPage();
      const from = opts.continue === undefined || opts.continue === '' ? 0 : Number(opts.continue);
      const to = Math.min(texts.length, from + (opts.limit ?? texts.length));
      const items = texts.slice(from, to).map((t) => JSON.parse(t) as V1Pod);
      return { metadata: { resourceVersion: String(rv), ...(to < texts.length && { continue: String(to) }) }, items };
    },
    watch: (_opts, signal) => ({
      async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent<V1Pod>> {
        await new Promise<void>((resolve) => {
          expire = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        if (signal.aborted) return;
        rv++;
        throw new KubeApiError(410, 'too old resource version', { reason: 'Expired' });
      },
    }),
  };
  return { source, expire: () => expire?.() };
}

async function child(fifo: FifoMode, pods: number): Promise<Result> {
  const texts = Array.from({ length: pods }, (_, i) => JSON.stringify(storedPod(i, namespaceOf(i, 20), 1)));
  let sampling = false;
  let peakHeap = 0;
  let peakRss = 0;
  const sample = async (): Promise<void> => {
    if (!sampling) return;
    peakHeap = Math.max(peakHeap, await heapAfterGc());
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  };
  const mem = pagedSource(texts, sample);
  const inf = informer<V1Pod>(mem.source, { fifo, onError: () => {}, reflector: { pageSize: PAGE } });
  let relisted = false;
  let done: (() => void) | undefined;
  inf.resourceVersion$.subscribe((rv) => {
    if (rv === '2' && !relisted) {
      relisted = true;
      done?.();
    }
  });
  const sub = inf.subscribe();
  await inf.whenSynced({ timeout: 600_000 });
  const steadyHeap = await heapAfterGc();
  const steadyRss = process.memoryUsage().rss;
  sampling = true;
  const t0 = performance.now();
  const finished = new Promise<void>((resolve) => (done = resolve));
  mem.expire();
  await finished;
  const relistMs = performance.now() - t0;
  await sample();
  if (inf.store.size !== pods) throw new Error(`relisted ${inf.store.size} pods, expected ${pods}`);
  sub.unsubscribe();
  return { fifo, pods, steadyHeap, peakHeap, steadyRss, peakRss, relistMs };
}

async function main(): Promise<void> {
  const role = process.argv.find((a) => a.startsWith('--fifo='))?.slice('--fifo='.length);
  const pods = envNumber('BENCH_RELIST_PODS', 50_000);
  if (role === 'perKey' || role === 'ordered') {
    process.stdout.write(`${JSON.stringify(await child(role, pods))}\n`);
    return;
  }
  const mib = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MiB`;
  for (const fifo of ['perKey', 'ordered'] as const) {
    const proc = fork(fileURLToPath(import.meta.url), [`--fifo=${fifo}`], { execArgv: ['--expose-gc'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const [code] = (await once(proc, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`${fifo} child exited with ${String(code)}`);
    const r = JSON.parse(out.trim().split('\n').at(-1) ?? '') as Result;
    console.log(
      `${fifo.padEnd(7)} ${r.pods} pods: live heap ${mib(r.steadyHeap)} → peak ${mib(r.peakHeap)} (${(r.peakHeap / r.steadyHeap).toFixed(2)}×), ` +
        `RSS ${mib(r.steadyRss)} → peak ${mib(r.peakRss)} (${(r.peakRss / r.steadyRss).toFixed(2)}×), relist ${(r.relistMs / 1000).toFixed(2)} s`,
    );
  }
}

await main();
