import type { ControllerStatus } from '../controller/status.js';
import type { InformerStatus } from '../informer/types.js';
import type { WorkQueueMetrics } from '../workqueue/metrics.js';
import type { FamilySpec, HistogramReading, LabelSet, ValueReading } from './snapshotMetric.js';

/** What is exported, by the name it is exported under; each read returns that source's snapshot for this scrape. */
export interface Sources {
  readonly controllers: ReadonlyMap<string, () => ControllerStatus | undefined>;
  readonly queues: ReadonlyMap<string, () => WorkQueueMetrics | undefined>;
  readonly informers: ReadonlyMap<string, () => InformerStatus | undefined>;
  readonly leaders: ReadonlyMap<string, () => boolean>;
}

type Values = () => Iterable<ValueReading>;

/** Each source that could be read this scrape, with the labels that name it: `{ [label]: <its name> }`. */
function* each<M>(sources: ReadonlyMap<string, () => M | undefined>, label: string): Generator<[LabelSet, M]> {
  for (const [name, read] of sources) {
    const m = read();
    if (m !== undefined) yield [{ [label]: name }, m];
  }
}

/** One series per fairness group of each controller with `fairBy`, label `group` after `controller`. */
function perGroup(s: Sources, value: (g: NonNullable<ControllerStatus['groups']>[string]) => number): Values {
  return function* () {
    for (const [labels, m] of each(s.controllers, 'controller')) {
      for (const [group, g] of Object.entries(m.groups ?? {})) yield { labels: { ...labels, group }, value: value(g) };
    }
  };
}

/** Every work queue: the ones added by themselves, and each controller's, under the controller's name. */
function* queues(s: Sources): Generator<[LabelSet, WorkQueueMetrics]> {
  yield* each(s.queues, 'name');
  for (const [labels, c] of each(s.controllers, 'name')) yield [labels, c.queue];
}

/** A counter family (also of the webhook server's metrics). */
export function counter(name: string, help: string, read: Values): FamilySpec {
  return { name, help, type: 'counter', read };
}

/** A gauge family. */
export function gauge(name: string, help: string, read: Values): FamilySpec {
  return { name, help, type: 'gauge', read };
}

/** A histogram family. */
export function histogram(name: string, help: string, read: () => Iterable<HistogramReading>): FamilySpec {
  return { name, help, type: 'histogram', read };
}

/** One series per source, under the source's labels; `value` reads its number. */
function perSource<M>(all: () => Iterable<[LabelSet, M]>, value: (m: M) => number): Values {
  return function* () {
    for (const [labels, m] of all()) yield { labels, value: value(m) };
  };
}

/** One series per source and key of a record of counts, the key under `keyLabel` after the source's labels. */
function perKey<M, K extends string>(all: () => Iterable<[LabelSet, M]>, keyLabel: string, record: (m: M) => Readonly<Record<K, number>>): Values {
  return function* () {
    for (const [labels, m] of all()) {
      for (const [key, value] of Object.entries<number>(record(m))) yield { labels: { ...labels, [keyLabel]: key }, value };
    }
  };
}

/** One histogram series per source, under the source's labels. */
function perHistogram<M>(all: () => Iterable<[LabelSet, M]>, pick: (m: M) => HistogramReading['histogram']): () => Iterable<HistogramReading> {
  return function* () {
    for (const [labels, m] of all()) yield { labels, histogram: pick(m) };
  };
}

/** client-go's work queue metrics, label `name` (controller-runtime exports the same for a controller's queue). */
export function workQueueFamilies(s: Sources): FamilySpec[] {
  const all = () => queues(s);
  return [
    gauge('workqueue_depth', 'Items waiting in the work queue to be handed to a worker.', perSource(all, (m) => m.depth)),
    counter('workqueue_adds_total', 'Adds the work queue took in (an add of an item already waiting is not counted).', perSource(all, (m) => m.adds)),
    histogram('workqueue_queue_duration_seconds', 'Seconds an item waited in the work queue before a worker took it.', perHistogram(all, (m) => m.queueLatency)),
    histogram('workqueue_work_duration_seconds', 'Seconds a worker spent on an item, from taking it to done.', perHistogram(all, (m) => m.workDuration)),
    gauge(
      'workqueue_unfinished_work_seconds',
      'Seconds of work in progress that no work duration has recorded yet, summed over the items being processed; steady growth means a stuck worker.',
      perSource(all, (m) => m.unfinishedWorkSeconds),
    ),
    gauge(
      'workqueue_longest_running_processor_seconds',
      'Seconds the item processed longest so far has been in a worker.',
      perSource(all, (m) => m.longestRunningProcessorSeconds),
    ),
    counter('workqueue_retries_total', 'Rate-limited and delayed adds the work queue took in.', perSource(all, (m) => m.retries)),
  ];
}

/**
 * controller-runtime's controller metrics, label `controller`; a controller with `fairBy` (a multi-cluster one: by
 * cluster) adds `rxkube_controller_group_*{controller,group}`, its queue and reconciles per group (LT-9).
 */
