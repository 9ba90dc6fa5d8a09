import type { DurationHistogram, WorkQueueMetrics } from '../workqueue/metrics.js';

/**
 * What a controller is doing and has done, as emitted on `status$`: the
 * one shape of its state, its counters and the metrics controller-runtime
 * exports (their Prometheus names in brackets, label `controller`).
 * Counters cover the controller's whole life, across its runs; the
 * percentiles are over the last 512 reconciles.
 *
 * ## Example
 * ```ts
 * import type { ControllerStatus } from 'rxkube/core';
 *
 * const show = (s: ControllerStatus) => `${s.state}: ${s.queueDepth} queued, ${s.inFlight} running, p99 ${s.durationP99Ms} ms`;
 * ```
 */
export interface ControllerStatus {
  /**
   * `idle` before the first subscriber and after the last one left,
   * `waitingForSync` until every source synced, `running`, `draining`
   * while in-flight reconciles finish at shutdown, `stopped` after
   * `shutdown()` or the signal, `failed` after a source failed for good.
   */
  readonly state: 'idle' | 'waitingForSync' | 'running' | 'draining' | 'stopped' | 'failed';
  /** Keys waiting for a worker. */
  readonly queueDepth: number;
  /** Reconciles running now. */
  readonly inFlight: number;
  /** Reconciles finished, failed ones included. */
  readonly reconciles: number;
  /** Reconciles that failed. */
  readonly errors: number;
  /** Requeues asked for, by actions and by the error policy. */
  readonly requeues: number;
  /** Keys skipped because their object was gone. */
  readonly gone: number;
  /** Median reconcile duration in ms, over the last 512; undefined before any. */
  readonly durationP50Ms: number | undefined;
  /** 99th percentile of the same. */
  readonly durationP99Ms: number | undefined;
  /** The last reconcile failure or controller error. */
  readonly lastError: Error | undefined;
  /**
   * Keys whose reconcile has run longer than `reconcileTimeoutMs` and has
   * not returned yet (a stuck worker: the key waits for it); empty when none
   * or without a timeout.
   */
  readonly stuck: readonly string[];
  /** Reconciles that succeeded, by what they asked for [controller_runtime_reconcile_total{result}; `result="error"` is `errors`]. */
  readonly succeeded: Readonly<Record<'success' | 'requeue' | 'requeue_after', number>>;
  /** Of `errors`, failures for good, not retried until the object changes [controller_runtime_terminal_reconcile_errors_total]. */
  readonly terminalErrors: number;
  /** Every reconcile's duration, in seconds, in controller-runtime's buckets [controller_runtime_reconcile_time_seconds]. */
  readonly durationHistogram: DurationHistogram;
  /** The `concurrency` option [controller_runtime_max_concurrent_reconciles]. */
  readonly maxConcurrentReconciles: number;
  /** The controller's work queue, named after the controller [workqueue_*{name}]; zeros before the first run. */
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
        readonly inFlight: number;
        /** Reconciles of the group that ended, whatever the result. */
        readonly reconciles: number;
        /** Of those, the failures. */
        readonly errors: number;
      }
    >
  >;
}
