import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { NEVER, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import type { Controller } from '../../src/controller/controller.js';
import type { ControllerOptions, ReconcileOutcome } from '../../src/controller/types.js';
import { ReconcileTimeoutError } from '../../src/controller/ReconcileTimeoutError.js';
import { informer } from '../../src/informer/informer.js';
import { splitClusterKey } from '../../src/multicluster/clusterKey.js';
import { multiClusterController } from '../../src/multicluster/multiClusterController.js';
import { multiClusterInformer, type MultiClusterInformer } from '../../src/multicluster/multiClusterInformer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { labelsChanged } from '../../src/operators/predicates.js';
import { startApiServer } from '../../src/testing/index.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { mostAbortListenersAfter } from '../helpers/abortListeners.js';
import { Fleet, fastReflector } from './fleet.js';
import { configMap } from '../helpers/objects.js';

let fleet: Fleet | undefined;
const subscriptions: Subscription[] = [];
const controllers: Controller<V1ConfigMap>[] = [];

afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
  await fleet?.close();
  fleet = undefined;
});


async function seed(f: Fleet, cluster: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await f.server(cluster).create('v1/configmaps', configMap(`${cluster}-cm${i}`, { data: { v: '1' } }));
}

function configMaps(f: Fleet): MultiClusterInformer<V1ConfigMap> {
  return multiClusterInformer(f.provider, (c) => kubeSource(c.kubeConfig, 'v1/configmaps'), { reflector: fastReflector, onError: () => {} });
}

/** An outcome with its key split into the cluster and the key within it. */
type Seen = ReconcileOutcome<V1ConfigMap> & { readonly cluster: string; readonly local: string };

function run(c: Controller<V1ConfigMap>): Seen[] {
  controllers.push(c);
  const outcomes: Seen[] = [];
  subscriptions.push(
    c.subscribe((o) => {
      const { cluster, key } = splitClusterKey(o.key);
      outcomes.push({ ...o, cluster, local: key });
    }),
  );
  return outcomes;
}