export function controllerFamilies(s: Sources): FamilySpec[] {
  const all = () => each(s.controllers, 'controller');
  return [
    counter('controller_runtime_reconcile_total', 'Reconciles, by how they ended (result: success, error, requeue, requeue_after).', perKey(all, 'result', ({ succeeded: s, errors }) => ({ success: s.success, error: errors, requeue: s.requeue, requeue_after: s.requeue_after }))),
    counter('controller_runtime_reconcile_errors_total', 'Reconciles that failed, terminal failures included.', perSource(all, (m) => m.errors)),
    counter(
      'controller_runtime_terminal_reconcile_errors_total',
      'Reconciles that failed for good: not retried until the object changes.',
      perSource(all, (m) => m.terminalErrors),
    ),
    histogram('controller_runtime_reconcile_time_seconds', 'Seconds each reconcile took.', perHistogram(all, (m) => m.durationHistogram)),
    gauge('controller_runtime_active_workers', 'Workers running a reconcile now.', perSource(all, (m) => m.inFlight)),
    gauge('controller_runtime_max_concurrent_reconciles', 'How many reconciles the controller runs at once at most.', perSource(all, (m) => m.maxConcurrentReconciles)),
    counter(
      'rxkube_controller_read_your_writes_waits_total',
      "Reconciles that first waited for a cache to show this process's own writes.",
      perSource(all, (m) => m.readYourWritesWaits),
    ),
    counter(
      'rxkube_controller_read_your_writes_timeouts_total',
      'Read-your-writes waits that gave up after readYourWritesTimeoutMs and reconciled from the cache as it was.',
      perSource(all, (m) => m.readYourWritesTimeouts),
    ),
    gauge('rxkube_controller_group_depth', "Keys of a fairness group (a multi-cluster controller's cluster) waiting for a worker.", perGroup(s, (g) => g.depth)),
    gauge('rxkube_controller_group_active_workers', 'Workers running a reconcile of the group now.', perGroup(s, (g) => g.inFlight)),
    counter('rxkube_controller_group_reconciles_total', 'Reconciles of the group that ended, whatever the result.', perGroup(s, (g) => g.reconciles)),
    counter('rxkube_controller_group_reconcile_errors_total', 'Reconciles of the group that failed.', perGroup(s, (g) => g.errors)),
  ];
}

/** client-go's leader election gauge, label `name`. */
export function leaderElectionFamilies(s: Sources): FamilySpec[] {
  return [
    gauge('leader_election_master_status', '1 while this process leads the election, else 0.', function* () {
      for (const [name, leading] of s.leaders) yield { labels: { name }, value: leading() ? 1 : 0 };
    }),
  ];
}

/** The resourceVersion as a number when it is one (etcd's are); undefined otherwise, and the series is left out. */
function numericResourceVersion(rv: string): number | undefined {
  return /^[0-9]+$/.test(rv) ? Number(rv) : undefined;
}

/** rxkube's informer metrics, label `resource`. */
export function informerFamilies(s: Sources): FamilySpec[] {
  const all = () => each(s.informers, 'resource');
  const r = (m: InformerStatus) => m.counters;
  return [
    counter('rxkube_informer_lists_total', 'LIST cycles (paged or streaming), the first one included.', perSource(all, (m) => r(m).lists)),
    counter(
      'rxkube_informer_relists_total',
      'LIST cycles after the first, by what led to each (reason: expired, very-short-watch, watch-failed, list-failed).',
      perKey(all, 'reason', (m) => r(m).relistsByReason),
    ),
    counter('rxkube_informer_watches_total', 'WATCH requests opened, streaming lists included.', perSource(all, (m) => r(m).watches)),
    counter(
      'rxkube_informer_retries_total',
      'Failures followed by a new list or watch request, by kind of failure (reason).',
      perKey(all, 'reason', (m) => r(m).retriesByKind),
    ),
    counter('rxkube_informer_events_total', 'Watch events received (ADDED, MODIFIED, DELETED, BOOKMARK).', perSource(all, (m) => r(m).events)),
    counter('rxkube_informer_decode_errors_total', 'Watch lines or objects that could not be decoded.', perSource(all, (m) => r(m).decodeErrors)),
    counter('rxkube_informer_errors_total', 'Errors the informer met and reported (reflector, decode, transform, store and handler errors).', perSource(all, (m) => m.errors)),
    gauge('rxkube_informer_objects', 'Objects in the informer\'s cache.', perSource(all, (m) => m.objects)),
    gauge('rxkube_informer_last_sync_resource_version', 'The resourceVersion a watch would resume from, when numeric; absent while idle.', function* () {
      for (const [labels, m] of all()) {
        const rv = numericResourceVersion(m.lastSyncResourceVersion);
        if (rv !== undefined) yield { labels, value: rv };
      }
    }),
    gauge('rxkube_informer_synced', '1 once the first list of the current run is in the cache, else 0.', perSource(all, (m) => (m.synced ? 1 : 0))),
    gauge('rxkube_informer_pending_notifications', 'Notifications waiting in the buffers of the informer\'s handlers.', perSource(all, (m) => m.handlers.reduce((sum, h) => sum + h.depth, 0))),
  ];
}
