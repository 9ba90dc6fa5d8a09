// One initial LIST of every pod from the benchmark server, in a fresh process:
// the informer's (pages of 500, or one unpaged response), or the bare
// listAll underneath it, so the paging benchmark can tell what each page
// costs and where. With `--cpu-prof` a profile of the run is written.

import diagnostics from 'node:diagnostics_channel';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { informer, kubeSource } from 'rxkube';
import { listAll } from 'rxkube/core';
import { serve } from './lib/ipc.js';

export type PagingMode = 'informer paged' | 'informer unpaged' | 'listAll paged' | 'listAll unpaged';

export interface PagingArgs {
  readonly mode: PagingMode;
  readonly kubeConfigYaml: string;
  readonly pods: number;
}

export interface PagingResult {
  readonly ms: number;
  readonly cpuMs: number;
  /** LIST requests made. */
  readonly pages: number;
  /** Summed over the requests: sent → response headers (the server's time and the round trip; the body has not begun). */
  readonly waitMs: number;
  /** Summed: headers → the body's end (transfer, inflating and decoding, which run as bytes arrive). */
  readonly bodyMs: number;
  /** Summed: one request's end → the next one's start (what the client does between pages). */
  readonly betweenMs: number;
  /** Start → the first request, and the last request's end → synced. */
  readonly edgesMs: number;
}

/** When each request was created, answered and finished, from undici's diagnostics channels. */
const timeline = new Map<object, { created: number; headers?: number; done?: number }>();
diagnostics.subscribe('undici:request:create', (m) => void timeline.set((m as { request: object }).request, { created: performance.now() }));
diagnostics.subscribe('undici:request:headers', (m) => {
  const t = timeline.get((m as { request: object }).request);
  if (t !== undefined) t.headers = performance.now();
});
diagnostics.subscribe('undici:request:trailers', (m) => {
  const t = timeline.get((m as { request: object }).request);
  if (t !== undefined) t.done = performance.now();
});

function phases(t0: number, end: number): Pick<PagingResult, 'pages' | 'waitMs' | 'bodyMs' | 'betweenMs' | 'edgesMs'> {
  const all = [...timeline.values()].sort((a, b) => a.created - b.created);
  let waitMs = 0;
  let bodyMs = 0;
  let betweenMs = 0;
  for (const [i, t] of all.entries()) {
    waitMs += (t.headers ?? t.created) - t.created;
    bodyMs += (t.done ?? t.headers ?? t.created) - (t.headers ?? t.created);
    const next = all[i + 1];
    if (next !== undefined) betweenMs += next.created - (t.done ?? next.created);
  }
  const first = all[0]?.created ?? t0;
  const last = all.at(-1)?.done ?? end;
  return { pages: all.length, waitMs, bodyMs, betweenMs, edgesMs: first - t0 + (end - last) };
}

async function run(args: PagingArgs): Promise<PagingResult> {
  const kc = new KubeConfig();
  kc.loadFromString(args.kubeConfigYaml);
  const pageSize = args.mode.endsWith('unpaged') ? 0 : 500;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  if (args.mode.startsWith('informer')) {
    const inf = informer<V1Pod>(kubeSource(kc, 'v1/pods'), { reflector: { pageSize } });
    const sub = inf.subscribe();
    await inf.whenSynced({ timeout: 300_000 });
    const end = performance.now();
    const cpu = process.cpuUsage(cpu0);
    if (inf.store.size !== args.pods) throw new Error(`synced ${inf.store.size} pods, expected ${args.pods}`);
    // The informer's watch has begun by now: only the LIST requests count.
    for (const [request, t] of timeline) if (t.created > end || (request as { path?: string }).path?.includes('watch=') === true) timeline.delete(request);
    sub.unsubscribe();
    return { ms: end - t0, cpuMs: (cpu.user + cpu.system) / 1000, ...phases(t0, end) };
  }
  const { items } = await listAll(kubeSource(kc, 'v1/pods', { pageSize }), {}, AbortSignal.timeout(300_000), { pageSize });
  const end = performance.now();
  const cpu = process.cpuUsage(cpu0);
  if (items.length !== args.pods) throw new Error(`listed ${items.length} pods, expected ${args.pods}`);
  return { ms: end - t0, cpuMs: (cpu.user + cpu.system) / 1000, ...phases(t0, end) };
}

serve({ run: (args: PagingArgs) => run(args) });
