import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Observable } from 'rxjs';
import type { ControllerStatus } from '../controller/status.js';
import { CallbackError } from '../errors/CallbackError.js';
import { reportError } from '../errors/reportError.js';
import type { InformerStatus } from '../informer/types.js';
import { describeValue } from '../options/validate.js';
import type { WorkQueueMetrics } from '../workqueue/metrics.js';
import { controllerFamilies, informerFamilies, leaderElectionFamilies, workQueueFamilies, type Sources } from './families.js';
import { SnapshotMetric } from './snapshotMetric.js';
import type { WebhookServerMetrics } from '../manager/webhookMetrics.js';
import { webhookFamilies } from './webhookFamilies.js';

/**
 * Options of {@link prometheusMetrics}.
 *
 * ## Example
 * ```ts
 * import { register } from 'prom-client';
 * import { prometheusMetrics, type PrometheusMetricsOptions } from 'rxkube/metrics';
 *
 * const opts: PrometheusMetricsOptions = { registry: register }; // beside the process's other metrics
 * const metrics = prometheusMetrics(opts);
 * ```
 */
export interface PrometheusMetricsOptions {
  /**
   * The prom-client registry rxkube's metric families are registered in. Pass prom-client's global `register` (or
   * your own registry) to serve them from one endpoint with your other metrics. One `prometheusMetrics()` per
   * registry: a second one finds the names taken and throws.
   * @default a new Registry of its own
   */
  readonly registry?: Registry;
  /**
   * Also collect prom-client's default metrics in the registry: `process_*` (CPU, memory, open descriptors,
   * start time) and `nodejs_*` (event loop lag, heap, garbage collection), as a Go controller exposes `process_*`
   * and `go_*` beside controller-runtime's. A process out of memory or with a blocked event loop shows there
   * first. Skipped when the registry holds them already (`collectDefaultMetrics()` was called on it).
   * @default true
   */
  readonly defaultMetrics?: boolean;
}

/**
 * rxkube's metrics in Prometheus form, under the names Go controllers use,
 * made by {@link prometheusMetrics}. Each `add…` starts exporting one
 * controller, work queue, informer or leader election and returns a function
 * that stops exporting it (its series disappear from the next scrape).
 *
 * Values are read when the registry is scraped, from the snapshots the
 * controllers' and informers' `status()` and the queues' `metrics()`, snapshots they keep anyway, so exporting
 * costs nothing per event. A name is exported once: adding a second
 * controller, queue, informer or election under a name already exported
 * throws (a controller's queue takes its controller's name among queues).
 *
 * ## Example
 * ```ts
 * import { createServer } from 'node:http';
 * import { prometheusMetrics } from 'rxkube/metrics';
 * import type { Controller } from 'rxkube';
 * declare const ctl: Controller<unknown>;
 *
 * const metrics = prometheusMetrics();
 * const remove = metrics.addController(ctl);
 * createServer(async (_req, res) => {
 *   res.setHeader('Content-Type', metrics.contentType);
 *   res.end(await metrics.metrics());
 * }).listen(8080);
 * // later: remove();
 * ```
 */
export interface PrometheusMetrics {
  /** prom-client's registry that holds rxkube's families (and whatever else was registered in it). */
  readonly registry: Registry;
  /** The Content-Type of {@link PrometheusMetrics.metrics}' text, for the HTTP response: the registry's. */
  readonly contentType: string;
  /** The registry's exposition text, rxkube's series read now, with everything else registered in it. */
  metrics(): Promise<string>;
  /**
   * Exports a controller under label `controller="<name>"` (`controller_runtime_*`) and its work queue under
   * `name="<name>"` (`workqueue_*`). Throws when a controller or work queue of that name is already exported.
   */
  addController(c: { readonly name: string; status(): ControllerStatus }): () => void;
  /** Exports a work queue under label `name="<name>"` (`workqueue_*`). Throws when that name is already exported. */
  addWorkQueue(q: { readonly name: string; metrics(): WorkQueueMetrics }): () => void;
  /**
   * Exports an informer (of any object type) under label `resource="<name>"` (`rxkube_informer_*`). Throws when that
   * name is already exported: two informers of one resource need distinct `name` options.
   */
  addInformer(i: { readonly name: string; status(): InformerStatus }): () => void;
  /**
   * Exports `leader_election_master_status{name}`: 1 after `leading` last emitted true, else 0 (before its first
   * value, and once it completes or errors). Subscribes to `leading` until the returned function is called: pass a
   * shared stream, since a cold `leaderElection()` would start an elector of its own.
   */
  addLeaderElection(name: string, leading: Observable<boolean>): () => void;
  /**
   * Exports the runner's webhook server under controller-runtime's names: `controller_runtime_webhook_requests_total{webhook,code}`,
   * `controller_runtime_webhook_latency_seconds{webhook}`, `controller_runtime_webhook_requests_in_flight{webhook}`, and
   * rxkube's `rxkube_webhook_failures_total{webhook,failure}`. The manager calls it when it serves webhooks. One
   * webhook server per exporter: a second one throws.
   */
  addWebhooks(server: { metrics(): WebhookServerMetrics }): () => void;
}

