// One replica of a sharded controller, in a process of its own, for the
// sharding benchmark (bench/sharding.ts): this checkout's rxkube or the
// baseline build's (bench/lib/library.ts). It records when it reconciled
// which object; the runner collects the records and reads the shard labels
// off the API server. Answers 'load', 'join', 'take' and 'leave'.

import { KubeConfig } from '@kubernetes/client-node';
import { wallNow } from './lib/context.js';
import { serve } from './lib/ipc.js';
import { library, type Build, type Library } from './lib/library.js';

export interface JoinArgs {
  readonly kubeConfigYaml: string;
  readonly resource: 'v1/pods';
  readonly identity: string;
  readonly controller: string;
  readonly leaseNamespace: string;
  readonly leaseDuration: number;
  readonly renewDeadline: number;
  readonly retryPeriod: number;
  readonly concurrency: number;
}

/** What the replica did since the last 'take'. */
export interface Taken {
  /** `[namespace/name, wall-clock ms of the reconcile's start, …]`, in order. */
  readonly reconciles: readonly (string | number)[];
  readonly errors: number;
  readonly lastError: string | undefined;
  /** The process's resident-set high-water mark, bytes. */
  readonly maxRssBytes: number;
}

let lib: Library | undefined;
let running: { unsubscribe(): void } | undefined;
let records: (string | number)[] = [];
let errors = 0;
let lastError: string | undefined;

function join(args: JoinArgs): number {
  if (lib === undefined) throw new Error("join before 'load'");
  const kc = new KubeConfig();
  kc.loadFromString(args.kubeConfigYaml);
  const t = wallNow();
  // Only the options and the subscription both builds take; what a replica emits is not read, its reconciles are.
  running = lib
    .shardedController({
      kc,
      resource: args.resource,
      controller: args.controller,
      identity: args.identity,
      leaseNamespace: args.leaseNamespace,
      leaseDuration: args.leaseDuration,
      renewDeadline: args.renewDeadline,
      retryPeriod: args.retryPeriod,
      concurrency: args.concurrency,
      reconcile: async (obj) => {
        records.push(`${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`, wallNow());
        await Promise.resolve();
      },
      onError: (err) => {
        errors++;
        lastError = `${err.name}: ${err.message}`;
      },
    })
    .subscribe();
  return t;
}

function take(): Taken {
  const out = records;
  records = [];
  return { reconciles: out, errors, lastError, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
}

serve({
  load: async ({ build }: { build: Build }) => {
    lib = await library(build);
    return true;
  },
  join: (args: JoinArgs) => join(args),
  take: () => take(),
  // A graceful leave (drain, then release the Leases) goes on in the background; the process stays until closed.
  leave: () => {
    running?.unsubscribe();
    return wallNow();
  },
});
