// rxkube against Go's client-go and client-node on a real kube-apiserver: time and CPU to sync, memory after GC,
// and how fast a watch keeps up, with rxkube's initial list paged or streamed and gzip on or off.
//
//   npm run bench -- apiserver
//   BENCH_APISERVER_PODS=2000 BENCH_APISERVER_PATCHES=500 BENCH_REPEATS=1 npm run bench -- apiserver   # development
//
// The e2e tier's etcd and kube-apiserver v1.34 (spec/e2e/build.sh) start once. This process creates
// BENCH_APISERVER_PODS pods (20k) through the API, 32 in flight, spread over 10 namespaces: a Deployment's pod cut
// to one container (labels, annotations, an owner reference, env, resources, a volume) written by the field manager
// kube-controller-manager, so each carries the managedFields entry a real create gives it; about 3.1 KB of JSON
// as served. Then BENCH_REPEATS rounds (3); in each, every client runs in a fresh process of its own, one after
// the other, the order turned by one each round so no client always follows the same one:
// - client-go v0.37 (bench/go/informer): protobuf with the initial list streamed (WatchList) and a transform that
//   drops managedFields — the reference the issue's targets name; protobuf with client-go's paged LIST and the
//   same transform; JSON with WatchList and the transform;
// - client-node's makeInformer (one unpaged LIST, managedFields kept: it has no transform);
// - rxkube's informer(kubeSource(kc, 'v1/pods')) with initialList 'paged' and 'stream', each with the transport's
//   gzip on and off (managedFields dropped, rxkube's default).
// For each: the time from the informer's start until every initial add was handled, the CPU the process spent in
// that time, RSS and heap after its own runtime's full GC (Node: gc() twice; Go: runtime.GC(), never
// FreeOSMemory), heap per cached pod, and the same before the informer was built (Go: its heap only); then
// BENCH_APISERVER_PATCHES (5k) merge patches, 32 in flight, each to another pod, while the client watches: the
// time from the first patch until the client's cache holds the last version written, the part of it after the
// last write was answered, and the CPU the client spent in it (from /proc). The server's /metrics say how it
// served each client (lists from the watch cache, lists sent to etcd, WatchLists). Ratio rows are the median of
// the per-round ratios to the reference and to client-go's paged protobuf list, with their spread.
// BENCH_APISERVER_CLIENTS=rxkube,client-go runs only the clients whose name contains one of a comma list.

import os from 'node:os';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { objectClient, type ObjectClient } from 'rxkube';
import { startCluster, type Cluster } from '../spec/e2e/cluster.js';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { encodings, listCounts, type ListCounts } from './lib/apiserverProbe.js';
import { locateBinaries } from './lib/e2eBinaries.js';
import { goInformerBinary } from './lib/goInformer.js';
import { MiB } from './lib/heap.js';
import { goClient, NODE_MODES, nodeClient, processCpuMs, type GoFlags, type MeasuredClient, type MemoryReply, type SyncReply } from './lib/measuredClient.js';
import { newPod, podName } from './lib/pods.js';
import { fmt, row, type Row } from './lib/report.js';
import { runnerNodeOptions } from './lib/runnerFlags.js';
import { summarize } from './lib/stats.js';

const NAMESPACES = 10;
const IN_FLIGHT = 32;
const TIMEOUT_MS = 300_000;

/** The measured clients, the reference first. */
const GO_CLIENTS: readonly (readonly [string, GoFlags])[] = [
  ['client-go pb watch-list', { protobuf: true, watchList: true, stripManagedFields: true }],
  ['client-go pb paged', { protobuf: true, watchList: false, stripManagedFields: true }],
  ['client-go json watch-list', { protobuf: false, watchList: true, stripManagedFields: true }],
];
const REFERENCE = 'client-go pb watch-list';
const NODE_NAMES: Readonly<Record<(typeof NODE_MODES)[number], string>> = {
  'client-node': 'client-node',
  'rxkube-paged-gzip': 'rxkube paged gzip',
  'rxkube-paged': 'rxkube paged',
  'rxkube-stream-gzip': 'rxkube stream gzip',
  'rxkube-stream': 'rxkube stream',
};

/** rxkube's default initial list under the runner image's Node options. */
const IMAGE_NAME = `${NODE_NAMES['rxkube-paged-gzip']}, image flags`;