function checkName(what: string, name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new TypeError(`prometheusMetrics: ${what} must be a non-empty string, got ${describeValue(name)}`);
  return name;
}

/** Checks that `source` has a name and the method (a queue's `metrics`, a controller's or informer's `status`) read at each scrape. */
function checkSource(what: string, source: unknown, read: 'metrics' | 'status' = 'metrics'): { readonly name: string } {
  if (source === null || typeof source !== 'object' || typeof (source as Record<string, unknown>)[read] !== 'function') {
    throw new TypeError(`prometheusMetrics: ${what} must be an object with a name and ${read}(), got ${describeValue(source)}`);
  }
  checkName(`${what}.name`, (source as { name?: unknown }).name);
  return source as { readonly name: string };
}

function checkRegistry(value: unknown): Registry {
  if (value === undefined) return new Registry();
  const r = value as Partial<Registry> | null;
  if (r === null || typeof r !== 'object' || typeof r.registerMetric !== 'function' || typeof r.metrics !== 'function' || typeof r.getSingleMetric !== 'function') {
    throw new TypeError(`prometheusMetrics: registry must be a prom-client Registry, got ${describeValue(value)}`);
  }
  return value as Registry;
}

/** Reads a source for one scrape; what its `method()` throws is reported and its series are left out of that scrape. */
function guarded<M>(kind: string, name: string, read: () => M, method = 'metrics'): () => M | undefined {
  return () => {
    try {
      return read();
    } catch (err) {
      reportError(new CallbackError('prometheusMetrics', `${method}() of ${kind} ${JSON.stringify(name)} threw; its series are left out of this scrape`, err));
      return undefined;
    }
  };
}

/**
 * Exports rxkube's metrics with prom-client under the names Go controllers
 * use, so dashboards and alerts written for them work unchanged:
 * client-go's `workqueue_*{name}`, controller-runtime's
 * `controller_runtime_*{controller}`, client-go's
 * `leader_election_master_status{name}`, and rxkube's own
 * `rxkube_informer_*{resource}` (docs/semantics.md, M-1 on, lists them all).
 * A controller with `fairBy` (a multi-cluster one) adds its groups in `rxkube_controller_group_*{group}`.
 * Histograms carry the buckets the library observes into: client-go's for
 * work queues, controller-runtime's for reconcile times.
 *
 * Every family is registered at once, empty until something is added.
 * prom-client is an optional peer dependency: only this entry imports it.
 *
 * ## Example
 * ```ts
 * import { createServer } from 'node:http';
 * import { controller, informer, kubeSource } from 'rxkube';
 * import { prometheusMetrics } from 'rxkube/metrics';
 * import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const configMaps = informer(kubeSource(kc, 'v1/configmaps'));
 * const ctl = controller<V1ConfigMap>({ for: configMaps, name: 'configmaps', reconcile: async () => undefined });
 * const metrics = prometheusMetrics();
 * metrics.addInformer(configMaps);
 * metrics.addController(ctl);
 * createServer(async (_req, res) => {
 *   res.setHeader('Content-Type', metrics.contentType);
 *   res.end(await metrics.metrics());
 * }).listen(8080);
 * ctl.subscribe();
 * ```
 *
 * @param opts where to register the families.
 * @param opts.registry the prom-client registry. @default a new Registry of its own
 * @param opts.defaultMetrics also collect prom-client's process_* and nodejs_* metrics. @default true
 * @returns the exporter; nothing is exported until something is added.
 * @throws TypeError when an option is invalid; Error when the registry already holds one of the names.
 */
