// One run of a multi-cluster controller over a fleet of simulated clusters
// (bench/fleetServer.ts), in a fresh process: this checkout's rxkube or the
// baseline build's (bench/lib/library.ts). Started by bench/mcController.ts
// with `--expose-gc`; answers one 'run'.

import { KubeConfig } from '@kubernetes/client-node';
import { of } from 'rxjs';
import { serve } from './lib/ipc.js';
import { library, type Build } from './lib/library.js';

/** What a reconcile does: return at once, or await one microtask (a reconcile that is async but does no I/O). */
export type McWork = 'none' | 'microtask';

export interface McControllerArgs {
  readonly build: Build;
  readonly kubeConfigYamls: readonly string[];
  /** Objects over every cluster: the run ends when each was reconciled once. */
  readonly expected: number;
  readonly concurrency: number;
  readonly work: McWork;
  readonly timeoutMs: number;
}

export interface McControllerResult {
  /** From subscribing to the controller until every object of every cluster was reconciled once, ms. */
  readonly ms: number;
  /** This process's CPU (user + system) over the same span, ms. */
  readonly cpuMs: number;
  /** Outcomes counted (not failed), repeats of a key included. */
  readonly reconciles: number;
  /** Failed outcomes seen (each is retried, so the run still ends). */
  readonly failures: number;
  /** The process's resident-set high-water mark, bytes. */
  readonly maxRssBytes: number;
}

async function run(args: McControllerArgs): Promise<McControllerResult> {
  const lib = await library(args.build);
  const fleet = of(
    args.kubeConfigYamls.map((yaml, i) => {
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromString(yaml);
      return { name: `cluster-${i}`, kubeConfig };
    }),
  );
  // No onError: what goes wrong is reported on this process's stderr, which the runner shows.
  const pods = lib.multiClusterInformer(fleet, (c) => lib.kubeSource(c.kubeConfig, 'v1/pods'));
  const reconcile = args.work === 'none' ? (): void => {} : async (): Promise<void> => await Promise.resolve();
  const mc = lib.multiClusterController({ for: pods, reconcile, concurrency: args.concurrency });
  const seen = new Set<string>();
  let reconciles = 0;
  let failures = 0;
  let done: (ms: number) => void = () => {};
  const finished = new Promise<number>((resolve) => (done = resolve));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // Only what the old and the new controller both emit is read: an outcome's type and key, and the cluster beside
  // the key where a build keeps it apart (before #28; since, the key is the cluster key).
  const sub = mc.subscribe((o) => {
    // Every outcome but a failure counts (no object is deleted here), whatever the build calls a success.
    if (o.type === 'failed') {
      failures++;
      return;
    }
    reconciles++;
    const cluster = (o as { readonly cluster?: string }).cluster;
    seen.add(cluster === undefined ? o.key : `${cluster}/${o.key}`);
    if (seen.size === args.expected) done(performance.now() - t0);
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${args.build}: ${seen.size} of ${args.expected} objects reconciled within ${args.timeoutMs} ms (${failures} failed outcomes)`)), args.timeoutMs);
  });
  try {
    const ms = await Promise.race([finished, timedOut]);
    const cpu = process.cpuUsage(cpu0);
    return { ms, cpuMs: (cpu.user + cpu.system) / 1000, reconciles, failures, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  } finally {
    clearTimeout(timer);
    sub.unsubscribe();
  }
}

serve({ run: (args: McControllerArgs) => run(args) });