/** One client's figures in one round. */
interface Sample {
  readonly syncMs: number;
  readonly syncCpuMs: number;
  readonly rssMiB: number;
  readonly heapMiB: number;
  readonly heapPerPod: number;
  /** RSS (Node only, NaN for Go) and heap after GC with the libraries loaded and no informer yet. */
  readonly idleRssMiB: number;
  readonly idleHeapMiB: number;
  readonly watchMs: number;
  readonly catchUpMs: number;
  readonly watchCpuMs: number;
  /** Lists of pods kube-apiserver served from its watch cache, and sent to etcd, while the client ran. */
  readonly cacheLists: number;
  readonly etcdLists: number;
  /** Streamed initial lists (WatchList) the server finished while the client ran. */
  readonly watchLists: number;
}

const METRICS: readonly (readonly [keyof Sample, string, string])[] = [
  ['syncMs', 'time to sync', 'ms'],
  ['syncCpuMs', 'CPU to sync', 'ms'],
  ['rssMiB', 'RSS after GC (synced)', 'MiB'],
  ['heapMiB', 'heap after GC (synced)', 'MiB'],
  ['heapPerPod', 'heap after GC per cached pod', 'B'],
  ['idleRssMiB', 'RSS after GC before the informer (Node)', 'MiB'],
  ['idleHeapMiB', 'heap after GC before the informer', 'MiB'],
  ['watchMs', 'first patch → cache holds the last', 'ms'],
  ['catchUpMs', 'last write answered → cache holds it', 'ms'],
  ['watchCpuMs', 'CPU in the watch phase', 'ms'],
  ['cacheLists', 'lists the server answered from its watch cache', 'n'],
  ['etcdLists', 'lists the server sent to etcd', 'n'],
  ['watchLists', 'streamed initial lists (WatchList) the server finished', 'n'],
];

/**
 * The i-th pod as a ReplicaSet controller creates it (bench/lib/pods.ts's Deployment pod, its name given), cut to
 * the fields that keep it near 3.1 KB as served once the server has defaulted it (tolerations, QoS, status) and
 * recorded the create in managedFields: one container with an env entry, requests and limits and a config volume.
 */
function podToCreate(i: number, namespace: string): V1Pod {
  const { status: _status, spec, ...pod } = newPod(i, namespace);
  const c = spec?.containers[0] as NonNullable<V1Pod['spec']>['containers'][number];
  return {
    ...pod,
    spec: {
      containers: [{
        name: c.name,
        image: c.image,
        env: c.env?.slice(0, 1),
        resources: c.resources,
        volumeMounts: c.volumeMounts?.slice(0, 1),
      }],
      volumes: spec?.volumes?.slice(0, 1),
      nodeName: spec?.nodeName,
      serviceAccountName: 'default',
    },
  };
}

/** Runs `f(0…n-1)` with `inFlight` calls at a time. */
async function pool(n: number, inFlight: number, f: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await f(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, worker));
}

async function createPods(ctx: Context, cluster: Cluster, pods: number): Promise<ObjectClient<V1Pod>[]> {
  const kc = cluster.kubeConfig;
  const namespaces = objectClient(kc, 'v1/namespaces');
  const clients: ObjectClient<V1Pod>[] = [];
  for (let n = 0; n < NAMESPACES; n++) {
    await namespaces.create({ metadata: { name: `bench-${n}` } });
    clients.push(objectClient(kc, 'v1/pods', { namespace: `bench-${n}`, fieldManager: 'kube-controller-manager' }));
  }
  const t0 = performance.now();
  await pool(pods, IN_FLIGHT, async (i) => {
    await (clients[i % NAMESPACES] as ObjectClient<V1Pod>).create(podToCreate(i, `bench-${i % NAMESPACES}`));
  });
  const served = await (clients[0] as ObjectClient<V1Pod>).get(podName(0));
  ctx.log(`apiserver: ${pods} pods created in ${((performance.now() - t0) / 1000).toFixed(1)} s; one is ${JSON.stringify(served).length} bytes of JSON with ${served.metadata?.managedFields?.length ?? 0} managedFields entries`);
  return clients;
}

/**
 * Writes `count` merge patches, one annotation each, to pods in turn; returns the key and version written last.
 * `run` makes every value new: a patch that changes nothing is answered with the old version and no event.
 */
