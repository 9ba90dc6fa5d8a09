// One measured client in a fresh process, against the benchmark server
// (bench/wireServer.ts): the floor (node:http, JSON.parse, a Map), client-node's
// makeInformer, or rxkube's informer. Started by bench/compare.ts with
// `--expose-gc`; answers one 'run' request and exits.

import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { informer, kubeSource, type Informer } from 'rxkube';
import { wallNow } from './lib/context.js';
import { serve } from './lib/ipc.js';
import { percentile } from './lib/stats.js';

/**
 * Who is measured. `floor` reads the same LIST pages and watch lines with
 * node:http and JSON.parses each object once, keeping them in a Map: what
 * any client must at least do. `rxkube-keep` is rxkube with
 * `stripManagedFields: false`. `rxkube-baseline` is rxkube as another build
 * of it compiled it (the checkout `BENCH_BASELINE` names), so a change is
 * measured against the code before it in the same interleaved run.
 */
export type ClientMode = 'floor' | 'client-node' | 'rxkube' | 'rxkube-keep' | 'rxkube-baseline';

/** What to do once synced. */
export type Workload =
  | { readonly kind: 'sync'; readonly watchEvents: number }
  | { readonly kind: 'relist' }
  | { readonly kind: 'latency'; readonly handlers: number; readonly events: number; readonly perSecond: number }
  | { readonly kind: 'slow'; readonly events: number; readonly handlerMs: number };

export interface ClientArgs {
  readonly mode: ClientMode;
  readonly workload: Workload;
  readonly url: string;
  readonly kubeConfigYaml: string;
  readonly pods: number;
  readonly timeoutMs: number;
}

export interface ClientResult {
  /** Start to the last initial add handled, ms. */
  readonly syncMs: number;
  /** RSS after the sync and a full GC, bytes. */
  readonly rssAfterSync: number;
  /** `sync` with events: updates handled per second, first to last. */
  readonly eventsPerSecond?: number;
  /** `relist`: highest RSS sampled (every 5 ms) from the 410 until the relisted cache was in place, bytes. */
  readonly relistPeakRss?: number;
  readonly relistMs?: number;
  /** `latency`: write → handler, ms, over every handler call. */
  readonly latencyP50?: number;
  readonly latencyP99?: number;
  readonly latencyMax?: number;
  /** `slow`: the most entries the slow handler's buffer held, and RSS after GC before and after the burst. */
  readonly maxDepth?: number;
  readonly rssBeforeBurst?: number;
  readonly rssAfterBurst?: number;
  readonly rssPeakBurst?: number;
  /** RSS when half of the burst had been applied, and JS heap after GC before and after the burst. */
  readonly rssHalfBurst?: number;
  readonly heapBeforeBurst?: number;
  readonly heapAfterBurst?: number;
}

/** What the three clients share: a sync, a stream of updates and a way to stop. */
interface Client {
  /** Resolves when every listed pod reached the handler. */
  synced: Promise<void>;
  /** Updates handled so far. */
  updates(): number;
  stop(): Promise<void>;
}

const SENT = 'bench.rxkube.io/sent';
/** Where a LIST body's items begin, and what separates two of the benchmark server's pods (list items begin with their metadata, as kube-apiserver leaves a built-in's type out of them). */
const ITEMS = '"items":[';
const ITEM_SEPARATOR = ',{"metadata":{"name":"';

function sentOf(pod: V1Pod): number {
  return Number(pod.metadata?.annotations?.[SENT]);
}

async function control(url: string, path: string): Promise<unknown> {
  const res = await fetch(`${url}${path}`, { method: 'POST' });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** Waits until the client's watch is open on the server, so timed writes are not first replayed from history. */
async function watching(url: string, timeoutMs: number): Promise<void> {
  let open = 0;
  await until('the watch to open', () => open > 0, timeoutMs, 5, async () => {
    open = ((await (await fetch(`${url}/bench/stats`)).json()) as { watches: number }).watches;
  });
}

async function until(what: string, cond: () => boolean, timeoutMs: number, pollMs = 2, refresh?: () => Promise<void>): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  await refresh?.();
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    await refresh?.();
  }
}

