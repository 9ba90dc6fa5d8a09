// The edges of a fleet: a cluster that fails for good, a provider that
// fails, a provider that repeats a name, indexes added while running, and a
// controller whose cluster changes KubeConfig or whose provider gives two sets
// back to back.

import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { Subject, firstValueFrom, filter, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { ClusterError } from '../../src/multicluster/ClusterError.js';
import { multiClusterController } from '../../src/multicluster/multiClusterController.js';
import type { ReconcileOutcome } from '../../src/controller/types.js';
import { multiClusterInformer } from '../../src/multicluster/multiClusterInformer.js';
import type { Cluster, ClusterEvent } from '../../src/multicluster/types.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { byLabel } from '../../src/store/indexFuncs.js';
import { startApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Fleet, fastReflector } from './fleet.js';

let fleet: Fleet | undefined;
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await fleet?.close();
  fleet = undefined;
});

function keep(sub: Subscription): void {
  cleanups.push(() => sub.unsubscribe());
}

describe('a fleet at its edges', () => {
  it('a cluster that answers with an error retrying cannot change is marked failed and its objects leave; the others carry on', async () => {
    fleet = await Fleet.start(['good', 'bad'], 2);
    const inf = multiClusterInformer(fleet.provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: () => {} });
    const events: ClusterEvent<V1Pod>[] = [];
    keep(inf.subscribe((e) => events.push(e)));
    await inf.whenSynced({ timeout: 10_000 });
    events.length = 0;
    const bad = fleet.server('bad');
    bad.faults.inject({ type: 'status', status: 400 }, { verb: 'watch', times: 100 });
    bad.faults.closeWatches();
    await firstValueFrom(inf.status$.pipe(filter((s) => s.clusters.find((c) => c.name === 'bad')?.state === 'failed')));
    expect(events.map((e) => [e.type, e.cluster, e.type === 'delete' && e.reason])).toEqual([
      ['delete', 'bad', 'cluster-failed'],
      ['delete', 'bad', 'cluster-failed'],
    ]);
    expect((await firstValueFrom(inf.status$)).synced).toBe(true);
    await fleet.server('good').create('v1/pods', pod('good-late'));
    await waitFor(() => inf.store.getByKey('good/default/good-late'), 'good to carry on');
  });

  it("a provider's error ends the informer: every subscriber gets it, and so do later ones", async () => {
    const provider = new Subject<readonly Cluster[]>();
    const inf = multiClusterInformer(provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { onError: () => {} });
    let failure: unknown;
    keep(inf.subscribe({ error: (err: unknown) => (failure = err) }));
    const waiting = inf.whenSynced();
    provider.error(new Error('the fleet file is gone'));
    expect((failure as Error).message).toBe('the fleet file is gone');
    await expect(waiting).rejects.toMatchObject({ reason: 'failed' });
    let late: unknown;
    inf.subscribe({ error: (err: unknown) => (late = err) });
    expect(late).toBe(failure);
  });

  it('a name given twice in one set is reported and the second ignored; an entry without a KubeConfig too', async () => {
    fleet = await Fleet.start(['one'], 1);
    const errors: Error[] = [];
    const inf = multiClusterInformer(fleet.provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: (e) => errors.push(e) });
    keep(inf.subscribe());
    const [first] = fleet.provider.value;
    fleet.provider.next([first as Cluster, { name: 'one', kubeConfig: fleet.server('one').kubeConfig() }, { name: 'nokc' } as never]);
    await inf.whenSynced({ timeout: 10_000 });
    expect(errors.filter((e) => e instanceof ClusterError).map((e) => [(e as ClusterError).cluster, e.message])).toEqual([
      ['one', expect.stringMatching(/gave this name twice/)],
      ['nokc', expect.stringMatching(/kubeConfig must be a KubeConfig/)],
    ]);
    expect(inf.store.listKeys()).toEqual(['one/default/one-p0']);
  });

  it("indexes added while running are built in every cluster's store and in those that join later", async () => {
    fleet = await Fleet.start(['a'], 0);
    await fleet.server('a').create('v1/pods', pod('web-a', { labels: { app: 'web' } }));
    const inf = multiClusterInformer(fleet.provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: () => {} });
    keep(inf.subscribe());
    await inf.whenSynced({ timeout: 10_000 });
    const app = byLabel('app');
    inf.store.addIndexers({ app });
    inf.store.addIndexers({ app }); // the same function again is no conflict
    expect(() => inf.store.addIndexers({ app: byLabel('tier') })).toThrow(/app/);
    expect(() => inf.store.addIndexers({ cluster: app })).toThrow(/cluster/);
    const b = await fleet.add('b', 0, false);
    await b.create('v1/pods', pod('web-b', { labels: { app: 'web' } }));
    fleet.publish();
    await inf.whenSynced({ timeout: 10_000 });
    expect(inf.store.indexKeys('app', 'web')).toEqual(['a/default/web-a', 'b/default/web-b']);
    expect(inf.cluster('b').store.byIndex('app', 'web').map((p) => p.metadata?.name)).toEqual(['web-b']);
  });

  it("a cluster whose KubeConfig changes gets a new controller, reconciling through the new KubeConfig", async () => {
    fleet = await Fleet.start(['x'], 0);
    await fleet.server('x').create('v1/configmaps', { metadata: { name: 'cfg', namespace: 'default' } });
    const moved = await startApiServer({ port: 0 });
    cleanups.push(() => moved.close());
    await moved.create('v1/configmaps', { metadata: { name: 'cfg', namespace: 'default' } });
    const configMaps = multiClusterInformer(fleet.provider, (c) => kubeSource(c.kubeConfig, 'v1/configmaps'), { reflector: fastReflector, onError: () => {} });
    const servers: string[] = [];
    const c = multiClusterController({
      for: configMaps,
      reconcile: async (obj: V1ConfigMap, ctx) => {
        servers.push(ctx.cluster.kubeConfig.getCurrentCluster()?.server ?? '');
        await objectClient(ctx.cluster.kubeConfig, 'v1/configmaps', { namespace: 'default' }).patch(obj.metadata?.name ?? '', { metadata: { labels: { seen: 'yes' } } });
      },
    });
    const outcomes: ReconcileOutcome<V1ConfigMap>[] = [];
    keep(c.subscribe((o) => outcomes.push(o)));
    cleanups.push(() => c.shutdown());
    const labelled = (server: { list: typeof moved.list }) => server.list<V1ConfigMap>('v1/configmaps').every((cm) => cm.metadata?.labels?.['seen'] === 'yes');
    const f = fleet;
    await waitFor(() => labelled(f.server('x')), 'the first server labelled');
    fleet.provider.next([{ name: 'x', kubeConfig: moved.kubeConfig() }]);
    await waitFor(() => labelled(moved), 'the new server labelled');
    expect(servers.at(-1)).toBe(moved.url);
    expect(c.status().state).toBe('running');
    expect(outcomes.every((o) => o.type !== 'failed')).toBe(true);
  });
  it('two sets given back to back while the first one\'s clusters still list: the controller and its informer end with the second one\'s (MC-15)', async () => {
    const f = (fleet = await Fleet.start(['a', 'b', 'c'], 1));
    const set = (...names: string[]): Cluster[] => names.map((name) => ({ name, kubeConfig: f.server(name).kubeConfig() }));
    f.provider.next([]);
    const inf = multiClusterInformer(f.provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: () => {} });
    const c = multiClusterController({ for: inf, reconcile: () => undefined });
    cleanups.push(() => c.shutdown());
    const outcomes: ReconcileOutcome<V1Pod>[] = [];
    keep(c.subscribe((o) => outcomes.push(o)));
    f.provider.next(set('a', 'b'));
    f.provider.next(set('c'));
    await waitFor(() => outcomes.some((o) => o.key === 'c/default/c-p0'), "c's pod reconciled");
    expect(inf.store.listKeys()).toEqual(['c/default/c-p0']);
    expect(new Set(outcomes.map((o) => o.key))).toEqual(new Set(['c/default/c-p0']));
    expect(Object.keys(c.status().groups ?? {})).toEqual(['c']);
  });
});
