// One LIST of every pod, the way an informer makes its initial list (pages of
// 500 through listAll), measured in a fresh process so its CPU time is the
// list's and nothing else's. Started by the compression and transport
// benchmarks; answers one 'run' request.

import { KubeConfig } from '@kubernetes/client-node';
import { kubeSource, withTransport } from 'rxkube';
import { listAll, type TransportOptions } from 'rxkube/core';
import { serve } from './lib/ipc.js';

export interface ListArgs {
  readonly kubeConfigYaml: string;
  readonly transport: TransportOptions;
  readonly expected: number;
  /** 500 as the informer; 0 for one unpaged response. */
  readonly pageSize: number;
  readonly timeoutMs: number;
}

export interface ListResult {
  readonly ms: number;
  /** User + system CPU of the whole process (zlib's and GC's threads included) during the list. */
  readonly cpuMs: number;
  readonly items: number;
}

async function run(args: ListArgs): Promise<ListResult> {
  const kc = new KubeConfig();
  kc.loadFromString(args.kubeConfigYaml);
  const source = kubeSource(withTransport(kc, args.transport), 'v1/pods', { pageSize: args.pageSize, idleTimeoutMs: args.timeoutMs });
  const signal = AbortSignal.timeout(args.timeoutMs);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { items } = await listAll(source, { resourceVersion: '' }, signal, { pageSize: args.pageSize });
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (items.length !== args.expected) throw new Error(`listed ${items.length} pods, expected ${args.expected}`);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, items: items.length };
}

serve({ run: (args: ListArgs) => run(args) });