/** RSS after two full collections (more rounds cost seconds on a 1 GB heap and move RSS by little). */
async function rss(): Promise<number> {
  for (let round = 0; round < 2; round++) {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().rss;
}

/** Highest RSS seen every `ms` until stopped. */
function rssSampler(ms: number): { stop(): number } {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), ms);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().rss);
    },
  };
}

// ------------------------------------------------------------------ the floor

/** Paged LIST and watch with undici (what rxkube and client-node use) over kept-alive connections: each object JSON.parsed once, kept by key. */
function floorClient(url: string, onUpdate: (pod: V1Pod) => void): Client & { relisted(): number } {
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const cache = new Map<string, V1Pod>();
  const ac = new AbortController();
  let updates = 0;
  let relists = 0;
  const get = async (path: string): Promise<AsyncIterable<Buffer>> =>
    (await request(`${url}${path}`, { dispatcher: agent, signal: ac.signal, headersTimeout: 0, bodyTimeout: 0 })).body as AsyncIterable<Buffer>;
  const keyOf = (p: V1Pod): string => `${p.metadata?.namespace}/${p.metadata?.name}`;
  const list = async (): Promise<string> => {
    let token = '';
    let rv = '';
    const next = new Map<string, V1Pod>();
    do {
      const res = await get(`/api/v1/pods?limit=500${token ? `&continue=${token}` : ''}`);
      // Each object is cut out at the item boundary the benchmark server writes (every pod starts with the same
      // bytes) and JSON.parsed on its own, as a chunk completes it: no page-sized string or buffer, no scanner.
      const decoder = new StringDecoder('utf8');
      let text = '';
      let head: string | undefined;
      for await (const c of res as AsyncIterable<Buffer>) {
        text += decoder.write(c);
        if (head === undefined) {
          const at = text.indexOf(ITEMS);
          if (at < 0) continue;
          head = text.slice(0, at);
          text = text.slice(at + ITEMS.length);
        }
        let from = 0;
        for (let m = text.indexOf(ITEM_SEPARATOR, from); m !== -1; m = text.indexOf(ITEM_SEPARATOR, from)) {
          const p = JSON.parse(text.slice(from, m)) as V1Pod;
          next.set(keyOf(p), p);
          from = m + 1;
        }
        text = text.slice(from);
      }
      text += decoder.end();
      // The last item, before the closing `]}`.
      if (text.length > 2) {
        const p = JSON.parse(text.slice(0, text.lastIndexOf(']'))) as V1Pod;
        next.set(keyOf(p), p);
      }
      token = /"continue":"([^"]*)"/.exec(head ?? '')?.[1] ?? '';
      rv = /"resourceVersion":"([^"]*)"/.exec(head ?? '')?.[1] ?? '';
    } while (token !== '');
    cache.clear();
    for (const [k, v] of next) cache.set(k, v);
    return rv;
  };
  const watch = async (rv: string): Promise<'expired' | 'ended'> => {
    const res = await get(`/api/v1/pods?watch=true&resourceVersion=${rv}`);
    let rest = '';
    for await (const c of res as AsyncIterable<Buffer>) {
      const text = rest + c.toString('utf8');
      let start = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
        const ev = JSON.parse(text.slice(start, nl)) as { type: string; object: V1Pod };
        start = nl + 1;
        if (ev.type === 'ERROR') return 'expired';
        cache.set(keyOf(ev.object), ev.object);
        updates++;
        onUpdate(ev.object);
      }
      rest = text.slice(start);
    }
    return 'ended';
  };
  const synced = list();
  void (async () => {
    let rv = await synced;
    for (;;) {
      const how = await watch(rv);
      if (how === 'expired') {
        rv = await list();
        relists++;
      }
    }
  })().catch(() => undefined);
  return {
    synced: synced.then(() => undefined),
    updates: () => updates,
    relisted: () => relists,
    stop: async () => {
      ac.abort();
      await agent.destroy().catch(() => undefined);
    },
  };
}

