import { Histogram, seconds, type DurationHistogram, type WorkQueueMetrics } from '../workqueue/metrics.js';

/**
 * How a reconcile ended, as controller-runtime labels `controller_runtime_reconcile_total`:
 * `success` (nothing asked for), `requeue` (`{ requeueAfter: 0 }`), `requeue_after`
 * (`{ requeueAfter: ms > 0 }`), `error` (it threw, rejected or timed out, terminal errors included).
 *
 * ## Example
 * ```ts
 * import type { ReconcileResult } from 'rxkube';
 *
 * const failed = (r: ReconcileResult) => r === 'error';
 * ```
 */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * A snapshot of a controller's metrics, the ones controller-runtime exports
 * (the Prometheus names are in brackets, each with the label
 * `controller="<name>"`), with its work queue's beside them. Counters only
 * grow over the controller's life, across its runs.
 *
 * ## Example
 * ```ts
 * import type { ControllerMetrics } from 'rxkube/core';
 *
 * const errorRatio = (m: ControllerMetrics) => m.reconcileErrors / Math.max(1, m.reconcileTime.count);
 * ```
 */
export interface ControllerMetrics {
  /** The controller's name [label `controller`]. */
  readonly name: string;
  /** Reconciles by how they ended [controller_runtime_reconcile_total{result}]. */
  readonly reconcileTotal: Readonly<Record<ReconcileResult, number>>;
  /** Reconciles that failed, terminal ones included [controller_runtime_reconcile_errors_total]. */
  readonly reconcileErrors: number;
  /** Reconciles that failed for good, not retried until the object changes [controller_runtime_terminal_reconcile_errors_total]. */
  readonly terminalReconcileErrors: number;
  /** How long reconciles took, in seconds [controller_runtime_reconcile_time_seconds]. */
  readonly reconcileTime: DurationHistogram;
  /** Workers running a reconcile now [controller_runtime_active_workers]. */
  readonly activeWorkers: number;
  /** The `concurrency` option [controller_runtime_max_concurrent_reconciles]. */
  readonly maxConcurrentReconciles: number;
  /** The controller's work queue, named after the controller [workqueue_*{name}]; zeros while no run exists. */
  readonly queue: WorkQueueMetrics;
  /** Reconciles that first waited for a cache to show this process's writes [rxkube_controller_read_your_writes_waits_total]. */
  readonly readYourWritesWaits: number;
  /** Of those, waits that gave up after `readYourWritesTimeoutMs` [rxkube_controller_read_your_writes_timeouts_total]. */
  readonly readYourWritesTimeouts: number;
  /**
   * With `fairBy`: the queue and the reconciles per group (a cluster, a
   * tenant…) [rxkube_controller_group_*{group}]. A group is listed while it
   * has a key waiting or running, and from its first counted reconcile on,
   * its counters only growing, as Prometheus counters do; a multi-cluster
   * controller drops a cluster's when it leaves (docs/semantics.md LT-3, LT-14).
   * @default undefined (no `fairBy`)
   */
  readonly groups?: Readonly<
    Record<
      string,
      {
        /** Keys of the group waiting for a worker. */
        readonly depth: number;
        /** Reconciles of the group running now. */
        readonly activeWorkers: number;
        /** Reconciles of the group that ended, whatever the result. */
        readonly reconciles: number;
        /** Of those, the failures. */
        readonly errors: number;
      }
    >
  >;
}

// controller-runtime's reconcile_time_seconds buckets.
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7,
  8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
] as const;

/** What a controller records of its reconciles over its whole life (internal). */
export class ControllerMetricsRecorder {
  // Counters by result, as Prometheus counters: they only grow.
  readonly #total: Record<ReconcileResult, number> = { success: 0, error: 0, requeue: 0, requeue_after: 0 };
  #errors = 0;
  #terminal = 0;
  // Reconciles and failures per fairness group, when the controller has `fairBy`.
  readonly #byGroup = new Map<string, { reconciles: number; errors: number }>();
  // Durations of every reconcile, in controller-runtime's buckets.
  readonly #time = new Histogram(RECONCILE_BUCKETS);

  /** One reconcile ended with `result` after `durationMs`; `terminal` marks a failure not to be retried. */
  record(result: ReconcileResult, durationMs: number, terminal: boolean, group: string | undefined): void {
    this.#total[result]++;
    if (group !== undefined) {
      const counts = this.#byGroup.get(group) ?? { reconciles: 0, errors: 0 };
      counts.reconciles++;
      if (result === 'error') counts.errors++;
      this.#byGroup.set(group, counts);
    }
    if (result === 'error') this.#errors++;
    if (terminal) this.#terminal++;
    this.#time.observe(seconds(durationMs));
  }

  /** Drops the counts of a group that is gone for good (a cluster that left): its series end rather than pile up (LT-14). */
  forget(group: string): void {
    this.#byGroup.delete(group);
  }

  snapshot(
    name: string,
    activeWorkers: number,
    maxConcurrentReconciles: number,
    queue: WorkQueueMetrics,
    readYourWrites: { readonly waits: number; readonly timeouts: number },
    groups?: { readonly depth: Readonly<Record<string, number>>; readonly active: ReadonlyMap<string, number> },
  ): ControllerMetrics {
    const m: ControllerMetrics = {
      name,
      reconcileTotal: { ...this.#total },
      reconcileErrors: this.#errors,
      terminalReconcileErrors: this.#terminal,
      reconcileTime: this.#time.snapshot(),
      activeWorkers,
      maxConcurrentReconciles,
      queue,
      readYourWritesWaits: readYourWrites.waits,
      readYourWritesTimeouts: readYourWrites.timeouts,
    };
    if (groups === undefined) return m;
    const names = new Set([...this.#byGroup.keys(), ...Object.keys(groups.depth), ...groups.active.keys()]);
    const byGroup: Record<string, NonNullable<ControllerMetrics['groups']>[string]> = {};
    for (const g of [...names].sort()) {
      const counts = this.#byGroup.get(g);
      byGroup[g] = { depth: groups.depth[g] ?? 0, activeWorkers: groups.active.get(g) ?? 0, reconciles: counts?.reconciles ?? 0, errors: counts?.errors ?? 0 };
    }
    return { ...m, groups: byGroup };
  }
}

/** The result label of a successful reconcile that asked for `requeueAfter`. */
export function successResult(requeueAfter: number | undefined): ReconcileResult {
  if (requeueAfter === undefined) return 'success';
  return requeueAfter > 0 ? 'requeue_after' : 'requeue';
}
