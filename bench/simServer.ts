// The API-server simulator in its own process, driven by the benchmark
// runner over IPC, so the parent's heap and CPU figures hold only the client
// being measured.
//
//   node build/bench/simServer.js --pods=100000 --namespaces=20 --history=50000 [--tls=1]
//   (BENCH_SIM_PODS / BENCH_SIM_NAMESPACES / BENCH_SIM_HISTORY work too; argv wins)
//
// Started by the runner with child_process.fork, it posts { event: 'ready', … }
// once seeded, then serves 'churn', 'touch', 'stats', 'resourceVersion' and 'close'
// requests over IPC. Started by hand, it prints the same ready line (JSON,
// kubeconfig included) on stdout and serves until interrupted.

import { setImmediate as tick } from 'node:timers/promises';
import { startApiServer } from 'rxkube/testing';
import { envNumber, wallNow } from './lib/context.js';
import { post, serve } from './lib/ipc.js';
import { namespaceOf, newPod } from './lib/pods.js';

/** What the runner learns once the simulator is seeded. */
export interface SimReady {
  readonly event: 'ready';
  readonly url: string;
  readonly kubeConfigYaml: string;
  readonly pods: number;
  readonly namespaces: number;
  readonly seedMs: number;
  /** Sum of the stored pods' JSON sizes: what a LIST of all of them carries, envelope aside. */
  readonly listJsonBytes: number;
  readonly resourceVersion: string;
}

/** Arguments of the 'churn' request: `count` updates of existing pods through `server.churn`. */
export interface ChurnArgs {
  readonly count: number;
  /** Target rate; 0 means as fast as the simulator can write. */
  readonly perSecond: number;
  readonly namespace: string;
}

/** Reply of 'churn'. */
export interface ChurnReply {
  readonly sent: number;
  readonly elapsedMs: number;
  /** Wall-clock ms (see wallNow) when the first and last writes were made. */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly firstResourceVersion: number;
  readonly resourceVersion: number;
  /**
   * `[rv, wall ms, rv, wall ms, …]`: the server's resourceVersion sampled
   * every millisecond or so the event loop allows during the churn, so a
   * client can tell when the write that produced an event's resourceVersion
   * happened (interpolating between samples).
   */
  readonly rvTimes: number[];
}

/** Arguments of the 'touch' request: one merge patch of one pod's labels. */
export interface TouchArgs {
  readonly namespace: string;
  readonly name: string;
}

/** Reply of 'touch'. */
export interface TouchReply {
  /** Wall-clock ms (see wallNow) just before the write. */
  readonly at: number;
  /** The resourceVersion the write gave the pod. */
  readonly resourceVersion: string;
}

function arg(name: string, fallback: number): number {
  const prefix = `--${name}=`;
  const raw = process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
  if (raw === undefined) return fallback;
  const n = Number(raw.replaceAll('_', ''));
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`--${name}: expected a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

const pods = arg('pods', envNumber('BENCH_SIM_PODS', 100_000));
const namespaces = Math.max(1, arg('namespaces', envNumber('BENCH_SIM_NAMESPACES', 1)));
const nsName = (i: number): string => (namespaces === 1 ? 'default' : namespaceOf(i, namespaces));

// The event window: large enough that a client which falls behind during a
// churn resumes its watch instead of relisting, and that a replay benchmark
// can watch every event of a churn from before it began.
const history = Math.max(1, arg('history', envNumber('BENCH_SIM_HISTORY', 50_000)));
const server = await startApiServer({ port: 0, history: { maxEvents: history }, tls: arg('tls', 0) === 1 });
const t0 = performance.now();
for (let i = 0; i < pods; i++) {
  await server.create('v1/pods', newPod(i, nsName(i)));
  // Lets the IPC channel breathe during a long seed.
  if (i % 10_000 === 9_999) await tick();
}
const seedMs = performance.now() - t0;
let listJsonBytes = 0;
for (const p of server.list('v1/pods')) listJsonBytes += Buffer.byteLength(JSON.stringify(p));

async function churn(args: ChurnArgs): Promise<ChurnReply> {
  if (!Number.isSafeInteger(args.count) || args.count < 1) throw new TypeError(`churn: count must be a positive integer, got ${args.count}`);
  if (!(args.perSecond >= 0)) throw new TypeError(`churn: perSecond must be >= 0, got ${args.perSecond}`);
  const rvTimes: number[] = [];
  const sampleRv = (): void => void rvTimes.push(Number(server.resourceVersion()), wallNow());
  sampleRv();
  const firstResourceVersion = Number(server.resourceVersion()) + 1;
  // Runs between the churn's write batches: the samples bracket every batch.
  const sampler = setInterval(sampleRv, 1);
  const startedAt = wallNow();
  const start = performance.now();
  try {
    const result = await server.churn({
      resource: 'v1/pods',
      namespace: args.namespace,
      updates: args.count,
      perSecond: args.perSecond > 0 ? args.perSecond : Number.POSITIVE_INFINITY,
      seed: 1,
    }).done;
    const elapsedMs = performance.now() - start;
    const endedAt = wallNow();
    return { sent: result.updates, elapsedMs, startedAt, endedAt, firstResourceVersion, resourceVersion: Number(server.resourceVersion()), rvTimes };
  } finally {
    clearInterval(sampler);
    sampleRv();
  }
}

const ready: SimReady = {
  event: 'ready',
  url: server.url,
  kubeConfigYaml: server.kubeConfigYaml(),
  pods,
  namespaces,
  seedMs,
  listJsonBytes,
  resourceVersion: server.resourceVersion(),
};

if (process.send === undefined) {
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  const shutdown = (): void => void server.close().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
} else {
  serve({
    churn: (args: ChurnArgs) => churn(args),
    touch: async (args: TouchArgs): Promise<TouchReply> => {
      const at = wallNow();
      const pod = await server.patch<{ metadata: { resourceVersion: string } }>('v1/pods', args.namespace, args.name, { metadata: { labels: { touched: String(at) } } });
      return { at, resourceVersion: pod.metadata.resourceVersion };
    },
    stats: () => server.stats,
    resourceVersion: () => server.resourceVersion(),
    // The process itself ends when the runner disconnects (see serve()).
    close: async () => {
      await server.close();
      return true;
    },
  });
  await post(ready);
}
