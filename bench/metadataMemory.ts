// Memory of a pod cache with whole objects against one with metadata only
// (kubeSource's `metadataOnly`), each synced in a fresh process against the
// same simulator, itself in its own process.
//
//   npm run bench:metadata                      # 100,000 pods
//   BENCH_SIM_PODS=20000 npm run bench:metadata
//
// As a child (`--client=full|metadata`) it syncs one informer and prints its
// figures as one JSON line.

import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { informer, kubeSource } from 'rxkube';
import { envNumber } from './lib/context.js';
import { heapAfterGc } from './lib/heap.js';
import type { SimReady } from './simServer.js';

interface ClientResult {
  readonly client: 'full' | 'metadata';
  readonly objects: number;
  readonly syncMs: number;
  readonly rssBytes: number;
  readonly heapBytes: number;
}

async function client(kind: 'full' | 'metadata', kubeConfigYaml: string, expected: number): Promise<ClientResult> {
  const kc = new KubeConfig();
  kc.loadFromString(kubeConfigYaml);
  const t0 = performance.now();
  const pods = kind === 'metadata' ? informer(kubeSource(kc, 'v1/pods', { metadataOnly: true })) : informer(kubeSource(kc, 'v1/pods'));
  const sub = pods.subscribe();
  await pods.whenSynced({ timeout: 600_000 });
  const syncMs = performance.now() - t0;
  if (pods.store.size !== expected) throw new Error(`synced ${pods.store.size} pods, expected ${expected}`);
  const heapBytes = await heapAfterGc();
  const rssBytes = process.memoryUsage().rss;
  const objects = pods.store.size;
  sub.unsubscribe();
  return { client: kind, objects, syncMs, rssBytes, heapBytes };
}

function runChild(kind: 'full' | 'metadata', ready: SimReady): Promise<ClientResult> {
  const child = fork(fileURLToPath(import.meta.url), [`--client=${kind}`], { execArgv: ['--expose-gc'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.send({ kubeConfigYaml: ready.kubeConfigYaml, expected: ready.pods });
  return once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`${kind} client exited with ${String(code)}`);
    return JSON.parse(out.trim().split('\n').at(-1) ?? '') as ClientResult;
  });
}

const mib = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const role = process.argv.find((a) => a.startsWith('--client='))?.slice('--client='.length);
  if (role === 'full' || role === 'metadata') {
    const [args] = (await once(process, 'message')) as [{ kubeConfigYaml: string; expected: number }];
    const result = await client(role, args.kubeConfigYaml, args.expected);
    console.log(JSON.stringify(result));
    process.disconnect?.();
    return;
  }
  const pods = envNumber('BENCH_SIM_PODS', 100_000);
  const server = fork(fileURLToPath(new URL('./simServer.js', import.meta.url)), [`--pods=${pods}`, '--namespaces=20', '--history=1000'], { stdio: 'inherit' });
  const [ready] = (await once(server, 'message')) as [SimReady];
  console.log(`simulator: ${ready.pods} pods, ${mib(ready.listJsonBytes)} of JSON, seeded in ${(ready.seedMs / 1000).toFixed(1)} s`);
  const results: ClientResult[] = [];
  for (const kind of ['full', 'metadata', 'full', 'metadata'] as const) results.push(await runChild(kind, ready));
  server.kill();
  console.log('| cache | objects | sync | RSS after sync | heap after GC |\n|---|---|---|---|---|');
  for (const r of results) console.log(`| ${r.client} | ${r.objects} | ${(r.syncMs / 1000).toFixed(1)} s | ${mib(r.rssBytes)} | ${mib(r.heapBytes)} |`);
  console.log(`load average: ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

await main();
