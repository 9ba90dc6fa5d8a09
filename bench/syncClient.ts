// One informer sync, measured in a fresh process so its heap holds nothing
// but the runtime, the libraries and the informer under test. Started by the
// informer-sync benchmark with `--expose-gc`; answers one 'run' request.

import http from 'node:http';
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { informer, kubeSource } from 'rxkube';
import { heapAfterGc } from './lib/heap.js';
import { serve } from './lib/ipc.js';

/**
 * Which client to measure. `raw-list` is the calibration: the same paged
 * LIST (500 per page) read with node:http and thrown away, so it shows how
 * much of a sync is the simulator and the wire.
 */
export type SyncMode = 'rxkube' | 'rxkube-watchlist' | 'client-node' | 'raw-list';

export interface SyncArgs {
  readonly mode: SyncMode;
  readonly kubeConfigYaml: string;
  readonly expected: number;
  readonly timeoutMs: number;
  /** Server URL, for the raw client. */
  readonly url: string;
}

export interface SyncResult {
  readonly mode: SyncMode;
  readonly syncMs: number;
  readonly objects: number;
  /** Heap after sync and GC minus heap before, bytes. */
  readonly heapBytes: number;
  /** Highest heap growth seen by a 10 ms sampler during the sync, bytes (misses peaks inside one long synchronous call). */
  readonly peakHeapBytes: number;
  /** The process's resident-set high-water mark, bytes. */
  readonly maxRssBytes: number;
}

async function run(args: SyncArgs): Promise<SyncResult> {
  const kc = new KubeConfig();
  kc.loadFromString(args.kubeConfigYaml);
  const signal = AbortSignal.timeout(args.timeoutMs);
  const base = await heapAfterGc();
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed - base);
  }, 10);
  try {
    const t0 = performance.now();
    if (args.mode === 'raw-list') {
      const objects = await rawPagedList(args.url, signal);
      const syncMs = performance.now() - t0;
      clearInterval(sampler);
      return done(args, syncMs, objects, (await heapAfterGc()) - base, peak);
    }
    if (args.mode === 'client-node') {
      const api = kc.makeApiClient(CoreV1Api);
      const inf = makeInformer<V1Pod>(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
      let failure: unknown;
      inf.on('error', (err) => (failure = err));
      // start() resolves once the list is applied and the watch is connected.
      await Promise.race([inf.start(), new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)))]);
      const syncMs = performance.now() - t0;
      if (failure !== undefined) throw failure;
      clearInterval(sampler);
      const objects = inf.list().length;
      const heapBytes = (await heapAfterGc()) - base;
      await inf.stop();
      return done(args, syncMs, objects, heapBytes, peak);
    }
    const inf = informer<V1Pod>(kubeSource(kc, 'v1/pods'), { initialList: args.mode === 'rxkube-watchlist' ? 'stream' : 'paged' });
    const sub = inf.subscribe();
    await inf.whenSynced({ signal });
    const syncMs = performance.now() - t0;
    clearInterval(sampler);
    const objects = inf.store.size;
    const heapBytes = (await heapAfterGc()) - base;
    sub.unsubscribe();
    return done(args, syncMs, objects, heapBytes, peak);
  } finally {
    clearInterval(sampler);
  }
}

const RV = Buffer.from('"resourceVersion":"');
const CONTINUE = /"continue":"([^"]*)"/;

/**
 * GETs every page (limit 500) and counts objects without parsing them: one
 * `"resourceVersion":"` per item (the benchmark's pods carry no other) plus
 * one in each page's metadata.
 */
async function rawPagedList(url: string, signal: AbortSignal): Promise<number> {
  let objects = 0;
  let token = '';
  do {
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get(`${url}/api/v1/pods?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`, { signal }, resolve);
      req.on('error', reject);
    });
    if (res.statusCode !== 200) throw new Error(`raw list: HTTP ${res.statusCode}`);
    let head = '';
    let carry: Buffer = Buffer.alloc(0);
    let found = -1;
    for await (const chunk of res as AsyncIterable<Buffer>) {
      // The envelope's metadata (and its continue token) comes before the items.
      if (head.length < 1024) head += chunk.toString('latin1', 0, Math.min(chunk.length, 1024));
      // A marker split across two chunks sits in the seam: the previous chunk's tail and this one's head,
      // each one byte shorter than the marker, so a marker wholly inside either is never counted twice.
      if (carry.length > 0 && Buffer.concat([carry, chunk.subarray(0, RV.length - 1)]).includes(RV)) found++;
      for (let i = chunk.indexOf(RV); i !== -1; i = chunk.indexOf(RV, i + 1)) found++;
      carry = chunk.subarray(Math.max(0, chunk.length - (RV.length - 1)));
    }
    objects += found;
    token = CONTINUE.exec(head)?.[1] ?? '';
  } while (token !== '');
  return objects;
}

function done(args: SyncArgs, syncMs: number, objects: number, heapBytes: number, peakHeapBytes: number): SyncResult {
  if (objects !== args.expected) throw new Error(`${args.mode}: synced ${objects} objects, expected ${args.expected}`);
  return { mode: args.mode, syncMs, objects, heapBytes, peakHeapBytes, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
}

serve({ run: (args: SyncArgs) => run(args) });
