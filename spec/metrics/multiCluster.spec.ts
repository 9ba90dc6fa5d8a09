import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { controller } from '../../src/controller/controller.js';
import { informer } from '../../src/informer/informer.js';
import { prometheusMetrics } from '../../src/metrics/index.js';
import type { Controller } from '../../src/controller/controller.js';
import { multiClusterController } from '../../src/multicluster/multiClusterController.js';
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
function labeller(f: Fleet): Controller<V1ConfigMap> {
  const configMaps = multiClusterInformer(f.provider, (c) => kubeSource(c.kubeConfig, 'v1/configmaps'), { reflector: fastReflector, onError: () => {} });
  const c = multiClusterController({ for: configMaps, reconcile: () => undefined, concurrency: 2, name: 'labeller' });
  stoppable.push(c);
  subscriptions.push(c.subscribe());
  return c;
}

/** Each listed cluster reconciled exactly `n` times, by cluster name. */
function reconciled(c: Controller<V1ConfigMap>, want: Record<string, number>): boolean {
  const got = c.status().groups ?? {};
  return Object.entries(want).every(([cluster, n]) => got[cluster]?.reconciles === n);
}

/** The `group` label of every sample of the rxkube_controller_group_* families, as a set. */
function groupsIn(families: Map<string, Family>): Set<string | undefined> {
  const samples = [...families.values()].filter((f) => f.name.startsWith('rxkube_controller_group_')).flatMap((f) => f.samples);
  return new Set(samples.map((s) => s.labels['group']));
}

