// One measured informer process of the apiserver benchmark, whichever runtime it is: a Node client
// (bench/apiserverClient.ts, forked) or the Go client-go program (bench/go/informer, through
// bench/lib/goInformer.ts). Both answer the same three steps: sync, memory after GC, wait for a version.

import { readFileSync } from 'node:fs';
import { GoInformer, type GoInformerOptions, type GoSynced } from './goInformer.js';
import { Child } from './ipc.js';

/** The Node clients: client-node, and rxkube's four ways to make the initial list. */
export const NODE_MODES = ['client-node', 'rxkube-paged-gzip', 'rxkube-paged', 'rxkube-stream-gzip', 'rxkube-stream'] as const;
export type NodeMode = (typeof NODE_MODES)[number];

export interface NodeSyncArgs {
  readonly mode: NodeMode;
  readonly kubeConfigYaml: string;
  /** Pods the initial list holds; the sync is over when this many adds were handled. */
  readonly expected: number;
  readonly timeoutMs: number;
}

/** What every client reports, Node or Go: the Go program's `synced` line. */
export interface SyncReply {
  /** From the informer's start to its last initial add handled, ms. */
  readonly syncMs: number;
  /** CPU (user + system) spent from the informer's start to synced, ms. */
  readonly cpuMs: number;
  readonly objects: number;
  /** Node only: RSS and heap after GC once the libraries were loaded, before the informer was built. */
  readonly idleRssBytes?: number;
  readonly idleHeapBytes?: number;
}

/** The Go program's `memory` line: after its runtime's own full collection, nothing handed back to the OS on purpose. */
export interface MemoryReply {
  readonly rssBytes: number;
  /** Node: V8's heapUsed; Go: HeapInuse. */
  readonly heapBytes: number;
  readonly objects: number;
  /** Go only: HeapInuse after a GC before the informer was made (Node reports its idle figures with the sync). */
  readonly idleHeapBytes?: number;
}

/** The Go program's `reached` line. */
export interface WaitReply {
  /** From the request's receipt until the cache held the key at that resourceVersion, ms. */
  readonly ms: number;
  readonly cpuMs: number;
}

export interface WaitArgs {
  /** `namespace/name`. */
  readonly key: string;
  readonly resourceVersion: string;
  readonly timeoutMs: number;
}

/** A started client: each step once, in order; `close` always. */
export interface MeasuredClient {
  /** The process, for its CPU time as the kernel counts it. */
  readonly pid: number;
  sync(): Promise<SyncReply>;
  memory(): Promise<MemoryReply>;
  wait(key: string, resourceVersion: string): Promise<WaitReply>;
  close(): Promise<void>;
}

/** User + system CPU of a process so far, ms, from /proc (Linux); NaN where it cannot be read. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start past its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    // USER_HZ is 100 on every Linux architecture Node runs on.
    return (ticks * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** A Node client in a fresh process with `--expose-gc` and `nodeFlags` (the runner image's, for its variant). */
export function nodeClient(mode: NodeMode, kubeConfigYaml: string, expected: number, timeoutMs: number, nodeFlags: readonly string[] = []): MeasuredClient {
  const child = new Child(new URL('../apiserverClient.js', import.meta.url), [], ['--expose-gc', ...nodeFlags]);
  return {
    pid: child.process.pid ?? 0,
    sync: () => child.request<SyncReply>('sync', { mode, kubeConfigYaml, expected, timeoutMs } satisfies NodeSyncArgs, timeoutMs + 10_000),
    memory: () => child.request<MemoryReply>('memory', {}, 120_000),
    wait: (key, resourceVersion) => child.request<WaitReply>('wait', { key, resourceVersion, timeoutMs } satisfies WaitArgs, timeoutMs + 10_000),
    close: () => child.close(),
  };
}

/** The Go program's flags for one measured client. */
export type GoFlags = Required<Pick<GoInformerOptions, 'protobuf' | 'watchList' | 'stripManagedFields'>>;

/** The Go client-go informer program (bench/lib/goInformer.ts drives it), started with `flags` and one handler. */
export function goClient(binary: string, kubeconfig: string, flags: GoFlags, expected: number, timeoutMs: number): MeasuredClient {
  const go = new GoInformer(binary, { kubeconfig, ...flags, handlers: 1, expect: expected });
  return {
    pid: go.process.pid ?? 0,
    sync: async () => {
      const r = await go.next<GoSynced>('synced', timeoutMs);
      return { syncMs: r.syncMs, cpuMs: r.cpuMs, objects: r.objects };
    },
    memory: async () => {
      const r = await go.memory(120_000);
      return { rssBytes: r.rssBytes, heapBytes: r.heapInuseBytes, objects: r.objects, idleHeapBytes: r.heapInuseAtStartBytes };
    },
    wait: async (key, resourceVersion) => {
      const r = await go.wait(key, resourceVersion, timeoutMs);
      return { ms: r.ms, cpuMs: r.cpuMs };
    },
    close: () => go.close(10_000),
  };
}
