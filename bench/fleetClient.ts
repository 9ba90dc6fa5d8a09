// One sync of a fleet's pods, measured in a fresh process so its heap holds
// nothing but the runtime, the libraries and the informers under test: this
// checkout's rxkube or the baseline build's (bench/lib/library.ts).
// Started by the multicluster benchmark with `--expose-gc`; answers one 'run'.

import { KubeConfig } from '@kubernetes/client-node';
import { of } from 'rxjs';
import { heapAfterGc } from './lib/heap.js';
import { serve } from './lib/ipc.js';
import { library, type Build } from './lib/library.js';

/**
 * What is measured: `single`, one informer over one cluster; `fleet`, a
 * multi-cluster informer over every cluster given; `fleet-of-one`, a
 * multi-cluster informer over the one cluster (what the merging layer costs).
 */
export type FleetMode = 'single' | 'fleet' | 'fleet-of-one';

export interface FleetArgs {
  readonly mode: FleetMode;
  readonly build: Build;
  readonly kubeConfigYamls: readonly string[];
  readonly expected: number;
  readonly timeoutMs: number;
}

export interface FleetResult {
  readonly mode: FleetMode;
  readonly build: Build;
  readonly syncMs: number;
  /** This process's CPU (user + system) over the sync, ms: steadier than the time on a busy machine. */
  readonly cpuMs: number;
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
  const lib = await library(args.build);
  const base = await heapAfterGc();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let objects: number;
  let stop: () => void;
  // Subscribing starts either informer and unsubscribing stops it, in every build.
  if (args.mode === 'single') {
    const inf = lib.informer(lib.kubeSource(kcs[0] as KubeConfig, 'v1/pods'));
    const sub = inf.subscribe();
    await inf.whenSynced({ signal });
    objects = inf.store.size;
    stop = () => sub.unsubscribe();
  } else {
    const fleet = of(kcs.map((kubeConfig, i) => ({ name: `cluster-${i}`, kubeConfig })));
    const inf = lib.multiClusterInformer(fleet, (c) => lib.kubeSource(c.kubeConfig, 'v1/pods'));
    const sub = inf.subscribe();
    await inf.whenSynced({ signal });
    objects = inf.store.size;
    stop = () => sub.unsubscribe();
  }
  const syncMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const heapBytes = (await heapAfterGc()) - base;
  stop();
  if (objects !== args.expected) throw new Error(`${args.build} ${args.mode}: synced ${objects} objects, expected ${args.expected}`);
  return { mode: args.mode, build: args.build, syncMs, cpuMs: (cpu.user + cpu.system) / 1000, objects, heapBytes, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
}

serve({ run: (args: FleetArgs) => run(args) });
