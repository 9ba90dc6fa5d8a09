/**
 * rxkube/metrics against a real kube-apiserver and etcd: an informer, a controller (one of whose
 * reconciles fails once) and a leader election on a real Lease run, the exposition is served over HTTP
 * as a Prometheus server would scrape it, and Prometheus's own checker (`promtool check metrics`,
 * installed by spec/e2e/prometheus.sh) must accept it without a single problem.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { map, shareReplay, type Observable, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controller, type Controller } from '../../src/controller/controller.js';
import { informer, type Informer } from '../../src/informer/informer.js';
import { leaderElection } from '../../src/leaderelection/leaderElection.js';
import { leaseLock } from '../../src/leaderelection/leaseLock.js';
import { prometheusMetrics, type PrometheusMetrics } from '../../src/metrics/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { family, parseExposition, promtoolCheck, promtoolPath, valueOf } from '../metrics/exposition.js';
import { startCluster, type Cluster } from './cluster.js';
import { waitFor } from '../helpers/waitFor.js';

const NS = 'metrics-e2e';
let cluster: Cluster;
let configMaps: Informer<V1ConfigMap>;
let ctl: Controller<V1ConfigMap>;
let metrics: PrometheusMetrics;
let server: Server;
const subscriptions: Subscription[] = [];

beforeAll(async () => {
  cluster = await startCluster();
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
  for (const name of ['a', 'b', 'c', 'flaky']) await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name }, data: { v: '0' } } });
});

afterAll(async () => {
  for (const s of subscriptions) s.unsubscribe();
  await ctl?.shutdown();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await cluster?.stop();
});

/** One scrape, the way Prometheus makes it: an HTTP GET of the endpoint. */
async function scrape(): Promise<{ readonly contentType: string | null; readonly text: string }> {
  const { port } = server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  return { contentType: res.headers.get('content-type'), text: await res.text() };
}

describe('rxkube/metrics on a real kube-apiserver', () => {
  it('exports an informer, a controller and a leader election that promtool accepts', async () => {
    const promtool = promtoolPath();
    if (promtool === undefined) throw new Error('promtool is not installed: run bash spec/e2e/prometheus.sh (spec/e2e/build.sh does)');

    configMaps = informer<V1ConfigMap>(kubeSource(cluster.kubeConfig, 'v1/configmaps', { namespace: NS }), { name: `configmaps in ${NS}` });
    let flakyRuns = 0;
    ctl = controller<V1ConfigMap>({
      for: configMaps,
      name: 'configmap-checker',
      concurrency: 2,
      reconcile: (cm) => {
        if (cm.metadata?.name === 'flaky' && flakyRuns++ === 0) throw new Error('first try fails');
        return undefined;
      },
    });
    const lock = leaseLock(cluster.kubeConfig, { namespace: NS, name: 'configmap-checker' });
    const leading: Observable<boolean> = leaderElection({ lock, identity: 'e2e-replica', leaseDuration: 4_000, renewDeadline: 3_000, retryPeriod: 500 }).pipe(
      map((l) => l.leading),
      shareReplay({ bufferSize: 1, refCount: true }),
    );
    subscriptions.push(leading.subscribe());

    // rxkube's families only: prom-client's own nodejs_active_*_total gauges draw promtool's lint (WH-72).
    metrics = prometheusMetrics({ defaultMetrics: false });
    metrics.addInformer(configMaps);
    metrics.addController(ctl);
    metrics.addLeaderElection('configmap-checker', leading);
    server = createServer((_req, res) => {
      metrics.metrics().then(
        (text) => {
          res.setHeader('Content-Type', metrics.contentType);
          res.end(text);
        },
        (err: unknown) => {
          res.statusCode = 500;
          res.end(String(err));
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

    subscriptions.push(ctl.subscribe({ error: () => {} }));
    // Four objects, and flaky a second time after its backoff.
    await waitFor(() => ctl.status().durationHistogram.count >= 5 && configMaps.status().synced && ctl.status().queue.depth === 0, 'five reconciles and the lease', 60_000);
    await waitFor(async () => valueOf(parseExposition((await scrape()).text), 'leader_election_master_status', { name: 'configmap-checker' }) === 1, 'leadership', 30_000, { everyMs: 50 });

    const { contentType, text } = await scrape();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const checked = promtoolCheck(promtool, text);
    // promtool prints each lint problem on a line of its own; none is expected.
    expect(checked).toEqual({ status: 0, output: '' });

    const f = parseExposition(text);
    const controllerLabel = { controller: 'configmap-checker' };
    expect(valueOf(f, 'controller_runtime_reconcile_total', { ...controllerLabel, result: 'success' })).toBe(4);
    expect(valueOf(f, 'controller_runtime_reconcile_total', { ...controllerLabel, result: 'error' })).toBe(1);
    expect(valueOf(f, 'controller_runtime_reconcile_errors_total', controllerLabel)).toBe(1);
    expect(valueOf(f, 'controller_runtime_reconcile_time_seconds_count', controllerLabel)).toBe(5);
    expect(valueOf(f, 'controller_runtime_max_concurrent_reconciles', controllerLabel)).toBe(2);
    expect(valueOf(f, 'workqueue_retries_total', { name: 'configmap-checker' })).toBe(1);
    expect(valueOf(f, 'workqueue_work_duration_seconds_count', { name: 'configmap-checker' })).toBe(5);
    expect(family(f, 'workqueue_queue_duration_seconds').samples.some((s) => s.labels['le'] === '1e-08')).toBe(true);

    const resource = { resource: `configmaps in ${NS}` };
    expect(valueOf(f, 'rxkube_informer_synced', resource)).toBe(1);
    expect(valueOf(f, 'rxkube_informer_objects', resource)).toBe(4);
    expect(valueOf(f, 'rxkube_informer_lists_total', resource)).toBe(1);
    expect(valueOf(f, 'rxkube_informer_watches_total', resource)).toBeGreaterThanOrEqual(1);
    // etcd's revisions are numbers: the resume point is a gauge, at least the revision of the objects listed.
    const rvs = configMaps.store.list().map((cm) => Number(cm.metadata?.resourceVersion));
    expect(valueOf(f, 'rxkube_informer_last_sync_resource_version', resource)).toBeGreaterThanOrEqual(Math.max(...rvs));
  });
});