describe('prometheusMetrics: a multi-cluster controller on two simulated API servers (MC-14, LT-9)', () => {
  it("exports it as a controller, with each cluster's queue and reconciles in rxkube_controller_group_*{controller,group}", async () => {
    fleet = await Fleet.start(['eu', 'us'], 0);
    await seed(fleet, 'eu', 3);
    await seed(fleet, 'us', 2);
    const c = labeller(fleet);
    const metrics = prometheusMetrics();
    metrics.addController(c);
    await waitFor(() => reconciled(c, { eu: 3, us: 2 }), 'every ConfigMap reconciled once in its cluster');

    const f = parseExposition(await metrics.metrics());
    expect(groupsIn(f)).toEqual(new Set(['eu', 'us']));
    for (const [cluster, n] of [['eu', 3], ['us', 2]] as const) {
      const g = { controller: 'labeller', group: cluster };
      expect(valueOf(f, 'rxkube_controller_group_reconciles_total', g)).toBe(n);
      expect(valueOf(f, 'rxkube_controller_group_reconcile_errors_total', g)).toBe(0);
      expect(valueOf(f, 'rxkube_controller_group_depth', g)).toBe(0);
      expect(valueOf(f, 'rxkube_controller_group_active_workers', g)).toBe(0);
    }
    // The controller's own families are one controller's: the groups add up to them.
    const ctl = { controller: 'labeller' };
    const m = c.status();
    expect(valueOf(f, 'controller_runtime_reconcile_total', { ...ctl, result: 'success' })).toBe(5);
    expect(valueOf(f, 'controller_runtime_reconcile_errors_total', ctl)).toBe(0);
    expect(valueOf(f, 'controller_runtime_max_concurrent_reconciles', ctl)).toBe(2);
    expect(valueOf(f, 'controller_runtime_reconcile_time_seconds_count', ctl)).toBe(5);
    expect(valueOf(f, 'workqueue_adds_total', { name: 'labeller' })).toBe(m.queue.adds);
    expect(valueOf(f, 'workqueue_depth', { name: 'labeller' })).toBe(0);
    expect(family(f, 'controller_runtime_reconcile_total').samples.every((s) => s.labels['cluster'] === undefined && s.labels['group'] === undefined)).toBe(true);
  });

  it('a cluster that joins appears at the next scrape; one that left has its group series end, its counts kept by the controller\'s own; the remover takes out the rest (LT-14)', async () => {
    fleet = await Fleet.start(['stay', 'go'], 0);
    await seed(fleet, 'stay', 1);
    await seed(fleet, 'go', 1);
    const c = labeller(fleet);
    const metrics = prometheusMetrics();
    const remove = metrics.addController(c);
    const scrape = async () => parseExposition(await metrics.metrics());
    await waitFor(() => reconciled(c, { stay: 1, go: 1 }), 'both clusters reconciled');
    expect(groupsIn(await scrape())).toEqual(new Set(['stay', 'go']));

    fleet.drop('go');
    await fleet.add('new', 0, false);
    await seed(fleet, 'new', 2);
    fleet.publish();
    await waitFor(() => reconciled(c, { stay: 1, new: 2 }), 'new reconciled');
    const f = await scrape();
    // A departed cluster's label set is gone, so are its series: a fleet of short-lived clusters does not grow them without bound.
    expect(groupsIn(f)).toEqual(new Set(['stay', 'new']));
    expect(valueOf(f, 'rxkube_controller_group_reconciles_total', { controller: 'labeller', group: 'new' })).toBe(2);
    // The controller's own counter is the fleet's and keeps what go did: it never goes back.
    expect(valueOf(f, 'controller_runtime_reconcile_total', { controller: 'labeller', result: 'success' })).toBe(4);

    remove();
    expect(groupsIn(await scrape())).toEqual(new Set());
  });

  it('a controller without fairBy exports no group series', async () => {
    fleet = await Fleet.start(['eu'], 0);
    await seed(fleet, 'eu', 1);
    const single = controller<V1ConfigMap>({ for: informer<V1ConfigMap>(kubeSource(fleet.server('eu').kubeConfig(), 'v1/configmaps')), name: 'single', reconcile: () => undefined });
    stoppable.push(single);
    subscriptions.push(single.subscribe());
    const metrics = prometheusMetrics({ defaultMetrics: false });
    metrics.addController(single);
    await waitFor(() => single.status().succeeded.success === 1, 'reconciled');
    const f = parseExposition(await metrics.metrics());
    expect(valueOf(f, 'controller_runtime_reconcile_total', { controller: 'single', result: 'success' })).toBe(1);
    expect(groupsIn(f)).toEqual(new Set());
  });

  const promtool = promtoolPath();
  it.skipIf(promtool === undefined)('promtool check metrics accepts group series beside a single-cluster controller of the same families', async () => {
    fleet = await Fleet.start(['eu', 'us'], 0);
    await seed(fleet, 'eu', 1);
    await seed(fleet, 'us', 1);
    const c = labeller(fleet);
    const single = controller<V1ConfigMap>({ for: informer<V1ConfigMap>(kubeSource(fleet.server('eu').kubeConfig(), 'v1/configmaps')), name: 'single', reconcile: () => undefined });
    stoppable.push(single);
    subscriptions.push(single.subscribe());
    const metrics = prometheusMetrics({ defaultMetrics: false }); // rxkube's families only: prom-client's own nodejs_active_*_total draw promtool's lint
    metrics.addController(c);
    metrics.addController(single);
    await waitFor(() => reconciled(c, { eu: 1, us: 1 }) && single.status().succeeded.success === 1, 'every controller reconciled');
    const text = await metrics.metrics();
    const f = parseExposition(text);
    expect(valueOf(f, 'controller_runtime_reconcile_total', { controller: 'single', result: 'success' })).toBe(1);
    expect(family(f, 'workqueue_depth').samples.map((s) => s.labels)).toEqual([{ name: 'labeller' }, { name: 'single' }]);
    expect(family(f, 'rxkube_controller_group_depth').samples.map((s) => s.labels)).toEqual([
      { controller: 'labeller', group: 'eu' },
      { controller: 'labeller', group: 'us' },
    ]);
    expect(promtoolCheck(promtool!, text)).toEqual({ status: 0, output: '' });
  });
});
