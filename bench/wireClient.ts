// One measured client in a fresh process, against the benchmark server
// (bench/wireServer.ts): the floor (bench/floorClient.ts), client-node's
// makeInformer, or rxkube's informer. Started by bench/compare.ts with
// `--expose-gc`; answers one 'run' request and exits. (client-go runs as its
// own Go program, driven by bench/goClient.ts.)

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { informer, kubeSource, type Informer, type Registration } from 'rxkube';
import { floorClient } from './floorClient.js';
import { wallNow } from './lib/context.js';
import { serve } from './lib/ipc.js';
import { percentile } from './lib/stats.js';
import type { ModifyReply } from './wireServer.js';

/**
 * Who is measured. `floor` reads the same LIST pages and watch lines with
 * undici and JSON.parses each object once, keeping them in a Map: what
 * any client must at least do. `client-go` is Go's informer (JSON), a Go
 * program. `rxkube-keep` is rxkube with `stripManagedFields: false`;
 * `rxkube-image` is rxkube run with the runner image's Node options.
 * `rxkube-baseline` is rxkube as another build of it compiled it (the
 * checkout `BENCH_BASELINE` names), so a change is measured against the
 * code before it in the same interleaved run.
 */
export type ClientMode = 'floor' | 'client-node' | 'client-go' | 'rxkube' | 'rxkube-keep' | 'rxkube-baseline' | 'rxkube-image';

/** What to do once synced. */
export type Workload =
  /** Sync with `handlers` handlers (0: none), then `watchEvents` MODIFIED events written at once. */
  | { readonly kind: 'sync'; readonly handlers: number; readonly watchEvents: number }
  | { readonly kind: 'relist' }
  /**
   * `events` MODIFIED events at `perSecond`, then, after `idleMs` with nothing written, the same again: the first
   * burst comes right after the sync, the second to a client that has handled a burst before (PF-113).
   */
  | { readonly kind: 'latency'; readonly handlers: number; readonly events: number; readonly perSecond: number; readonly settleMs: number; readonly idleMs: number }
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
  /** Start to synced (the last initial add handled by handler 0; with no handler, the cache holding every pod), ms. */
  readonly syncMs: number;
  /** RSS after the sync and a full GC, bytes. */
  readonly rssAfterSync: number;
  /** `sync` with events: events / the time from asking for them until the cache held the last one (and every handler had seen it). */
  readonly eventsPerSecond?: number;
  /** `sync` with events: RSS after the watch phase and the runtime's own GC, bytes. */
  readonly rssAfterWatch?: number;
  /** `sync` with events: heap after GC (Node: V8's used heap; Go: HeapInuse), bytes. */
  readonly heapAfterWatch?: number;
  /** The same figure before the client was made (libraries loaded, nothing cached), bytes. */
  readonly heapAtStart?: number;
  /** `sync` with events: the process's CPU (every thread, user and system) from asking for the events until the last was applied, ms. */
  readonly watchCpuMs?: number;
  /** `relist`: highest RSS sampled (every 5 ms) from the 410 until the relisted cache was in place, bytes. */
  readonly relistPeakRss?: number;
  readonly relistMs?: number;
  /** `latency`: write → handler, ms, over every handler call of the first burst. */
  readonly latencyP50?: number;
  readonly latencyP99?: number;
  readonly latencyMax?: number;
  /**
   * `latency`: p99 over the handler calls of events written at least `settleMs` after the first: the same run
   * without its first moments, right after the sync, when a client may fall behind (PF-113).
   */
  readonly latencySettledP99?: number;
  /** `latency`: p50 and p99 over every handler call of the second burst, written after `idleMs` with nothing written. */
  readonly latencySecondP50?: number;
  readonly latencySecondP99?: number;
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

/** What the three Node clients share, as the workloads see them. */
interface Client {
  /** Objects in the cache (only asked while syncing). */
  size(): number;
  /** The cached object under `namespace/name`. */
  get(key: string): V1Pod | undefined;
  /** Adds, and updates, handler 0 has been called with. */
  adds(): number;
  updates(): number;
  /** The last object each handler was called with. */
  readonly lastSeen: readonly (V1Pod | undefined)[];
  relisted?(): number;
  readonly inf?: Informer<V1Pod>;
  stop(): Promise<void>;
}

const SENT = 'bench.rxkube.io/sent';

function sentOf(pod: V1Pod): number {
  return Number(pod.metadata?.annotations?.[SENT]);
}

