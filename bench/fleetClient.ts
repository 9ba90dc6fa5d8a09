// One sync of a fleet's pods, measured in a fresh process so its heap holds
// nothing but the runtime, the libraries and the informers under test.
// Started by the multicluster benchmark with `--expose-gc`; answers one 'run'.

import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { of } from 'rxjs';
import { informer, kubeSource, multiClusterInformer } from 'rxkube';
import { heapAfterGc } from './lib/heap.js';
import { serve } from './lib/ipc.js';

/**
 * What is measured: `single`, one informer over one cluster; `fleet`, a
 * multi-cluster informer over every cluster given; `fleet-of-one`, a
 * multi-cluster informer over the one cluster (what the merging layer costs).
 */
export type FleetMode = 'single' | 'fleet' | 'fleet-of-one';

export interface FleetArgs {
  readonly mode: FleetMode;
  readonly kubeConfigYamls: readonly string[];
  readonly expected: number;
  readonly timeoutMs: number;
}

export interface FleetResult {
  readonly mode: FleetMode;
  readonly syncMs: number;
  readonly objects: number;
  /** Heap after sync and GC minus heap before, bytes. */
  readonly heapBytes: number;
  /** The process's resident-set high-water mark, bytes. */
  readonly maxRssBytes: number;
}

async function run(args: FleetArgs): Promise<FleetResult> {
  const kcs = args.kubeConfigYamls.map((yaml) => {
    const kc = new KubeConfig();
    kc.loadFromString(yaml);
    return kc;
  });
  const signal = AbortSignal.timeout(args.timeoutMs);
  const base = await heapAfterGc();
  const t0 = performance.now();
  let objects: number;
  let stop: () => Promise<void> | void;
  if (args.mode === 'single') {
    const inf = informer<V1Pod>(kubeSource(kcs[0] as KubeConfig, 'v1/pods'));
    const sub = inf.subscribe();
    await inf.whenSynced({ signal });
    objects = inf.store.size;
    stop = () => sub.unsubscribe();
  } else {
    const fleet = of(kcs.map((kubeConfig, i) => ({ name: `cluster-${i}`, kubeConfig })));
    const inf = multiClusterInformer(fleet, (c) => kubeSource(c.kubeConfig, 'v1/pods'));
    const sub = inf.subscribe();
    await inf.whenSynced({ signal });
    objects = inf.store.size;
    stop = () => sub.unsubscribe();
  }
  const syncMs = performance.now() - t0;
  const heapBytes = (await heapAfterGc()) - base;
  await stop();
  if (objects !== args.expected) throw new Error(`${args.mode}: synced ${objects} objects, expected ${args.expected}`);
  return { mode: args.mode, syncMs, objects, heapBytes, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
}

serve({ run: (args: FleetArgs) => run(args) });
