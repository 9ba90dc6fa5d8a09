import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { controller, type Controller } from '../../src/controller/controller.js';
import { informer, type Informer } from '../../src/informer/informer.js';
import { prometheusMetrics } from '../../src/metrics/index.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { configMap, pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { family, parseExposition, promtoolCheck, promtoolPath, valueOf } from './exposition.js';
import { Lifetimes } from '../helpers/lifetimes.js';

const fastBackoff = { backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } };

let server: ApiServer;
const lifetimes = new Lifetimes();
const controllers: Controller<never>[] = [];

function track<T>(inf: Informer<T>): Informer<T> {
  return lifetimes.track(inf);
}


beforeEach(async () => {
  server = await startApiServer({ port: 0, bookmarkIntervalMs: 200 });
});

afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
  await lifetimes.end();
  await server.close();
});

describe('prometheusMetrics: informers on the simulator', () => {
  it('exports rxkube_informer_* under label resource, read at scrape time', async () => {
    for (let i = 0; i < 3; i++) await server.create('v1/pods', pod(`p${i}`));
    const pods = track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods'), { name: 'pods', reflector: fastBackoff, onError: () => {} }));
    const metrics = prometheusMetrics();
    const remove = metrics.addInformer(pods);
    const resource = { resource: 'pods' };
    const scrape = async () => parseExposition(await metrics.metrics());

    let f = await scrape();
    expect(valueOf(f, 'rxkube_informer_synced', resource)).toBe(0);
    expect(valueOf(f, 'rxkube_informer_lists_total', resource)).toBe(0);
    // Idle: no resourceVersion to resume from, so no series rather than a made-up number.
    expect(valueOf(f, 'rxkube_informer_last_sync_resource_version', resource)).toBeUndefined();

    pods.subscribe();
    await pods.whenSynced({ timeout: 10_000 });
    await server.create('v1/pods', pod('p3'));
    await waitFor(() => pods.status().counters.events >= 1, 'a watch event');
    server.faults.inject({ type: 'errorEvent' }, { verb: 'watch', resource: 'v1/pods' });
    await server.create('v1/pods', pod('p4'));
    await waitFor(() => pods.status().counters.relists === 1 && pods.status().objects === 5, 'a relist after 410, and p4');

    f = await scrape();
    const m = pods.status();
    const types = Object.fromEntries([...f.values()].filter((x) => x.name.startsWith('rxkube_informer_')).map((x) => [x.name, x.type]));
    expect(types).toEqual({
      rxkube_informer_lists_total: 'counter',
      rxkube_informer_relists_total: 'counter',
      rxkube_informer_watches_total: 'counter',
      rxkube_informer_retries_total: 'counter',
      rxkube_informer_events_total: 'counter',
      rxkube_informer_decode_errors_total: 'counter',
      rxkube_informer_errors_total: 'counter',
      rxkube_informer_objects: 'gauge',
      rxkube_informer_last_sync_resource_version: 'gauge',
      rxkube_informer_synced: 'gauge',
      rxkube_informer_pending_notifications: 'gauge',
    });
    expect(valueOf(f, 'rxkube_informer_synced', resource)).toBe(1);
    expect(valueOf(f, 'rxkube_informer_objects', resource)).toBe(5);
    expect(valueOf(f, 'rxkube_informer_lists_total', resource)).toBe(2);
    expect(valueOf(f, 'rxkube_informer_relists_total', { ...resource, reason: 'expired' })).toBe(1);
    expect(family(f, 'rxkube_informer_relists_total').samples.map((s) => s.labels['reason']).sort()).toEqual(['expired', 'list-failed', 'very-short-watch', 'watch-failed']);
    expect(valueOf(f, 'rxkube_informer_retries_total', { ...resource, reason: 'expired' })).toBe(1);
    expect(valueOf(f, 'rxkube_informer_retries_total', { ...resource, reason: 'server' })).toBe(0);
    expect(family(f, 'rxkube_informer_retries_total').samples).toHaveLength(8);
    expect(valueOf(f, 'rxkube_informer_watches_total', resource)).toBe(m.counters.watches);
    expect(valueOf(f, 'rxkube_informer_events_total', resource)).toBeGreaterThanOrEqual(1);
    expect(valueOf(f, 'rxkube_informer_errors_total', resource)).toBe(m.errors);
    expect(valueOf(f, 'rxkube_informer_decode_errors_total', resource)).toBe(0);
    expect(valueOf(f, 'rxkube_informer_pending_notifications', resource)).toBe(0);
    expect(valueOf(f, 'rxkube_informer_last_sync_resource_version', resource)).toBe(Number(m.lastSyncResourceVersion));

    // A handler stuck on its first add: the rest of its initial list waits in its buffer.
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const reg = pods.addHandler({ add: () => stuck });
    await waitFor(() => reg.depth === 4, 'four adds buffered behind the first');
    expect(valueOf(await scrape(), 'rxkube_informer_pending_notifications', resource)).toBe(4);
    release();
    reg.unsubscribe();
    await reg.done;

    remove();
    f = await scrape();
    expect([...f.values()].filter((x) => x.name.startsWith('rxkube_informer_')).flatMap((x) => x.samples)).toEqual([]);
  });

  it('two informers under one name: the second is refused, naming the option that tells them apart', () => {
    const metrics = prometheusMetrics();
    const a = track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods', { namespace: 'a' })));
    const b = track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods', { namespace: 'b' })));
    expect(a.name).toBe(b.name);
    metrics.addInformer(a);
    expect(() => metrics.addInformer(b)).toThrow(/informer named "v1\/pods" is already exported; give the other one a distinct `name` option/);
    const c = track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods', { namespace: 'b' }), { name: 'pods in b' }));
    expect(() => metrics.addInformer(c)).not.toThrow();
  });
});