async function patchPods(clients: readonly ObjectClient<V1Pod>[], pods: number, count: number, run: string): Promise<{ key: string; resourceVersion: string; ms: number }> {
  let last = { key: '', resourceVersion: '', rv: -1 };
  const t0 = performance.now();
  await pool(count, IN_FLIGHT, async (k) => {
    const i = (k * 7919) % pods;
    const ns = i % NAMESPACES;
    const pod = await (clients[ns] as ObjectClient<V1Pod>).patch(podName(i), { metadata: { annotations: { 'bench.rxkube.dev/patch': `${run}-${k}` } } }, { type: 'merge', fieldManager: 'bench' });
    // kube-apiserver over etcd hands out etcd revisions: the highest is the write the watch delivers last.
    const rv = Number(pod.metadata?.resourceVersion);
    if (rv > last.rv) last = { key: `bench-${ns}/${podName(i)}`, resourceVersion: pod.metadata?.resourceVersion ?? '', rv };
  });
  return { key: last.key, resourceVersion: last.resourceVersion, ms: performance.now() - t0 };
}

async function measure(kc: KubeConfig, start: () => MeasuredClient, clients: readonly ObjectClient<V1Pod>[], pods: number, patches: number, run: string): Promise<Sample> {
  const lists = await listCounts(kc);
  const client = start();
  try {
    return { ...(await steps(client, clients, pods, patches, run)), ...(await listsSince(kc, lists)) };
  } finally {
    await client.close();
  }
}

async function listsSince(kc: KubeConfig, before: ListCounts): Promise<Pick<Sample, 'cacheLists' | 'etcdLists' | 'watchLists'>> {
  const after = await listCounts(kc);
  return { cacheLists: after.fromCache - before.fromCache, etcdLists: after.fromEtcd - before.fromEtcd, watchLists: after.watchLists - before.watchLists };
}

async function steps(client: MeasuredClient, clients: readonly ObjectClient<V1Pod>[], pods: number, patches: number, run: string): Promise<Omit<Sample, 'cacheLists' | 'etcdLists' | 'watchLists'>> {
  const synced: SyncReply = await client.sync();
  if (synced.objects !== pods) throw new Error(`synced ${synced.objects} pods, expected ${pods}`);
  const mem: MemoryReply = await client.memory();
  const cpu0 = processCpuMs(client.pid);
  const written = await patchPods(clients, pods, patches, run);
  const reached = await client.wait(written.key, written.resourceVersion);
  return {
    syncMs: synced.syncMs,
    syncCpuMs: synced.cpuMs,
    rssMiB: mem.rssBytes / MiB,
    heapMiB: mem.heapBytes / MiB,
    heapPerPod: mem.heapBytes / mem.objects,
    idleRssMiB: (synced.idleRssBytes ?? Number.NaN) / MiB,
    idleHeapMiB: (synced.idleHeapBytes ?? mem.idleHeapBytes ?? Number.NaN) / MiB,
    watchMs: written.ms + reached.ms,
    catchUpMs: reached.ms,
    watchCpuMs: processCpuMs(client.pid) - cpu0,
  };
}

function median(values: readonly number[]): number {
  return summarize(values).p50;
}

/** Ratio rows are taken against the reference, and against client-go's fastest list (paged protobuf) beside it. */
const RATIO_TO: readonly string[] = [REFERENCE, 'client-go pb paged'];

/**
 * Rows per metric: each client's median [min–max] over the rounds, then the other clients' per-round ratios to
 * each of RATIO_TO. No ratios for counts, the Node-only idle figures, or the catch-up, which is a few
 * microseconds when the cache already held the version and would make a ratio of noise.
 */
function report(samples: ReadonlyMap<string, Sample[]>, bench: string): Row[] {
  const rows: Row[] = [];
  for (const [key, metric, unit] of METRICS) {
    for (const [name, list] of samples) {
      const s = summarize(list.map((x) => x[key]));
      rows.push(row(bench, name, metric, unit, s, `median ${fmt(s.p50)} [${fmt(s.min)}–${fmt(s.max)}]`));
    }
    if (unit === 'n' || key.startsWith('idle') || key === 'catchUpMs') continue;
    for (const to of RATIO_TO) {
      const ref = samples.get(to);
      if (ref === undefined) continue;
      for (const [name, list] of samples) {
        if (name.startsWith('client-go')) continue;
        const s = summarize(list.map((x, i) => x[key] / (ref[i] as Sample)[key]));
        rows.push(row(bench, `${name} ÷ ${to}`, metric, 'x', s, `median of per-round ratios ${s.p50.toFixed(2)}× [${s.min.toFixed(2)}–${s.max.toFixed(2)}]`));
      }
    }
  }
  return rows;
}