export function prometheusMetrics(opts: PrometheusMetricsOptions = {}): PrometheusMetrics {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`prometheusMetrics: opts must be an object, got ${describeValue(opts)}`);
  const registry = checkRegistry(opts.registry);
  const controllers = new Map<string, () => ControllerStatus | undefined>();
  const queues = new Map<string, () => WorkQueueMetrics | undefined>();
  const informers = new Map<string, () => InformerStatus | undefined>();
  const leaders = new Map<string, () => boolean>();
  const sources: Sources = { controllers, queues, informers, leaders };
  let webhooks: (() => WebhookServerMetrics | undefined) | undefined;
  const families = [
    ...workQueueFamilies(sources),
    ...controllerFamilies(sources),
    ...leaderElectionFamilies(sources),
    ...informerFamilies(sources),
    ...webhookFamilies(() => webhooks?.()),
  ];
  const taken = families.find((f) => registry.getSingleMetric(f.name) !== undefined);
  if (taken !== undefined) {
    throw new Error(`prometheusMetrics: the registry already has a metric named ${taken.name} (one prometheusMetrics() per registry)`);
  }
  for (const f of families) registry.registerMetric(new SnapshotMetric(f).asMetric());
  const defaults = opts.defaultMetrics ?? true;
  if (typeof defaults !== 'boolean') throw new TypeError(`prometheusMetrics: option "defaultMetrics" must be a boolean, got ${describeValue(defaults)}`);
  if (defaults && registry.getSingleMetric('process_cpu_user_seconds_total') === undefined) collectDefaultMetrics({ register: registry });

  /** Adds `read` under `name` to `map`, returning the idempotent remover. */
  const add = <V>(map: Map<string, V>, name: string, read: V): (() => void) => {
    map.set(name, read);
    return () => {
      if (map.get(name) === read) map.delete(name);
    };
  };
  const queueTaken = (name: string): void => {
    if (controllers.has(name)) {
      throw new Error(`prometheusMetrics: a controller named ${JSON.stringify(name)} is already exported, and its work queue under that name`);
    }
    if (queues.has(name)) throw new Error(`prometheusMetrics: a work queue named ${JSON.stringify(name)} is already exported`);
  };

  // Controllers and work queues share the workqueue_*{name} families, so one name may be taken once among them all.
  function addQueueOwner<M>(kind: string, into: Map<string, () => M | undefined>, c: object, method: 'metrics' | 'status'): () => void {
    const source = checkSource(kind, c, method) as { readonly name: string } & Record<typeof method, () => M>;
    const name = source.name;
    queueTaken(name);
    return add(into, name, guarded(kind, name, () => source[method](), method));
  }

  return {
    registry,
    get contentType() {
      return registry.contentType;
    },
    metrics: () => registry.metrics(),
    addController: (c) => addQueueOwner('controller', controllers, c, 'status'),
    addWorkQueue: (q) => addQueueOwner('work queue', queues, q, 'metrics'),
    addInformer(i) {
      const source = checkSource('informer', i, 'status') as typeof i;
      const name = source.name;
      if (informers.has(name)) {
        throw new Error(`prometheusMetrics: an informer named ${JSON.stringify(name)} is already exported; give the other one a distinct \`name\` option`);
      }
      return add(informers, name, guarded('informer', name, () => source.status(), 'status'));
    },
    addWebhooks(server) {
      if (server === null || typeof server !== 'object' || typeof (server as { metrics?: unknown }).metrics !== 'function') {
        throw new TypeError(`prometheusMetrics: the webhook server must be an object with metrics(), got ${describeValue(server)}`);
      }
      if (webhooks !== undefined) throw new Error('prometheusMetrics: a webhook server is already exported (one per exporter)');
      const read = guarded('webhook server', 'webhooks', () => server.metrics());
      webhooks = read;
      return () => {
        if (webhooks === read) webhooks = undefined;
      };
    },
    addLeaderElection(name, leading) {
      checkName('leader election name', name);
      if (leading === null || typeof leading !== 'object' || typeof (leading as { subscribe?: unknown }).subscribe !== 'function') {
        throw new TypeError(`prometheusMetrics: leading must be an Observable<boolean>, got ${describeValue(leading)}`);
      }
      if (leaders.has(name)) throw new Error(`prometheusMetrics: a leader election named ${JSON.stringify(name)} is already exported`);
      let isLeading = false;
      const read = () => isLeading;
      const remove = add(leaders, name, read);
      const sub = leading.subscribe({
        next: (value) => (isLeading = value === true),
        error: (err: unknown) => {
          isLeading = false;
          reportError(new Error(`prometheusMetrics: the leading stream of ${JSON.stringify(name)} failed; leader_election_master_status reads 0`, { cause: err }));
        },
        complete: () => (isLeading = false),
      });
      return () => {
        sub.unsubscribe();
        remove();
      };
    },
  };
}