describe('prometheusMetrics: a controller on the simulator', () => {
  it("exports controller-runtime's names under label controller, and its queue under the controller's name", async () => {
    for (const name of ['ok', 'again', 'later', 'bad']) await server.create('v1/configmaps', configMap(name, { data: { k: 'v' } }));
    const cms = track(informer<V1ConfigMap>(kubeSource(server.kubeConfig(), 'v1/configmaps'), { reflector: fastBackoff }));
    let againRuns = 0;
    const ctl = controller<V1ConfigMap>({
      for: cms,
      name: 'configmaps',
      concurrency: 2,
      errorPolicy: () => undefined,
      reconcile: (cm) => {
        const name = cm.metadata?.name;
        if (name === 'again') return againRuns++ === 0 ? { requeueAfter: 0 } : undefined;
        if (name === 'later') return { requeueAfter: 600_000 };
        if (name === 'bad') throw new Error('no');
        return undefined;
      },
    });
    controllers.push(ctl as unknown as Controller<never>);
    const metrics = prometheusMetrics();
    const remove = metrics.addController(ctl);
    metrics.addInformer(cms);
    expect(() => metrics.addController(ctl)).toThrow(/controller named "configmaps" is already exported/);
    expect(() => metrics.addWorkQueue({ name: 'configmaps', metrics: () => ctl.status().queue })).toThrow(/controller named "configmaps" is already exported, and its work queue/);

    ctl.subscribe({ error: () => {} });
    await waitFor(() => ctl.status().durationHistogram.count === 5, 'five reconciles');
    const f = parseExposition(await metrics.metrics());
    const label = { controller: 'configmaps' };
    const types = Object.fromEntries([...f.values()].filter((x) => x.name.startsWith('controller_runtime_') && !x.name.startsWith('controller_runtime_webhook_')).map((x) => [x.name, x.type]));
    expect(types).toEqual({
      controller_runtime_reconcile_total: 'counter',
      controller_runtime_reconcile_errors_total: 'counter',
      controller_runtime_terminal_reconcile_errors_total: 'counter',
      controller_runtime_reconcile_time_seconds: 'histogram',
      controller_runtime_active_workers: 'gauge',
      controller_runtime_max_concurrent_reconciles: 'gauge',
    });
    for (const [result, n] of Object.entries({ success: 2, error: 1, requeue: 1, requeue_after: 1 })) {
      expect(valueOf(f, 'controller_runtime_reconcile_total', { ...label, result })).toBe(n);
    }
    expect(valueOf(f, 'controller_runtime_reconcile_errors_total', label)).toBe(1);
    expect(valueOf(f, 'controller_runtime_terminal_reconcile_errors_total', label)).toBe(0);
    expect(valueOf(f, 'controller_runtime_max_concurrent_reconciles', label)).toBe(2);
    expect(valueOf(f, 'controller_runtime_active_workers', label)).toBe(0);
    // This controller writes nothing, so its reads never waited for a cache.
    expect(family(f, 'rxkube_controller_read_your_writes_waits_total').type).toBe('counter');
    expect(valueOf(f, 'rxkube_controller_read_your_writes_waits_total', label)).toBe(0);
    expect(valueOf(f, 'rxkube_controller_read_your_writes_timeouts_total', label)).toBe(0);
    expect(valueOf(f, 'controller_runtime_reconcile_time_seconds_count', label)).toBe(5);
    const buckets = family(f, 'controller_runtime_reconcile_time_seconds').samples.filter((s) => s.name.endsWith('_bucket'));
    expect(buckets[0]?.labels).toEqual({ ...label, le: '0.005' });
    expect(buckets.at(-2)?.labels['le']).toBe('60');
    expect(buckets.at(-1)).toMatchObject({ labels: { le: '+Inf' }, value: 5 });
    // Buckets are cumulative: never decreasing.
    expect(buckets.every((b, i) => i === 0 || b.value >= buckets[i - 1]!.value)).toBe(true);
    // The queue, under the controller's name.
    expect(valueOf(f, 'workqueue_work_duration_seconds_count', { name: 'configmaps' })).toBe(5);
    expect(valueOf(f, 'workqueue_adds_total', { name: 'configmaps' })).toBe(ctl.status().queue.adds);
    expect(valueOf(f, 'rxkube_informer_objects', { resource: 'v1/configmaps' })).toBe(4);

    remove();
    const after = parseExposition(await metrics.metrics());
    expect(family(after, 'controller_runtime_reconcile_total').samples).toEqual([]);
    expect(family(after, 'workqueue_depth').samples).toEqual([]);
    // The name is free again, for a queue too.
    expect(() => metrics.addWorkQueue({ name: 'configmaps', metrics: () => ctl.status().queue })).not.toThrow();
  });

  const promtool = promtoolPath();
  it.skipIf(promtool === undefined)('promtool check metrics accepts the exposition of every kind at once', async () => {
    await server.create('v1/configmaps', configMap('one', { data: { k: 'v' } }));
    const cms = track(informer<V1ConfigMap>(kubeSource(server.kubeConfig(), 'v1/configmaps')));
    const ctl = controller<V1ConfigMap>({ for: cms, name: 'configmaps', reconcile: () => undefined });
    controllers.push(ctl as unknown as Controller<never>);
    const metrics = prometheusMetrics({ defaultMetrics: false }) // rxkube's families only: prom-client's own nodejs_active_*_total draw promtool's lint;
    metrics.addInformer(cms);
    metrics.addController(ctl);
    metrics.addLeaderElection('configmaps', (await import('rxjs')).of(true));
    ctl.subscribe();
    await waitFor(() => ctl.status().durationHistogram.count === 1, 'a reconcile');
    const result = promtoolCheck(promtool!, await metrics.metrics());
    expect(result).toEqual({ status: 0, output: '' });
  });
});