// ------------------------------------------------------------------ client-node

function clientNode(kc: KubeConfig, pods: number, handlers: number, onUpdate: (pod: V1Pod) => void): Client {
  const api = kc.makeApiClient(CoreV1Api);
  const inf = makeInformer<V1Pod>(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
  let adds = 0;
  let updates = 0;
  let resolveSynced!: () => void;
  let rejectSynced!: (e: unknown) => void;
  const synced = new Promise<void>((resolve, reject) => {
    resolveSynced = resolve;
    rejectSynced = reject;
  });
  inf.on('add', () => {
    if (++adds === pods) resolveSynced();
  });
  for (let h = 0; h < handlers; h++) {
    inf.on('update', (pod) => {
      if (h === 0) updates++;
      onUpdate(pod);
    });
  }
  inf.on('error', (err) => rejectSynced(err));
  void inf.start().catch(rejectSynced);
  return { synced, updates: () => updates, stop: () => inf.stop() };
}

// ------------------------------------------------------------------ rxkube

type Library = Pick<typeof import('rxkube'), 'informer' | 'kubeSource'>;

/** The library a mode measures: this build's, or the baseline checkout's `dist/` (`BENCH_BASELINE`). */
async function library(mode: ClientMode): Promise<Library> {
  if (mode !== 'rxkube-baseline') return { informer, kubeSource };
  const root = process.env.BENCH_BASELINE;
  if (root === undefined || root === '') throw new TypeError('rxkube-baseline: BENCH_BASELINE names no checkout');
  return (await import(pathToFileURL(join(root, 'dist', 'index.js')).href)) as Library;
}

function rxkube(lib: Library, kc: KubeConfig, pods: number, keepManagedFields: boolean) {
  // The relist workload's 410 is expected; counted by the reflector, not printed.
  const inf: Informer<V1Pod> = lib.informer(lib.kubeSource(kc, 'v1/pods'), { stripManagedFields: !keepManagedFields, onError: () => {} });
  let adds = 0;
  let resolveSynced!: () => void;
  const synced = new Promise<void>((resolve) => (resolveSynced = resolve));
  // The sync is over when the last add was handled, as for the others; this handler stays for the whole run.
  inf.addHandler({
    add: () => {
      if (++adds === pods) resolveSynced();
    },
  });
  return { inf, synced, stop: () => inf.stop() };
}

// ------------------------------------------------------------------ workloads

async function run(args: ClientArgs): Promise<ClientResult> {
  const kc = new KubeConfig();
  kc.loadFromString(args.kubeConfigYaml);
  const w = args.workload;
  const handlers = w.kind === 'latency' ? w.handlers : 1;
  const lags: number[] = [];
  const recordLag = w.kind === 'latency' ? (pod: V1Pod): void => void lags.push(wallNow() - sentOf(pod)) : (): void => {};
  const t0 = performance.now();
  let client: Client & { relisted?: () => number; inf?: Informer<V1Pod> };
  if (args.mode === 'floor') client = floorClient(args.url, recordLag);
  else if (args.mode === 'client-node') client = clientNode(kc, args.pods, handlers, recordLag);
  else {
    const r = rxkube(await library(args.mode), kc, args.pods, args.mode === 'rxkube-keep');
    let updates = 0;
    if (w.kind === 'slow') {
      // The slow handler alone holds a coalescing buffer; updates are counted as the informer applies them.
      r.inf.subscribe((ev) => void (ev.type === 'update' && updates++));
    } else {
      for (let h = 0; h < handlers; h++) {
        r.inf.addHandler({
          update: (_old, pod) => {
            if (h === 0) updates++;
            recordLag(pod);
          },
        });
      }
    }
    client = { inf: r.inf, synced: r.synced, updates: () => updates, stop: r.stop };
  }
  try {
    await Promise.race([client.synced, new Promise((_, reject) => setTimeout(() => reject(new Error(`not synced within ${args.timeoutMs} ms`)), args.timeoutMs).unref())]);
    const syncMs = performance.now() - t0;
    const rssAfterSync = await rss();
    const result: ClientResult = { syncMs, rssAfterSync };
    await watching(args.url, args.timeoutMs);

    if (w.kind === 'sync' && w.watchEvents > 0) {
      const before = client.updates();
      let first = 0;
      let last = 0;
      const done = (): boolean => {
        const n = client.updates() - before;
        const now = performance.now();
        if (n > 0 && first === 0) first = now;
        if (n >= w.watchEvents) last = now;
        return n >= w.watchEvents;
      };
      await control(args.url, `/bench/modify?count=${w.watchEvents}`);
      // Polled rather than timed in the handler, so every client pays the same for being measured.
      await until('the updates', done, args.timeoutMs, 1);
      return { ...result, eventsPerSecond: w.watchEvents / ((last - first) / 1000 + 0.001) };
    }

    if (w.kind === 'relist') {
      const inf = client.inf;
      // rxkube: the reflector reports 'watching' once the relisted Replace was applied to the store.
      let watchingAfterRelist = 0;
      const sub = inf?.status$.subscribe((s) => {
        const r = s.reflector;
        if (r !== undefined && r.counters.relists > 0 && r.state === 'watching') watchingAfterRelist = r.counters.relists;
      });
      const relists = (): number => (inf !== undefined ? watchingAfterRelist : (client.relisted?.() ?? 0));
      const sampler = rssSampler(5);
      const t1 = performance.now();
      await control(args.url, '/bench/expire');
      await until('the relist', () => relists() > 0, args.timeoutMs);
      const relistMs = performance.now() - t1;
      const relistPeakRss = sampler.stop();
      sub?.unsubscribe();
      if (inf !== undefined && inf.store.size !== args.pods) throw new Error(`relist left ${inf.store.size} pods, expected ${args.pods}`);
      return { ...result, relistPeakRss, relistMs };
    }

    if (w.kind === 'latency') {
      const before = client.updates();
      await control(args.url, `/bench/modify?count=${w.events}&perSecond=${w.perSecond}`);
      await until('the updates', () => client.updates() - before >= w.events, args.timeoutMs);
      // Every handler's calls: let the other nine finish too.
      await until('every handler', () => lags.length >= w.events * w.handlers, args.timeoutMs);
      const sorted = Float64Array.from(lags).sort();
      return { ...result, latencyP50: percentile(sorted, 0.5), latencyP99: percentile(sorted, 0.99), latencyMax: sorted[sorted.length - 1] as number };
    }

    if (w.kind === 'slow') {
      const inf = client.inf;
      if (inf === undefined) throw new Error('the slow-handler workload is rxkube only');
      const reg = inf.addHandler(
        { update: () => new Promise<void>((resolve) => setTimeout(resolve, w.handlerMs)) },
        { buffer: { coalesce: 'byKey' } },
      );
      let maxDepth = 0;
      const depthTimer = setInterval(() => (maxDepth = Math.max(maxDepth, reg.depth)), 1);
      const rssBeforeBurst = await rss();
      const heapBeforeBurst = process.memoryUsage().heapUsed;
      const sampler = rssSampler(20);
      const before = client.updates();
      let rssHalfBurst = 0;
      await control(args.url, `/bench/modify?count=${w.events}&keys=${args.pods}`);
      await until('the updates', () => {
        maxDepth = Math.max(maxDepth, reg.depth);
        const n = client.updates() - before;
        if (rssHalfBurst === 0 && n >= w.events / 2) rssHalfBurst = process.memoryUsage().rss;
        return n >= w.events;
      }, args.timeoutMs);
      clearInterval(depthTimer);
      const rssPeakBurst = sampler.stop();
      const rssAfterBurst = await rss();
      const heapAfterBurst = process.memoryUsage().heapUsed;
      await reg.remove();
      return { ...result, maxDepth, rssBeforeBurst, rssHalfBurst, rssAfterBurst, rssPeakBurst, heapBeforeBurst, heapAfterBurst };
    }
    return result;
  } finally {
    await client.stop();
  }
}

serve({ run: (args: ClientArgs) => run(args) });
