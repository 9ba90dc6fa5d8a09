// One Node client of the apiserver benchmark (bench/apiserver.ts) in a fresh process, against the e2e tier's real
// kube-apiserver: client-node's makeInformer, or rxkube's informer with its initial list paged or streamed and its
// transport's gzip on or off. Started with `--expose-gc`; answers 'sync', then 'memory', then 'wait', and exits
// when the runner closes it. Speaks the same three steps as the Go client-go program, so both are measured alike.

import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { informer, kubeSource, withTransport } from 'rxkube';
import { serve } from './lib/ipc.js';
import type { MemoryReply, NodeMode, NodeSyncArgs, SyncReply, WaitArgs, WaitReply } from './lib/measuredClient.js';

/** What both Node clients offer once started. */
interface Client {
  readonly synced: Promise<void>;
  /** The cached object's resourceVersion, if the key is cached. */
  versionOf(key: string): string | undefined;
  /** What the one handler calls on each update, once a wait sets it. */
  onUpdate: () => void;
  size(): number;
}

let client: Client | undefined;

function cpuMs(since?: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

function clientNode(kc: KubeConfig, expected: number): Client {
  const api = kc.makeApiClient(CoreV1Api);
  const inf = makeInformer<V1Pod>(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
  let adds = 0;
  const synced = new Promise<void>((resolve, reject) => {
    inf.on('add', () => {
      if (++adds === expected) resolve();
    });
    inf.on('error', reject);
    inf.start().catch(reject);
  });
  const c: Client = {
    synced,
    versionOf: (key) => {
      const [ns, name] = key.split('/') as [string, string];
      return inf.get(name, ns)?.metadata?.resourceVersion;
    },
    onUpdate: () => {},
    size: () => inf.list().length,
  };
  inf.on('update', () => c.onUpdate());
  return c;
}

function rxkube(kc: KubeConfig, mode: Exclude<NodeMode, 'client-node'>, expected: number): Client {
  const compression = mode.endsWith('-gzip');
  const initialList = mode.startsWith('rxkube-stream') ? 'stream' : 'paged';
  // The source's watchList stays on (its default): `initialList` alone chooses how the first list is made.
  const inf = informer<V1Pod>(kubeSource(withTransport(kc, { compression }), 'v1/pods', { watchList: true }), { initialList });
  let adds = 0;
  let resolveSynced!: () => void;
  const c: Client = {
    synced: new Promise<void>((resolve) => (resolveSynced = resolve)),
    versionOf: (key) => inf.store.getByKey(key)?.metadata?.resourceVersion,
    onUpdate: () => {},
    size: () => inf.store.size,
  };
  // One handler for the whole run, as the Go program has: one added at the wait would first be replayed every
  // cached pod as an add, and the wait would measure that replay.
  inf.addHandler({
    add: () => {
      if (++adds === expected) resolveSynced();
    },
    update: () => c.onUpdate(),
  });
  return c;
}

function deadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref())]);
}

async function sync(args: NodeSyncArgs): Promise<SyncReply> {
  if (client !== undefined) throw new Error('sync: this process already synced a client');
  const kc = new KubeConfig();
  kc.loadFromString(args.kubeConfigYaml);
  const idle = await collected();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  client = args.mode === 'client-node' ? clientNode(kc, args.expected) : rxkube(kc, args.mode, args.expected);
  await deadline(client.synced, args.timeoutMs, `${args.mode} sync`);
  const syncMs = performance.now() - t0;
  return { syncMs, cpuMs: cpuMs(cpu0), objects: client.size(), idleRssBytes: idle.rss, idleHeapBytes: idle.heapUsed };
}

/** Memory after two full collections (more rounds move RSS little and cost seconds on a large heap). */
async function collected(): Promise<NodeJS.MemoryUsage> {
  for (let round = 0; round < 2; round++) {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage();
}

async function memory(): Promise<MemoryReply> {
  if (client === undefined) throw new Error('memory: no client synced yet');
  const m = await collected();
  return { rssBytes: m.rss, heapBytes: m.heapUsed, objects: client.size() };
}

async function wait(args: WaitArgs): Promise<WaitReply> {
  const c = client;
  if (c === undefined) throw new Error('wait: no client synced yet');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // Checked after every applied update rather than polled, so the answer comes as soon as the cache has it.
  await deadline(
    new Promise<void>((resolve) => {
      const check = (): void => {
        if (c.versionOf(args.key) === args.resourceVersion) resolve();
      };
      c.onUpdate = check;
      check();
    }),
    args.timeoutMs,
    `wait for ${args.key} at ${args.resourceVersion}`,
  );
  return { ms: performance.now() - t0, cpuMs: cpuMs(cpu0) };
}

serve({ sync, memory, wait });
