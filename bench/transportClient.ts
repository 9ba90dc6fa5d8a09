// One rxkube process against a real kube-apiserver, measured over HTTP/1.1 or
// HTTP/2: K informers on ConfigMaps (each with its own watch), then the
// events they receive while another process writes, then the latency of
// writes made beside the open watches, then connections and memory. Started
// by the transport benchmark with --expose-gc; answers 'setup', 'events',
// 'writes' and 'stats'.

import diagnostics from 'node:diagnostics_channel';
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { informer, kubeSource, objectClient, withTransport, type Informer, type Registration } from 'rxkube';
import { heapAfterGc } from './lib/heap.js';
import { serve } from './lib/ipc.js';

export interface TransportSetupArgs {
  readonly kubeConfigYaml: string;
  readonly http2: boolean;
  readonly informers: number;
  /** Namespace whose ConfigMaps every informer watches. */
  readonly namespace: string;
}

export interface TransportEventsReply {
  /** Update notifications received across all informers. */
  readonly events: number;
  /** From the first to the last of them. */
  readonly ms: number;
}

export interface TransportWritesReply {
  /** Milliseconds per create, in order. */
  readonly latencies: number[];
}

export interface TransportStats {
  /** Connections undici opened in this process since it started (TLS handshakes). */
  readonly connections: number;
  readonly heapBytes: number;
  readonly rssBytes: number;
}

let connections = 0;
diagnostics.subscribe('undici:client:connected', () => void connections++);

let kc: KubeConfig | undefined;
const running: Informer<V1ConfigMap>[] = [];
const registrations: Registration[] = [];
let updates = 0;
let first = 0;
let last = 0;

async function setup(args: TransportSetupArgs): Promise<boolean> {
  const base = new KubeConfig();
  base.loadFromString(args.kubeConfigYaml);
  kc = withTransport(base, { http2: args.http2 });
  for (let i = 0; i < args.informers; i++) {
    const inf = informer(kubeSource(kc, 'v1/configmaps', { namespace: args.namespace }));
    const reg = inf.addHandler({
      update: () => {
        const now = performance.now();
        if (updates++ === 0) first = now;
        last = now;
      },
    });
    running.push(inf);
    registrations.push(reg);
  }
  await Promise.all(running.map((inf) => inf.whenSynced({ timeout: 120_000 })));
  return true;
}

async function events(args: { readonly expected: number; readonly timeoutMs: number }): Promise<TransportEventsReply> {
  const deadline = Date.now() + args.timeoutMs;
  while (updates < args.expected) {
    if (Date.now() > deadline) throw new Error(`received ${updates} of ${args.expected} update events`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const reply = { events: updates, ms: last - first };
  updates = 0;
  return reply;
}

async function writes(args: { readonly namespace: string; readonly count: number; readonly prefix: string }): Promise<TransportWritesReply> {
  if (kc === undefined) throw new Error('setup first');
  const cms = objectClient(kc, 'v1/configmaps', { namespace: args.namespace });
  const latencies: number[] = [];
  for (let i = 0; i < args.count; i++) {
    const t0 = performance.now();
    await cms.create({ metadata: { name: `${args.prefix}-${i}` }, data: { n: String(i) } } as never);
    latencies.push(performance.now() - t0);
  }
  return { latencies };
}

async function stats(): Promise<TransportStats> {
  const heapBytes = await heapAfterGc();
  return { connections, heapBytes, rssBytes: process.memoryUsage().rss };
}

serve({
  setup: (args: TransportSetupArgs) => setup(args),
  events: (args: { expected: number; timeoutMs: number }) => events(args),
  writes: (args: { namespace: string; count: number; prefix: string }) => writes(args),
  stats: () => stats(),
  stop: async () => {
    running.length = 0;
    for (const reg of registrations.splice(0)) reg.unsubscribe();
    return true;
  },
});
