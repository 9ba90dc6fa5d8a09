// client-go in the side-by-side benchmarks: one run of Go's informer program
// (bench/go/informer, JSON) against the benchmark server, measured as
// bench/wireClient.ts measures the Node clients. The program is its own fresh
// process; this runner-side code only writes the kubeconfig, asks the server
// for events and forwards the program's own figures.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoInformer, type GoMemory, type GoSynced } from './lib/goInformer.js';
import type { ClientArgs, ClientResult } from './wireClient.js';
import type { ModifyReply } from './wireServer.js';

async function post<T>(url: string, path: string): Promise<T> {
  const res = await fetch(`${url}${path}`, { method: 'POST' });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Until the server counts an open watch, so the events are not first replayed from history. */
async function watching(url: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { watches } = (await (await fetch(`${url}/bench/stats`)).json()) as { watches: number };
    if (watches > 0) return;
    if (performance.now() > deadline) throw new Error(`client-go: no watch open within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs the `sync` workload (the only one client-go takes part in) with the program at `binary`. */
export async function runGoClient(binary: string, args: ClientArgs): Promise<ClientResult> {
  const w = args.workload;
  if (w.kind !== 'sync') throw new Error(`client-go runs the sync workload only, not ${w.kind}`);
  const dir = mkdtempSync(join(tmpdir(), 'rxkube-bench-go-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, args.kubeConfigYaml);
  const go = new GoInformer(binary, { kubeconfig, handlers: w.handlers, expect: args.pods });
  try {
    const synced = await go.next<GoSynced>('synced', args.timeoutMs);
    const afterSync: GoMemory = await go.memory();
    const result: ClientResult = { syncMs: synced.syncMs, rssAfterSync: afterSync.rssBytes };
    if (w.watchEvents === 0) return result;
    await watching(args.url, args.timeoutMs);
    const t0 = performance.now();
    const reply = await post<ModifyReply>(args.url, `/bench/modify?count=${w.watchEvents}`);
    // From asking for the events to sending `wait`, here; from its receipt to the cache holding the last event, there.
    const beforeWait = performance.now() - t0;
    const reached = await go.wait(reply.lastKey, reply.lastRv, args.timeoutMs);
    const watchMs = beforeWait + reached.ms;
    const afterWatch = await go.memory();
    return {
      ...result,
      eventsPerSecond: w.watchEvents / (watchMs / 1000),
      rssAfterWatch: afterWatch.rssBytes,
      heapAfterWatch: afterWatch.heapInuseBytes,
      heapAtStart: afterWatch.heapInuseAtStartBytes,
    };
  } finally {
    await go.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