async function control<T = unknown>(url: string, path: string): Promise<T> {
  const res = await fetch(`${url}${path}`, { method: 'POST' });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
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

/** `handlers` handler bodies, alike for every client: count handler 0's calls, remember each one's last object. */
function handlerSet(handlers: number, onUpdate: (pod: V1Pod) => void) {
  const lastSeen: (V1Pod | undefined)[] = new Array<V1Pod | undefined>(handlers).fill(undefined);
  let adds = 0;
  let updates = 0;
  const call = (h: number, pod: V1Pod, update: boolean): void => {
    lastSeen[h] = pod;
    if (!update) {
      if (h === 0) adds++;
      return;
    }
    if (h === 0) updates++;
    onUpdate(pod);
  };
  return { lastSeen, call, adds: () => adds, updates: () => updates };
}

function floor(url: string, handlers: number, onUpdate: (pod: V1Pod) => void): Client {
  const hs = handlerSet(handlers, onUpdate);
  const f = floorClient(url, Array.from({ length: handlers }, (_, h) => (pod: V1Pod, update: boolean) => hs.call(h, pod, update)));
  return { ...hs, size: () => f.cache.size, get: (key) => f.cache.get(key), relisted: f.relisted, stop: f.stop };
}

function clientNode(kc: KubeConfig, handlers: number, onUpdate: (pod: V1Pod) => void): Client {
  const api = kc.makeApiClient(CoreV1Api);
  const inf = makeInformer<V1Pod>(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
  const hs = handlerSet(handlers, onUpdate);
  let failed: unknown;
  for (let h = 0; h < handlers; h++) {
    inf.on('add', (pod) => hs.call(h, pod, false));
    inf.on('update', (pod) => hs.call(h, pod, true));
  }
  inf.on('error', (err) => (failed = err));
  void inf.start().catch((err: unknown) => (failed = err));
  return {
    ...hs,
    // ListWatch sets its resourceVersion once the whole list is in the cache (its type leaves the method out); list()
    // copies the cache, so it is asked for once, then.
    size: () => {
      if (failed !== undefined) throw failed;
      return (inf as unknown as { latestResourceVersion(): string }).latestResourceVersion() === '' ? 0 : inf.list().length;
    },
    get: (key) => {
      const at = key.indexOf('/');
      return inf.get(key.slice(at + 1), key.slice(0, at));
    },
    stop: () => inf.stop(),
  };
}

type Library = Pick<typeof import('rxkube'), 'informer' | 'kubeSource'>;

/** Ends a handler registration once its call in progress finished: `unsubscribe()` and `done`, or `remove()` on a baseline built before #28. */
function endRegistration(reg: Registration): Promise<void> {
  const old = reg as unknown as Partial<{ remove(): Promise<void> }>;
  if (typeof reg.unsubscribe !== 'function' && old.remove !== undefined) return old.remove();
  reg.unsubscribe();
  return reg.done;
}

/** The library a mode measures: this build's, or the baseline checkout's `dist/` (`BENCH_BASELINE`). */
async function library(mode: ClientMode): Promise<Library> {
  if (mode !== 'rxkube-baseline') return { informer, kubeSource };
  const root = process.env.BENCH_BASELINE;
  if (root === undefined || root === '') throw new TypeError('rxkube-baseline: BENCH_BASELINE names no checkout');
  return (await import(pathToFileURL(join(root, 'dist', 'index.js')).href)) as Library;
}

/** `slow`: one add-only handler, and updates counted off the informer's event stream. */
function rxkube(lib: Library, kc: KubeConfig, handlers: number, keepManagedFields: boolean, slow: boolean, onUpdate: (pod: V1Pod) => void): Client {
  // The relist workload's 410 is expected; counted by the reflector, not printed.
  const inf: Informer<V1Pod> = lib.informer(lib.kubeSource(kc, 'v1/pods'), { stripManagedFields: !keepManagedFields, onError: () => {} });
  const hs = handlerSet(handlers, onUpdate);
  let streamed = 0;
  // Subscribing starts the informer, as client-go's informer.Run does; the handlers and the event stream share its lifetime.
  const sub = inf.subscribe((ev) => void (slow && ev.type === 'update' && streamed++));
  const regs: Registration[] = [];
  for (let h = 0; h < handlers; h++) {
    regs.push(inf.addHandler(slow ? { add: (pod) => hs.call(h, pod, false) } : { add: (pod) => hs.call(h, pod, false), update: (_old, pod) => hs.call(h, pod, true) }));
  }
  return {
    ...hs,
    updates: slow ? () => streamed : hs.updates,
    size: () => inf.store.size,
    get: (key) => inf.store.getByKey(key),
    inf,
    stop: () => {
      sub.unsubscribe();
      return Promise.all(regs.map(endRegistration)).then(() => undefined);
    },
  };
}

// ------------------------------------------------------------------ workloads

async function run(args: ClientArgs): Promise<ClientResult> {
  const kc = new KubeConfig();
  kc.loadFromString(args.kubeConfigYaml);
  const w = args.workload;
  const handlers = w.kind === 'latency' || w.kind === 'sync' ? w.handlers : 1;
  const lags: number[] = [];
  // When each lagged event was written, to tell the first moments after the sync from the rest (settledP99).
  const sent: number[] = [];
  const recordLag =
    w.kind === 'latency'
      ? (pod: V1Pod): void => {
          const at = sentOf(pod);
          lags.push(wallNow() - at);
          sent.push(at);
        }
      : (): void => {};
  await rss();
  const heapAtStart = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  let client: Client;
  if (args.mode === 'floor') client = floor(args.url, handlers, recordLag);
  else if (args.mode === 'client-node') client = clientNode(kc, handlers, recordLag);
  else if (args.mode === 'client-go') throw new Error('client-go runs as a Go program (bench/goClient.ts), not here');
  else client = rxkube(await library(args.mode), kc, handlers, args.mode === 'rxkube-keep', w.kind === 'slow', recordLag);
  try {
    // Polled, as the Go program polls its own, so every client pays the same for being watched.
    await until('the sync', () => (handlers > 0 ? client.adds() : client.size()) >= args.pods, args.timeoutMs, 1);
    const syncMs = performance.now() - t0;
    const rssAfterSync = await rss();
    const result: ClientResult = { syncMs, rssAfterSync };
    await watching(args.url, args.timeoutMs);

    if (w.kind === 'sync' && w.watchEvents > 0) {
      const t1 = performance.now();
      const cpu1 = process.cpuUsage();
      const reply = await control<ModifyReply>(args.url, `/bench/modify?count=${w.watchEvents}`);
      const rv = String(reply.lastRv);
      // Events apply in order, so the pod of the last event at its resourceVersion means every event was applied.
      const at = (pod: V1Pod | undefined): boolean => pod?.metadata?.resourceVersion === rv && `${pod.metadata.namespace}/${pod.metadata.name}` === reply.lastKey;
      await until('the last event', () => at(client.get(reply.lastKey)) && client.lastSeen.every(at), args.timeoutMs, 1);
      const watchMs = performance.now() - t1;
      const cpu = process.cpuUsage(cpu1);
      const watchCpuMs = (cpu.user + cpu.system) / 1000;
      const rssAfterWatch = await rss();
      return { ...result, eventsPerSecond: w.watchEvents / (watchMs / 1000), watchCpuMs, rssAfterWatch, heapAfterWatch: process.memoryUsage().heapUsed, heapAtStart };
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
      const burst = async (): Promise<void> => {
        lags.length = 0;
        sent.length = 0;
        const before = client.updates();
        await control(args.url, `/bench/modify?count=${w.events}&perSecond=${w.perSecond}`);
        await until('the updates', () => client.updates() - before >= w.events, args.timeoutMs);
        // Every handler's calls: let the other nine finish too.
        await until('every handler', () => lags.length >= w.events * w.handlers, args.timeoutMs);
      };
      await burst();
      const sorted = Float64Array.from(lags).sort();
      const firstSent = sent.reduce((a, b) => Math.min(a, b), Infinity);
      const settled = Float64Array.from(lags.filter((_, i) => (sent[i] as number) - firstSent >= w.settleMs)).sort();
      await new Promise((resolve) => setTimeout(resolve, w.idleMs));
      await burst();
      const second = Float64Array.from(lags).sort();
      return {
        ...result,
        latencyP50: percentile(sorted, 0.5),
        latencyP99: percentile(sorted, 0.99),
        latencyMax: sorted[sorted.length - 1] as number,
        latencySettledP99: percentile(settled, 0.99),
        latencySecondP50: percentile(second, 0.5),
        latencySecondP99: percentile(second, 0.99),
      };
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
      await endRegistration(reg);
      return { ...result, maxDepth, rssBeforeBurst, rssHalfBurst, rssAfterBurst, rssPeakBurst, heapBeforeBurst, heapAfterBurst };
    }
    return result;
  } finally {
    await client.stop();
  }
}

serve({ run: (args: ClientArgs) => run(args) });