/** The same figures as a compact table on stderr, a line per client, for reading while the run goes on. */
function logTable(ctx: Context, samples: ReadonlyMap<string, Sample[]>): void {
  for (const [name, list] of samples) {
    ctx.log(`apiserver: ${name.padEnd(26)} ${METRICS.map(([k, , unit]) => `${k} ${fmt(median(list.map((x) => x[k])))} ${unit}`).join(', ')}`);
  }
}

export const apiserver: Benchmark = {
  name: 'apiserver',
  description: "rxkube's four initial-list variants against client-go (protobuf, WatchList) and client-node on a real kube-apiserver: sync time and CPU, memory after GC, watch catch-up",
  async run(ctx: Context): Promise<Row[]> {
    const pods = ctx.scaled(envNumber('BENCH_APISERVER_PODS', 20_000), 100);
    const patches = ctx.scaled(envNumber('BENCH_APISERVER_PATCHES', 5_000), 50);
    const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');
    const loadBefore = load();
    // BENCH_APISERVER_CLIENTS: only the clients whose name contains one of a comma list (all by default).
    const wanted = (process.env.BENCH_APISERVER_CLIENTS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const chosen = (name: string): boolean => wanted.length === 0 || wanted.some((w) => name.includes(w));
    const goClients = GO_CLIENTS.filter(([name]) => chosen(name));
    const nodeModes = NODE_MODES.filter((mode) => chosen(NODE_NAMES[mode]));
    if (goClients.length + nodeModes.length === 0 && !chosen(IMAGE_NAME)) throw new TypeError(`BENCH_APISERVER_CLIENTS: ${JSON.stringify(wanted.join(','))} matches no client`);
    const binary = goClients.length === 0 ? '' : await goInformerBinary(ctx.log);
    locateBinaries();
    ctx.log('apiserver: starting etcd and kube-apiserver');
    const cluster = await startCluster();
    try {
      const clients = await createPods(ctx, cluster, pods);
      const enc = await encodings(cluster.kubeConfig, 500);
      ctx.log(`apiserver: asked for gzip, a list page of 500 pods (${enc.pageBytes} bytes) came ${enc.page}, a streamed initial list (WatchList) ${enc.watchList}`);
      const kubeConfigYaml = cluster.kubeConfig.exportConfig();
      const starters: readonly (readonly [string, () => MeasuredClient])[] = [
        ...goClients.map(([name, flags]) => [name, () => goClient(binary, cluster.kubeconfigPath, flags, pods, TIMEOUT_MS)] as const),
        ...nodeModes.map((mode) => [NODE_NAMES[mode], () => nodeClient(mode, kubeConfigYaml, pods, TIMEOUT_MS)] as const),
        // The default initial list again, with the Node options the runner's image sets (PF-47).
        ...(chosen(IMAGE_NAME) ? [[IMAGE_NAME, () => nodeClient('rxkube-paged-gzip', kubeConfigYaml, pods, TIMEOUT_MS, runnerNodeOptions())] as const] : []),
      ];
      const samples = new Map<string, Sample[]>(starters.map(([name]) => [name, []]));
      for (let r = 0; r < ctx.repeats; r++) {
        // Turned by one each round: every client meets each position once in as many rounds as there are clients.
        const order = [...starters.slice(r % starters.length), ...starters.slice(0, r % starters.length)];
        for (const [name, start] of order) {
          const s = await measure(cluster.kubeConfig, start, clients, pods, patches, `r${r}-${name}`);
          samples.get(name)?.push(s);
          ctx.log(`apiserver: round ${r + 1} ${name}: sync ${fmt(s.syncMs)} ms (CPU ${fmt(s.syncCpuMs)} ms), RSS ${fmt(s.rssMiB)} MiB (idle ${fmt(s.idleRssMiB)}), heap ${fmt(s.heapMiB)} MiB (idle ${fmt(s.idleHeapMiB)}), watch ${fmt(s.watchMs)} ms (catch-up ${fmt(s.catchUpMs)} ms); lists from the watch cache ${s.cacheLists}, from etcd ${s.etcdLists}, WatchLists ${s.watchLists}; load ${load()}`);
        }
      }
      logTable(ctx, samples);
      const bench = `apiserver: ${pods} pods, ${patches} patches (${ctx.repeats} rounds; load ${loadBefore} → ${load()})`;
      return report(samples, bench);
    } finally {
      await cluster.stop();
    }
  },
};