describe('multiClusterController', () => {
  it("reconciles every cluster's objects with that cluster's KubeConfig in the context, keys outcomes by cluster, and breaks metrics down per cluster", async () => {
    fleet = await Fleet.start(['eu', 'us'], 0);
    await seed(fleet, 'eu', 3);
    await seed(fleet, 'us', 2);
    const c = multiClusterController({
      for: configMaps(fleet),
      reconcile: async (obj, ctx) => {
        // Written through the context's KubeConfig: it must reach the cluster the key came from.
        const client = objectClient(ctx.cluster.kubeConfig, 'v1/configmaps', { namespace: 'default' });
        if (obj.metadata?.labels?.['reconciled-in'] !== ctx.cluster.name) {
          await client.patch(obj.metadata?.name ?? '', { metadata: { labels: { 'reconciled-in': ctx.cluster.name } } }, { signal: ctx.signal });
        }
      },
      concurrency: 2,
      name: 'labeller',
    });
    const outcomes = run(c);
    const f = fleet;
    const labelled = (cluster: string) => f.server(cluster).list<V1ConfigMap>('v1/configmaps').every((x) => x.metadata?.labels?.['reconciled-in'] === cluster);
    // A patch is on the server a moment before the reconcile that sent it has read the answer and ended.
    const ended = (cluster: string) =>
      f.server(cluster).list<V1ConfigMap>('v1/configmaps').every((x) => outcomes.some((o) => o.cluster === cluster && o.local === `default/${x.metadata?.name}` && o.type === 'reconciled'));
    await waitFor(() => labelled('eu') && labelled('us') && ended('eu') && ended('us'), 'every ConfigMap labelled with its own cluster, by a reconcile that ended');
    expect(outcomes.some((o) => o.key === 'eu/default/eu-cm0' && o.type === 'reconciled')).toBe(true);
    expect(outcomes.every((o) => o.local.startsWith(`default/${o.cluster}-`))).toBe(true);
    const metrics = c.status();
    expect([c.name, metrics.maxConcurrentReconciles]).toEqual(['labeller', 2]);
    expect(Object.keys(metrics.groups ?? {})).toEqual(['eu', 'us']);
    const reconciles = (cluster: string) => outcomes.filter((o) => o.cluster === cluster && o.type === 'reconciled').length;
    expect(metrics.groups?.['eu']).toEqual({ depth: 0, inFlight: 0, reconciles: reconciles('eu'), errors: 0 });
    expect(metrics.groups?.['us']?.reconciles).toBe(reconciles('us'));
    expect(metrics.durationHistogram.count).toBe(metrics.succeeded.success);
    expect(c.status().state).toBe('running');
  });

  it('takes predicates on for, as a controller does: a data change does not wake it, a label change does (CR-113)', async () => {
    fleet = await Fleet.start(['eu'], 0);
    await seed(fleet, 'eu', 2);
    const seen: string[] = [];
    const c = multiClusterController({ for: { source: configMaps(fleet), predicates: [labelsChanged] }, reconcile: (obj) => void seen.push(obj.metadata?.name ?? '') });
    run(c);
    await waitFor(() => seen.length === 2, 'the first reconciles');
    const server = fleet.server('eu');
    const cm0 = server.get<V1ConfigMap>('v1/configmaps', 'default', 'eu-cm0') as V1ConfigMap;
    await server.update('v1/configmaps', { ...cm0, data: { v: '2' } });
    // The fence: a later event of the same informer that passes; once it is reconciled, the data change was judged.
    const cm1 = server.get<V1ConfigMap>('v1/configmaps', 'default', 'eu-cm1') as V1ConfigMap;
    await server.update('v1/configmaps', { ...cm1, metadata: { ...cm1.metadata, labels: { tier: 'web' } } });
    await waitFor(() => seen.length === 3 && c.status().queueDepth === 0 && c.status().inFlight === 0, 'the label change reconciled');
    expect(seen.sort()).toEqual(['eu-cm0', 'eu-cm1', 'eu-cm1']);
  });

  it("takes the clusters' keys in turn: a cluster's backlog does not hold up another cluster's keys (MC-11)", async () => {
    fleet = await Fleet.start(['big', 'small'], 0);
    await seed(fleet, 'big', 40);
    await seed(fleet, 'small', 3);
    const order: string[] = [];
    const open = deferred();
    const c = multiClusterController({
      for: configMaps(fleet),
      reconcile: async (obj, ctx) => {
        order.push(`${ctx.cluster.name}:${obj.metadata?.name}`);
        await open.promise;
      },
      concurrency: 1,
    });
    run(c);
    // One reconcile holds the only worker; both clusters' keys wait behind it.
    await waitFor(() => order.length === 1 && c.status().queueDepth === 42, 'every key queued, one taken');
    open.resolve();
    await waitFor(() => order.length === 43, 'every key reconciled');
    const small = order.map((k, i) => [k, i] as const).filter(([k]) => k.startsWith('small:'));
    expect(small).toHaveLength(3);
    // Turns alternate while both have keys: the small cluster's three keys are done within its first three turns.
    expect(Math.max(...small.map(([, i]) => i))).toBeLessThanOrEqual(6);
    await waitFor(() => c.status().groups?.['big']?.reconciles === 40, 'the last reconcile counted');
    expect(c.status().groups?.['small']?.reconciles).toBe(3);
  });

  it("owns and watches work per cluster: an owned object's change wakes its owner in its own cluster, and the mapper is told the cluster", async () => {
    fleet = await Fleet.start(['eu', 'us'], 0);
    for (const name of ['eu', 'us']) await fleet.server(name).create('v1/configmaps', configMap('parent', { data: { v: '1' } }));
    const secrets = multiClusterInformer(fleet.provider, (c) => kubeSource(c.kubeConfig, 'v1/secrets'), { reflector: fastReflector, onError: () => {} });
    const mapped: string[] = [];
    const reconciled: string[] = [];
    const c = multiClusterController({
      for: configMaps(fleet),
      owns: [{ source: secrets, kind: 'ConfigMap', apiVersion: 'v1' }],
      watches: [
        {
          source: secrets,
          map: (secret: { metadata?: { name?: string; labels?: Record<string, string> } }, cluster) => {
            mapped.push(`${cluster.name}:${secret.metadata?.name}`);
            const target = secret.metadata?.labels?.['for'];
            return target === undefined ? undefined : `default/${target}`;
          },
        },
      ],
      reconcile: (_obj, ctx) => void reconciled.push(`${ctx.cluster.name}/${ctx.key}`),
    });
    run(c);
    const times = (key: string) => reconciled.filter((k) => k === key).length;
    await waitFor(() => times('eu/default/parent') === 1 && times('us/default/parent') === 1, 'both parents reconciled once');
    const parentUid = fleet.server('eu').get<V1ConfigMap>('v1/configmaps', 'default', 'parent')?.metadata?.uid ?? '';
    await fleet.server('eu').create('v1/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'child', namespace: 'default', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: parentUid, controller: true }] },
    });
    await waitFor(() => times('eu/default/parent') === 2, "the owner reconciled in the child's cluster");
    await fleet.server('us').create('v1/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pointer', namespace: 'default', labels: { for: 'parent' } } });
    await waitFor(() => times('us/default/parent') === 2, "the mapped key reconciled in the secret's cluster");
    // Each change woke its own cluster only.
    expect([times('eu/default/parent'), times('us/default/parent')]).toEqual([2, 2]);
    expect(mapped).toContain('eu:child');
    expect(mapped).toContain('us:pointer');
    expect(mapped.filter((m) => m === 'eu:pointer' || m === 'us:child')).toEqual([]);
  });

  it('a cluster that leaves has its reconciles aborted and its controller stopped; one that joins is reconciled; the others carry on', async () => {
    fleet = await Fleet.start(['stay', 'go'], 0);
    await seed(fleet, 'stay', 1);
    await seed(fleet, 'go', 1);
    const aborted = deferred<string>();
    const c = multiClusterController({
      for: configMaps(fleet),
      reconcile: (_obj, ctx) => {
        if (ctx.cluster.name !== 'go') return undefined;
        // Hangs until its signal aborts.
        return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => (aborted.resolve(String((ctx.signal.reason as Error).message)), reject(ctx.signal.reason))));
      },
      concurrency: 2,
    });
    const outcomes = run(c);
    await waitFor(() => c.status().groups?.['go']?.inFlight === 1, 'the reconcile in go to be running');
    fleet.drop('go');
    expect(await aborted.promise).toMatch(/cluster "go": stopped: it left the fleet/);
    await waitFor(() => c.status().inFlight === 0, 'the aborted reconcile to end');
    // The abort of a cluster that left is the stop, not a failure: no outcome, no count, no backoff.
    expect(outcomes.filter((o) => o.cluster === 'go' && o.type === 'failed')).toEqual([]);
    // go left: its group is dropped with it (LT-14), and its aborted reconcile was withdrawn, not counted (LT-3).
    expect(c.status().groups?.['go']).toBeUndefined();
    expect(c.status().errors).toBe(0);
    await fleet.add('new', 0);
    await seed(fleet, 'new', 2);
    await waitFor(() => outcomes.filter((o) => o.cluster === 'new' && o.type === 'reconciled').length === 2, 'the new cluster reconciled');
    await fleet.server('stay').create('v1/configmaps', configMap('stay-late', { data: { v: '1' } }));
    await waitFor(() => outcomes.some((o) => o.key === 'stay/default/stay-late'), 'stay to carry on');
  });

  it('a cluster whose KubeConfig changes has its reconcile in flight aborted and run again with the new one, with no failure emitted (LT-7)', async () => {
    fleet = await Fleet.start(['x'], 0);
    await seed(fleet, 'x', 1);
    // A rotated credential: the same server and objects, so the informer announces nothing (MC-5) and only the requeue runs the key again.
    const before = fleet.server('x').kubeConfig();
    const rotated = new KubeConfig();
    rotated.loadFromOptions({
      clusters: before.clusters,
      users: before.users.map((u) => ({ ...u, name: 'rotated' })),
      contexts: [{ name: 'rotated', cluster: before.getCurrentCluster()?.name ?? '', user: 'rotated' }],
      currentContext: 'rotated',
    });
    const aborted = deferred<string>();
    const users: string[] = [];
    const c = multiClusterController({
      for: configMaps(fleet),
      reconcile: (_obj, ctx) => {
        users.push(ctx.cluster.kubeConfig.getCurrentUser()?.name ?? '');
        if (users.length > 1) return undefined;
        // The first attempt hangs until its signal aborts.
        return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => (aborted.resolve(String((ctx.signal.reason as Error).message)), reject(ctx.signal.reason))));
      },
    });
    const outcomes = run(c);
    await waitFor(() => users.length === 1, 'the first reconcile running');
    fleet.provider.next([{ name: 'x', kubeConfig: rotated }]);
    expect(await aborted.promise).toMatch(/cluster "x": stopped: its KubeConfig changed/);
    await waitFor(() => outcomes.some((o) => o.type === 'reconciled'), 'the key reconciled again');
    expect(users).toEqual([before.getCurrentUser()?.name, 'rotated']);
    expect(outcomes.filter((o) => o.type === 'failed')).toEqual([]);
    expect(c.status().errors).toBe(0);
  });

  it('subscribed again while its last run drains, it reconciles with clusters of its own: the old run ending aborts nothing of the new one', async () => {
    fleet = await Fleet.start(['eu'], 0);
    await seed(fleet, 'eu', 1);
    const release = deferred();
    const signals: AbortSignal[] = [];
    const c = multiClusterController({
      for: configMaps(fleet),
      reconcile: async (_obj, ctx) => {
        signals.push(ctx.signal);
        if (signals.length === 1) await release.promise;
      },
    });
    controllers.push(c);
    const first = c.subscribe();
    await waitFor(() => signals.length === 1, 'the first run reconciling');
    first.unsubscribe(); // the first run drains, waiting for its reconcile
    const outcomes = run(c); // the second run's workers wait for that drain
    release.resolve();
    await waitFor(() => outcomes.some((o) => o.key === 'eu/default/eu-cm0' && o.type === 'reconciled'), 'the second run reconciled the key');
    expect(signals).toHaveLength(2);
    expect(signals[1]?.aborted).toBe(false);
  });

  it("lets go of its cluster's signal as each reconcile ends: the signal's listeners do not pile up", async () => {
    const f = (fleet = await Fleet.start(['eu'], 0));
    await seed(f, 'eu', 30);
    // Each reconcile follows the cluster's signal, which outlives them all.
    const most = await mostAbortListenersAfter(async () => {
      const outcomes = run(multiClusterController({ for: configMaps(f), reconcile: () => undefined }));
      await waitFor(() => outcomes.length === 30, '30 reconciles');
    });
    expect(most).toBeLessThan(10);
  });

  it('a cluster that cannot be reached holds up only itself, and is reconciled once it synced', async () => {
    fleet = await Fleet.start(['up', 'down'], 0);
    await seed(fleet, 'up', 2);
    await seed(fleet, 'down', 1);
    const down = fleet.server('down');
    down.stop();
    const c = multiClusterController({ for: configMaps(fleet), reconcile: () => undefined });
    const outcomes = run(c);
    await waitFor(() => outcomes.filter((o) => o.cluster === 'up').length === 2, 'up reconciled');
    expect(outcomes.filter((o) => o.cluster === 'down')).toEqual([]);
    await down.restart();
    await waitFor(() => outcomes.some((o) => o.key === 'down/default/down-cm0' && o.type === 'reconciled'), 'down reconciled once it answers');
  });

  it("waits for every source of a cluster: a shared watched source that has not synced holds up the reconciles (LT-5)", async () => {
    fleet = await Fleet.start(['eu'], 0);
    await seed(fleet, 'eu', 1);
    const hub = await startApiServer({ port: 0 });
    try {
      hub.stop();
      const hubConfigMaps = informer(kubeSource(hub.kubeConfig(), 'v1/configmaps'), { reflector: fastReflector, onError: () => {} });
      const primary = configMaps(fleet);
      const c = multiClusterController({ for: primary, watches: [{ source: hubConfigMaps, map: () => undefined }], reconcile: () => undefined });
      const outcomes = run(c);
      // The cluster's own ConfigMaps are listed; the hub's are not, and nothing runs.
      await waitFor(() => primary.store.size === 1, "eu's ConfigMap cached");
      await waitFor(() => c.status().state === 'running', 'the workers started');
      expect(outcomes).toEqual([]);
      await hub.restart();
      await waitFor(() => outcomes.some((o) => o.key === 'eu/default/eu-cm0' && o.type === 'reconciled'), 'reconciled once the hub synced');
    } finally {
      await hub.close();
    }
  });

  it('a single-cluster source shared by every cluster: each of its objects is reconciled once in each cluster', async () => {
    fleet = await Fleet.start(['m1', 'm2'], 0);
    const hub = await startApiServer({ port: 0 });
    try {
      await hub.create('v1/configmaps', configMap('settings', { data: { v: '1' } }));
      const hubConfigMaps = informer(kubeSource(hub.kubeConfig(), 'v1/configmaps'), { reflector: fastReflector });
      const seen: string[] = [];
      const c = multiClusterController({ clusters: fleet.provider, for: hubConfigMaps, reconcile: (_obj, ctx) => void seen.push(`${ctx.cluster.name}/${ctx.key}`) });
      const outcomes = run(c);
      await waitFor(() => seen.length === 2, 'one reconcile per member');
      expect(seen.sort()).toEqual(['m1/default/settings', 'm2/default/settings']);
      await waitFor(() => outcomes.length === 2, 'both outcomes');
      expect(outcomes.map((o) => o.key).sort()).toEqual(['m1/default/settings', 'm2/default/settings']);
    } finally {
      await hub.close();
    }
  });

  it('checks its options up front', () => {
    const f = { subscribe: () => undefined, cluster: () => undefined, clusters: { subscribe: () => undefined } } as never;
    const reconcile = () => undefined;
    expect(() => multiClusterController({ reconcile } as never)).toThrow(/option "for" must be/);
    const single = informer(kubeSource(unusedKubeConfig(), 'v1/configmaps'));
    expect(() => multiClusterController({ for: single, reconcile } as never)).toThrow(/option "clusters" must be an Observable.*required when "for" is a single-cluster source/);
    expect(() => multiClusterController({ for: f, reconcile, concurrency: 0 })).toThrow(/concurrency.*0/);
    expect(() => multiClusterController({ for: f, reconcile, rateLimiter: (() => undefined) as never })).toThrow(/rateLimiter/);
    expect(() => multiClusterController({ for: f, reconcile: 'x' as never })).toThrow(/reconcile.*function/);
    expect(() => multiClusterController({ for: f, reconcile, watches: [{ source: f, map: 1 as never }] })).toThrow(/watches\[0\]/);
    expect(() => multiClusterController({ for: f, reconcile, concurency: 2 } as never)).toThrow(/unknown option "concurency"/);
  });

  it('takes every option the controller takes (but fairBy, which is the cluster), and hands it to the controller', () => {
    // A real informer shared by every cluster; no cluster ever joins.
    const f = informer(kubeSource(unusedKubeConfig(), 'v1/configmaps'));
    const clusters = NEVER;
    const reconcile = () => undefined;
    const names: (keyof ControllerOptions<unknown>)[] = ['concurrency', 'resyncPeriod', 'shutdownTimeoutMs', 'reconcileTimeoutMs', 'priorityQueue', 'signal', 'rateLimiter', 'scheduler', 'onError', 'name', 'readYourWrites', 'readYourWritesTimeoutMs', 'owns', 'watches', 'errorPolicy'];
    for (const name of names) {
      expect(() => multiClusterController({ [name]: undefined, for: f, clusters, reconcile } as never), name).not.toThrow();
    }
    expect(() => multiClusterController({ fairBy: () => '', for: f, clusters, reconcile } as never)).toThrow(/unknown option "fairBy"/);
    expect(() => multiClusterController({ for: f, clusters, reconcile, reconcileTimeoutMs: 1_000, priorityQueue: false, readYourWrites: false, readYourWritesTimeoutMs: 100 })).not.toThrow();
    // A bad value is refused by the controller's own check: it got there.
    expect(() => multiClusterController({ for: f, clusters, reconcile, reconcileTimeoutMs: 0 })).toThrow(/reconcileTimeoutMs.*0/);
    expect(() => multiClusterController({ for: f, clusters, reconcile, priorityQueue: 'yes' as never })).toThrow(/priorityQueue.*yes/);
    expect(() => multiClusterController({ for: f, clusters, reconcile, readYourWrites: 1 as never })).toThrow(/readYourWrites.*1/);
    expect(() => multiClusterController({ for: f, clusters, reconcile, readYourWritesTimeoutMs: -1 })).toThrow(/readYourWritesTimeoutMs.*-1/);
    // Predicates of for, owns and watches are checked up front, then judged per cluster (CR-113, CR-115).
    expect(() => multiClusterController({ for: f, clusters, reconcile, watches: [{ source: f, map: () => [], predicates: ['x' as never] }] })).toThrow('multiClusterController: watches[0].predicates[0] must be a function, got "x"');
    expect(() => multiClusterController({ for: f, clusters, reconcile, owns: [{ source: f, predicates: [1 as never] }] })).toThrow('multiClusterController: owns[0].predicates[0] must be a function, got 1');
    expect(() => multiClusterController({ for: { source: f, predicates: [null as never] }, clusters, reconcile })).toThrow('multiClusterController: for.predicates[0] must be a function, got null');
    expect(() => multiClusterController({ for: f, clusters, reconcile, watches: [{ source: f, map: () => [], predicates: [labelsChanged] }] })).not.toThrow();
  });

  it("reconcileTimeoutMs limits every cluster's reconciles", async () => {
    fleet = await Fleet.start(['eu'], 0);
    await seed(fleet, 'eu', 1);
    const outcomes = run(
      multiClusterController({
        for: configMaps(fleet),
        reconcileTimeoutMs: 50,
        // Never settles by itself: only the timeout ends it.
        reconcile: (_obj, ctx) => new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true })),
        errorPolicy: () => ({ requeueAfter: 3_600_000 }),
      }),
    );
    await waitFor(() => outcomes.some((o) => o.type === 'failed'), 'a reconcile timing out');
    const failed = outcomes.find((o) => o.type === 'failed');
    expect(failed?.cluster).toBe('eu');
    expect((failed as { error?: unknown } | undefined)?.error).toBeInstanceOf(ReconcileTimeoutError);
  });

  it('ends with the set the provider gave last when one is given from inside an event of the informer it reads (MC-15, LT-27)', async () => {
    const f = (fleet = await Fleet.start(['a', 'b'], 0));
    await f.add('c', 0, false); // its server only: the sets below are given by hand
    const set = (...names: string[]) => names.map((name) => ({ name, kubeConfig: f.server(name).kubeConfig() }));
    for (const name of ['a', 'b', 'c']) await seed(f, name, 1);
    const cms = configMaps(f);
    // Subscribed before the controller, so it is the provider's first reader: it hears of each set first.
    let swapped = false;
    subscriptions.push(
      cms.subscribe((e) => {
        // b's removal brings c in, from inside the delete that says b is gone.
        if (e.type === 'delete' && e.reason === 'cluster-removed' && e.cluster === 'b' && !swapped) {
          swapped = true;
          f.provider.next(set('a', 'c'));
        }
      }),
    );
    const outcomes = run(multiClusterController({ for: cms, reconcile: () => undefined }));
    const reconciled = (key: string) => outcomes.some((o) => o.key === key && o.type === 'reconciled');
    await waitFor(() => reconciled('a/default/a-cm0') && reconciled('b/default/b-cm0'), 'a and b reconciled');
    f.provider.next(set('a'));
    expect(swapped).toBe(true);
    // The provider's last set names c: the controller reconciles it there, as the informer lists it.
    await waitFor(() => reconciled('c/default/c-cm0'), "c's ConfigMap reconciled", 10_000, {
      describe: () => `outcomes ${JSON.stringify(outcomes.map((o) => o.key))}, groups ${JSON.stringify(Object.keys(controllers[0]?.status().groups ?? {}))}`,
    });
    expect(cms.store.listKeys().sort()).toEqual(['a/default/a-cm0', 'c/default/c-cm0']);
  });
});

/** A KubeConfig for a server that is never contacted. */
function unusedKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  return kc;
}
