/**
 * The rxkube demo: an API-server simulator with pod churn and a few faults,
 * an informer with a handler watching it, and at the end a check that the
 * cache holds exactly what the server holds.
 *
 *   npm run demo                 # 30 seconds
 *   npm run demo -- --duration 10s
 */
import type { V1Pod } from '@kubernetes/client-node';
import { informer, kubeSource } from 'rxkube';
import { startApiServer } from 'rxkube/testing';

export interface DemoOptions {
  /** How long the churn runs, ms. */
  readonly durationMs?: number;
  /** Where lines go. */
  readonly log?: (line: string) => void;
  /** Pod operations per second. */
  readonly perSecond?: number;
}

export interface DemoSummary {
  readonly cached: number;
  readonly onServer: number;
  readonly mismatches: readonly string[];
  readonly adds: number;
  readonly updates: number;
  readonly deletes: number;
  readonly lists: number;
  readonly watches: number;
  readonly errors: number;
}

export async function runDemo(opts: DemoOptions = {}): Promise<DemoSummary> {
  const durationMs = opts.durationMs ?? 30_000;
  const log = opts.log ?? ((line: string) => console.log(line));
  const perSecond = opts.perSecond ?? 400;
  const server = await startApiServer({ port: 0, bookmarkIntervalMs: 5_000 });
  log(`simulator listening on ${server.url}`);
  for (let i = 0; i < 200; i++) {
    await server.create('v1/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `seed-${i}`, namespace: 'default', labels: { app: i % 2 ? 'web' : 'db' } },
      spec: { containers: [{ name: 'main', image: 'busybox' }] },
    });
  }

  const pods = informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods'), {
    indexers: { app: (p) => (p.metadata?.labels?.app ? [p.metadata.labels.app] : []) },
    reflector: { backoff: { initialMs: 200, maxMs: 2_000 } },
  });
  let adds = 0;
  let updates = 0;
  let deletes = 0;
  let errors = 0;
  let lists = 0;
  let watches = 0;
  let state = 'new';
  pods.addHandler({
    add: () => void adds++,
    update: () => void updates++,
    delete: () => void deletes++,
  });
  pods.errors$.subscribe((err) => {
    errors++;
    log(`  reported: ${err.name}: ${err.message.slice(0, 100)}`);
  });
  pods.status$.subscribe((s) => {
    const r = s.reflector;
    if (r === undefined) return;
    lists = r.counters.lists;
    watches = r.counters.watches;
    if (r.state !== state && (r.state === 'listing' || r.state === 'backoff' || r.state === 'relisting')) log(`  reflector: ${r.state}`);
    state = r.state;
  });

  const started = Date.now();
  pods.start();
  await pods.whenSynced({ timeout: 10_000 });
  log(`synced ${pods.store.listKeys().length} pods in ${Date.now() - started} ms`);

  const ops = Math.ceil((perSecond * durationMs) / 1000);
  const churn = server.churn({
    resource: 'v1/pods',
    namespace: 'default',
    creates: Math.ceil(ops * 0.3),
    updates: Math.ceil(ops * 0.5),
    deletes: Math.ceil(ops * 0.2),
    perSecond,
  });
  const faults: [number, string, () => void | Promise<void>][] = [
    [0.2, 'closing every watch (the informer resumes from its last resourceVersion)', () => server.faults.closeWatches()],
    [0.35, 'writing a malformed line into the watch (reported, then resumed without loss)', () => server.faults.inject({ type: 'malformedLine' }, { verb: 'watch' })],
    [0.5, 'resetting every connection mid-stream', () => server.faults.resetConnections()],
    [
      0.7,
      'taking the server down for a second and compacting its history (forces a relist)',
      async () => {
        server.stop();
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        server.compact();
        await server.restart();
      },
    ],
  ];
  const ticker = setInterval(() => {
    const t = ((Date.now() - started) / 1000).toFixed(0).padStart(3);
    log(`t=${t}s cache=${pods.store.listKeys().length} server=${server.list('v1/pods').length} adds=${adds} updates=${updates} deletes=${deletes} lists=${lists} watches=${watches} state=${state}`);
  }, 1_000);
  const timers = faults.map(([at, what, run]) =>
    setTimeout(() => {
      log(`fault: ${what}`);
      void Promise.resolve(run()).catch((err: unknown) => log(`  fault failed: ${String(err)}`));
    }, at * durationMs),
  );
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  churn.stop();
  timers.forEach(clearTimeout);

  // Let the informer catch up with the last writes, then compare object by object.
  const mismatches = await settle(() => pods.store.list() as V1Pod[], () => server.list('v1/pods') as V1Pod[]);
  clearInterval(ticker);
  const summary: DemoSummary = {
    cached: pods.store.listKeys().length,
    onServer: server.list('v1/pods').length,
    mismatches,
    adds,
    updates,
    deletes,
    lists,
    watches,
    errors,
  };
  await pods.stop();
  await server.close();
  log('');
  log(`summary: ${summary.adds} adds, ${summary.updates} updates, ${summary.deletes} deletes seen; ${summary.lists} lists, ${summary.watches} watches, ${summary.errors} errors survived`);
  log(`cache ${summary.cached} objects, server ${summary.onServer} objects: ${mismatches.length === 0 ? 'the cache matches the server' : `MISMATCH: ${mismatches.slice(0, 5).join('; ')}`}`);
  return summary;
}

/** Waits up to 10 s for cache and server to agree on every key and resourceVersion; returns the differences left. */
async function settle(cache: () => V1Pod[], server: () => V1Pod[]): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const diff = compare(cache(), server());
    if (diff.length === 0 || Date.now() > deadline) return diff;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function compare(cached: V1Pod[], onServer: V1Pod[]): string[] {
  const key = (p: V1Pod): string => `${p.metadata?.namespace}/${p.metadata?.name}`;
  const want = new Map(onServer.map((p) => [key(p), p.metadata?.resourceVersion]));
  const diff: string[] = [];
  for (const p of cached) {
    const rv = want.get(key(p));
    if (rv === undefined) diff.push(`${key(p)} cached but deleted on the server`);
    else if (rv !== p.metadata?.resourceVersion) diff.push(`${key(p)} cached at ${p.metadata?.resourceVersion}, server at ${rv}`);
    want.delete(key(p));
  }
  for (const k of want.keys()) diff.push(`${k} missing from the cache`);
  return diff;
}

function parseDuration(argv: readonly string[]): number {
  const i = argv.findIndex((a) => a === '--duration' || a.startsWith('--duration='));
  if (i < 0) return 30_000;
  const raw = argv[i]?.includes('=') ? argv[i]?.split('=')[1] : argv[i + 1];
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(raw ?? '');
  if (m === null) throw new TypeError(`--duration must look like 30s, 2m or 500ms, got ${JSON.stringify(raw)}`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

if ((import.meta as { main?: boolean }).main) {
  const summary = await runDemo({ durationMs: parseDuration(process.argv.slice(2)) });
  process.exitCode = summary.mismatches.length === 0 ? 0 : 1;
}
