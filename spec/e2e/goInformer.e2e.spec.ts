/**
 * The benchmarks' client-go informer (bench/go/informer, built from Go modules by bench/lib/goInformer.ts) against
 * the project's API-server simulator: its line protocol, its flags, and the WatchListClient feature gate, which
 * client-go v0.37 turns on by default and the program must set from --watch-list. In this tier because it needs the
 * Go toolchain and module cache the tier's build uses; it starts no kube-apiserver.
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GoInformer, goInformerBinary, type GoMemory, type GoReached, type GoSynced } from '../../bench/lib/goInformer.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { inBatches, names } from './helpers.js';

const PODS = 40;
let server: ApiServer;
let core: CoreV1Api;
let binary: string;
let dir: string;
let kubeconfig: string;
const running: GoInformer[] = [];

beforeAll(async () => {
  // The first build on a machine downloads client-go into the tier's module cache.
  binary = await goInformerBinary();
  server = await startApiServer({ port: 0 });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  dir = mkdtempSync(join(tmpdir(), 'rxkube-go-informer-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfigYaml());
  await core.createNamespace({ body: { metadata: { name: 'bench' } } });
  await inBatches(names('p', PODS), 8, (name) =>
    core.createNamespacedPod({ namespace: 'bench', body: { metadata: { name, labels: { gen: '0' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/none:0' }] } } }),
  );
}, 300_000);

afterEach(async () => {
  await Promise.all(running.splice(0).map((g) => g.close()));
});

afterAll(async () => {
  await server?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function start(opts: Omit<ConstructorParameters<typeof GoInformer>[1], 'kubeconfig'>): GoInformer {
  const g = new GoInformer(binary, { kubeconfig, ...opts });
  running.push(g);
  return g;
}

/** Requests the simulator has received that opened no watch: the LIST pages. */
const nonWatchRequests = (): number => server.stats.requests - server.stats.watchesStarted;

async function relabel(name: string, gen: string): Promise<V1Pod> {
  const pod = await core.readNamespacedPod({ name, namespace: 'bench' });
  pod.metadata!.labels = { ...pod.metadata!.labels, gen };
  return core.replaceNamespacedPod({ name, namespace: 'bench', body: pod });
}

describe('the client-go informer program', () => {
  it('syncs by a paged LIST without --watch-list (client-go v0.37 would stream it by default), reports memory, and waits for a version', async () => {
    const before = nonWatchRequests();
    const g = start({ handlers: 2, expect: PODS });
    const synced = await g.next<GoSynced>('synced', 60_000);
    expect(synced.objects).toBe(PODS);
    expect(synced.syncMs).toBeGreaterThan(0);
    expect(synced.cpuMs).toBeGreaterThan(0);
    expect(nonWatchRequests()).toBeGreaterThan(before);

    const mem: GoMemory = await g.memory();
    expect(mem.objects).toBe(PODS);
    expect(mem.rssBytes).toBeGreaterThan(mem.heapInuseBytes);
    expect(mem.heapInuseBytes).toBeGreaterThan(mem.heapInuseAtStartBytes);
    expect(mem.heapAllocBytes).toBeGreaterThan(0);
    expect(mem.sysBytes).toBeGreaterThan(0);

    const updated = await relabel('p-3', '1');
    const reached: GoReached = await g.wait('bench/p-3', updated.metadata!.resourceVersion!, 30_000);
    expect(reached.ms).toBeGreaterThanOrEqual(0);
    expect(reached.cpuMs).toBeGreaterThanOrEqual(0);
    // A version already in the cache (and already seen by both handlers) is reached at once, and again.
    expect((await g.wait('bench/p-3', updated.metadata!.resourceVersion!, 30_000)).event).toBe('reached');
  });

  it('with --watch-list streams the initial list as a watch: no LIST request at all', async () => {
    const before = nonWatchRequests();
    const g = start({ watchList: true, handlers: 1, expect: PODS });
    expect((await g.next<GoSynced>('synced', 60_000)).objects).toBe(PODS);
    expect(nonWatchRequests()).toBe(before);
  });

  it('with no handler, --protobuf (the simulator answers JSON, which client-go accepts) and a managedFields transform, is synced when the store holds every object', async () => {
    const g = start({ handlers: 0, expect: PODS, protobuf: true, stripManagedFields: true });
    expect((await g.next<GoSynced>('synced', 60_000)).objects).toBe(PODS);
    const updated = await relabel('p-7', '2');
    expect((await g.wait('bench/p-7', updated.metadata!.resourceVersion!, 30_000)).event).toBe('reached');
    expect((await g.memory()).objects).toBe(PODS);
  });

  it('exits 0 on `exit`', async () => {
    const g = start({ handlers: 0, expect: PODS });
    await g.next<GoSynced>('synced', 60_000);
    const exited = new Promise<number | null>((resolve) => g.process.once('exit', (code) => resolve(code)));
    g.send('exit');
    expect(await exited).toBe(0);
  });

  it('reports a bad flag or command as an error line and exits 1', async () => {
    const exitOf = (g: GoInformer): Promise<number | null> =>
      new Promise((resolve) => (g.process.exitCode !== null ? resolve(g.process.exitCode) : g.process.once('exit', (code) => resolve(code))));

    const missing = new GoInformer(binary, { kubeconfig: join(dir, 'no-such-kubeconfig') });
    running.push(missing);
    await expect(missing.next('synced', 30_000)).rejects.toThrow(/no-such-kubeconfig/);
    expect(await exitOf(missing)).toBe(1);

    const negative = start({ handlers: -1 });
    await expect(negative.next('synced', 30_000)).rejects.toThrow(/--handlers: expected a non-negative integer, got -1/);
    expect(await exitOf(negative)).toBe(1);

    const g = start({ handlers: 0, expect: PODS });
    await g.next<GoSynced>('synced', 60_000);
    g.send('flush');
    await expect(g.next('memory', 30_000)).rejects.toThrow(/unknown command "flush"/);
    expect(await exitOf(g)).toBe(1);
  });
});
