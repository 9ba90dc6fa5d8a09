// Several API-server simulators in one process, for the multi-cluster
// benchmark: the fleet lives in a process of its own, so the client's heap
// and CPU figures hold only the client.
//
//   node build/bench/fleetServer.js --clusters=10 --pods=5000 --namespaces=10
//
// Started by the runner with child_process.fork, it posts { event: 'ready', … }
// once every server is seeded, then answers 'labels' and 'leases' (what
// the sharding benchmark reads off the first server) and 'close'.

import type { V1Pod } from '@kubernetes/client-node';
import { setImmediate as tick } from 'node:timers/promises';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { post, serve } from './lib/ipc.js';
import { namespaceOf, newPod } from './lib/pods.js';

/** What the runner learns once the fleet is seeded. */
export interface FleetReady {
  readonly event: 'ready';
  /** One kubeconfig per server, in order. */
  readonly kubeConfigYamls: readonly string[];
  readonly podsPerCluster: number;
  readonly seedMs: number;
  /** Sum of the stored pods' JSON sizes over every server. */
  readonly jsonBytes: number;
}

function arg(name: string, fallback: number): number {
  const raw = process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (raw === undefined) return fallback;
  const n = Number(raw.replaceAll('_', ''));
  if (!Number.isSafeInteger(n) || n < 1) throw new TypeError(`--${name}: expected a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

const clusters = arg('clusters', 10);
const pods = arg('pods', 5_000);
const namespaces = arg('namespaces', 10);
const servers: ApiServer[] = [];
const t0 = performance.now();
let jsonBytes = 0;
for (let c = 0; c < clusters; c++) {
  const server = await startApiServer({ port: 0, history: { maxEvents: 1_000 } });
  servers.push(server);
  for (let i = 0; i < pods; i++) {
    await server.create('v1/pods', newPod(i, namespaceOf(i, namespaces)));
    if (i % 10_000 === 9_999) await tick();
  }
  for (const p of server.list('v1/pods')) jsonBytes += Buffer.byteLength(JSON.stringify(p));
}
const ready: FleetReady = { event: 'ready', kubeConfigYamls: servers.map((s) => s.kubeConfigYaml()), podsPerCluster: pods, seedMs: performance.now() - t0, jsonBytes };

/** Arguments of 'labels': the values of some label keys on every pod of the first server. */
export interface LabelsArgs {
  readonly keys: readonly string[];
}

/** Reply of 'labels': per pod, `namespace/name` and the value of each key asked for (null where absent). */
export type LabelsReply = readonly (readonly [string, ...(string | null)[]])[];

serve({
  labels: ({ keys }: LabelsArgs): LabelsReply =>
    (servers[0]?.list<V1Pod>('v1/pods') ?? []).map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, ...keys.map((k) => p.metadata?.labels?.[k] ?? null)] as const),
  /** Every Lease of a namespace on the first server, as `[name, holderIdentity or null]`. */
  leases: ({ namespace }: { namespace: string }): (readonly [string, string | null])[] =>
    (servers[0]?.list<{ metadata?: { name?: string }; spec?: { holderIdentity?: string } }>('coordination.k8s.io/v1/leases', namespace) ?? []).map(
      (l) => [l.metadata?.name ?? '', l.spec?.holderIdentity ?? null] as const,
    ),
  close: async () => {
    await Promise.all(servers.map((s) => s.close()));
    return true;
  },
});
await post(ready);
