import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { controller } from '../../src/controller/controller.js';
import { informer } from '../../src/informer/informer.js';
import { prometheusMetrics } from '../../src/metrics/index.js';
import { multiClusterController, type MultiClusterController } from '../../src/multicluster/multiClusterController.js';
import { multiClusterInformer } from '../../src/multicluster/multiClusterInformer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { waitFor } from '../helpers/waitFor.js';
import { Fleet, fastReflector } from '../multicluster/fleet.js';
import { family, parseExposition, promtoolCheck, promtoolPath, valueOf, type Family } from './exposition.js';
import { configMap } from '../helpers/objects.js';

let fleet: Fleet | undefined;
const subscriptions: Subscription[] = [];
const stoppable: { shutdown(): Promise<void> }[] = [];

afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await Promise.all(stoppable.splice(0).map((c) => c.shutdown()));
  await fleet?.close();
  fleet = undefined;
});


async function seed(f: Fleet, cluster: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await f.server(cluster).create('v1/configmaps', configMap(`${cluster}-cm${i}`, { data: { v: '1' } }));
}

/** A running multi-cluster controller named `labeller` over the fleet's ConfigMaps, reconciling nothing. */
function labeller(f: Fleet): MultiClusterController<V1ConfigMap> {
  const configMaps = multiClusterInformer(f.provider, (c) => kubeSource(c.kubeConfig, 'v1/configmaps'), { reflector: fastReflector, onError: () => {} });
  const c = multiClusterController({ for: configMaps, reconcile: () => undefined, concurrency: 2, name: 'labeller' });
  stoppable.push(c);
  subscriptions.push(c.subscribe());
  return c;
}

/** The clusters reconciled `n` times each (success), by cluster name. */
function reconciled(c: MultiClusterController<V1ConfigMap>, want: Record<string, number>): boolean {
  const got = Object.fromEntries(c.metrics().map((m) => [m.cluster, m.reconcileTotal.success]));
  return Object.keys(got).length === Object.keys(want).length && Object.entries(want).every(([cluster, n]) => got[cluster] === n);
}

/** The `cluster` label of every sample of the controller_runtime_* and workqueue_* families, as a set. */
function clustersIn(families: Map<string, Family>): Set<string | undefined> {
  const samples = [...families.values()].filter((f) => /^(controller_runtime|workqueue)_/.test(f.name)).flatMap((f) => f.samples);
  return new Set(samples.map((s) => s.labels['cluster']));
}

describe('prometheusMetrics: a multi-cluster controller on two simulated API servers', () => {
  it("exports each cluster's controller and work queue with a cluster label, read from the controller's own snapshot", async () => {
    fleet = await Fleet.start(['eu', 'us'], 0);
    await seed(fleet, 'eu', 3);
    await seed(fleet, 'us', 2);
    const c = labeller(fleet);
    const metrics = prometheusMetrics();
    metrics.addMultiClusterController(c);
    await waitFor(() => reconciled(c, { eu: 3, us: 2 }), 'every ConfigMap reconciled once in its cluster');

    const f = parseExposition(await metrics.metrics());
    expect(clustersIn(f)).toEqual(new Set(['eu', 'us']));
    for (const [cluster, n] of [['eu', 3], ['us', 2]] as const) {
      const ctl = { controller: 'labeller', cluster };
      const queue = { name: 'labeller', cluster };
      const m = c.metrics().find((x) => x.cluster === cluster)!;
      expect(valueOf(f, 'controller_runtime_reconcile_total', { ...ctl, result: 'success' })).toBe(n);
      expect(valueOf(f, 'controller_runtime_reconcile_total', { ...ctl, result: 'error' })).toBe(0);
      expect(valueOf(f, 'controller_runtime_reconcile_errors_total', ctl)).toBe(0);
      expect(valueOf(f, 'controller_runtime_max_concurrent_reconciles', ctl)).toBe(2);
      expect(valueOf(f, 'controller_runtime_reconcile_time_seconds_count', ctl)).toBe(n);
      expect(valueOf(f, 'controller_runtime_reconcile_time_seconds_bucket', { ...ctl, le: '+Inf' })).toBe(n);
      expect(valueOf(f, 'workqueue_adds_total', queue)).toBe(m.queue.adds);
      expect(valueOf(f, 'workqueue_adds_total', queue)).toBeGreaterThanOrEqual(n);
      expect(valueOf(f, 'workqueue_depth', queue)).toBe(0);
      expect(valueOf(f, 'workqueue_work_duration_seconds_count', queue)).toBe(m.queue.workDuration.count);
    }
    // Every series of a cluster carries both labels; nothing is exported under the bare name.
    const reconcileTotal = family(f, 'controller_runtime_reconcile_total').samples;
    expect(reconcileTotal.every((s) => s.labels['controller'] === 'labeller' && s.labels['cluster'] !== undefined)).toBe(true);
    expect(reconcileTotal).toHaveLength(8); // 2 clusters × 4 results
  });

  it('a cluster that joins appears at the next scrape and one that leaves disappears; the remover takes out the rest', async () => {
    fleet = await Fleet.start(['stay', 'go'], 0);
    await seed(fleet, 'stay', 1);
    await seed(fleet, 'go', 1);
    const c = labeller(fleet);
    const metrics = prometheusMetrics();
    const remove = metrics.addMultiClusterController(c);
    const scrape = async () => parseExposition(await metrics.metrics());
    await waitFor(() => reconciled(c, { stay: 1, go: 1 }), 'both clusters reconciled');
    expect(clustersIn(await scrape())).toEqual(new Set(['stay', 'go']));

    fleet.drop('go');
    await fleet.add('new', 0, false);
    await seed(fleet, 'new', 2);
    fleet.publish();
    await waitFor(() => reconciled(c, { stay: 1, new: 2 }), 'go gone, new reconciled');
    const f = await scrape();
    expect(clustersIn(f)).toEqual(new Set(['stay', 'new']));
    expect(valueOf(f, 'controller_runtime_reconcile_total', { controller: 'labeller', cluster: 'new', result: 'success' })).toBe(2);
    expect(valueOf(f, 'workqueue_depth', { name: 'labeller', cluster: 'go' })).toBeUndefined();

    remove();
    expect(clustersIn(await scrape())).toEqual(new Set());
  });

  it('takes its name among controllers and work queues, and checks what it is given', () => {
    const metrics = prometheusMetrics();
    const fake = { name: 'fleet', metrics: () => [] };
    const remove = metrics.addMultiClusterController(fake);
    expect(() => metrics.addController({ name: 'fleet', metrics: () => ({}) as never })).toThrow(/controller named "fleet" is already exported/);
    expect(() => metrics.addWorkQueue({ name: 'fleet', metrics: () => ({}) as never })).toThrow(/controller named "fleet" is already exported/);
    expect(() => metrics.addMultiClusterController(fake)).toThrow(/controller named "fleet" is already exported/);
    remove(); // frees the name, for a single-cluster controller too
    metrics.addController({ name: 'fleet', metrics: () => ({}) as never });
    expect(() => metrics.addMultiClusterController(fake)).toThrow(/controller named "fleet" is already exported/);
    expect(() => metrics.addMultiClusterController({ name: '' } as never)).toThrow(TypeError);
    expect(() => metrics.addMultiClusterController({ name: '', metrics: () => [] })).toThrow(/multi-cluster controller\.name must be a non-empty string/);
  });

  const promtool = promtoolPath();
  it.skipIf(promtool === undefined)('promtool check metrics accepts cluster-labelled series beside a single-cluster controller of the same families', async () => {
    fleet = await Fleet.start(['eu', 'us'], 0);
    await seed(fleet, 'eu', 1);
    await seed(fleet, 'us', 1);
    const c = labeller(fleet);
    const single = controller<V1ConfigMap>({ for: informer<V1ConfigMap>(kubeSource(fleet.server('eu').kubeConfig(), 'v1/configmaps')), name: 'single', reconcile: () => undefined });
    stoppable.push(single);
    subscriptions.push(single.subscribe());
    const metrics = prometheusMetrics({ defaultMetrics: false }) // rxkube's families only: prom-client's own nodejs_active_*_total draw promtool's lint;
    metrics.addMultiClusterController(c);
    metrics.addController(single);
    await waitFor(() => reconciled(c, { eu: 1, us: 1 }) && single.metrics().reconcileTotal.success === 1, 'every controller reconciled');
    const text = await metrics.metrics();
    const f = parseExposition(text);
    expect(valueOf(f, 'controller_runtime_reconcile_total', { controller: 'single', result: 'success' })).toBe(1);
    expect(family(f, 'workqueue_depth').samples.map((s) => s.labels)).toEqual([{ name: 'single' }, { name: 'labeller', cluster: 'eu' }, { name: 'labeller', cluster: 'us' }]);
    expect(promtoolCheck(promtool!, text)).toEqual({ status: 0, output: '' });
  });
});
