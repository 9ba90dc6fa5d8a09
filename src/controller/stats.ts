import { Histogram, seconds } from '../workqueue/metrics.js';
import type { ControllerStatus } from './status.js';

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

// Percentiles are over this many recent reconciles: enough for a stable p99, small enough to keep sorted as they come.
const WINDOW = 512;

// controller-runtime's reconcile_time_seconds buckets.
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7,
  8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
] as const;

/** What the controller and its run read now, beside the counters kept here. */
export type RunReading = Pick<
  ControllerStatus,
  'state' | 'queueDepth' | 'inFlight' | 'stuck' | 'maxConcurrentReconciles' | 'queue' | 'readYourWritesWaits' | 'readYourWritesTimeouts'
>;

/** The controller's counters and durations, across all of its runs: each reconcile is recorded once, here. */
export class ControllerStats {
  // Lifetime counters, as Prometheus counters: they only grow.
  reconciles = 0;
  errors = 0;
  requeues = 0;
  gone = 0;
  lastError: Error | undefined;
  #terminalErrors = 0;
  readonly #succeeded: Record<Exclude<ReconcileResult, 'error'>, number> = { success: 0, requeue: 0, requeue_after: 0 };
  // Reconciles and failures per fairness group, when the controller has `fairBy`.
  readonly #byGroup = new Map<string, { reconciles: number; errors: number }>();
  // Every duration, in controller-runtime's buckets.
  readonly #histogram = new Histogram(RECONCILE_BUCKETS);
  // The last WINDOW durations in a ring, so memory stays fixed however long the controller runs.
  readonly #durations: number[] = [];
  #next = 0;
  // The same durations kept sorted, so a status (published several times per reconcile) reads percentiles without sorting.
  readonly #sorted: number[] = [];

  /** One reconcile ended with `result` after `durationMs`; `terminal` marks a failure not to be retried. */
  record(result: ReconcileResult, durationMs: number, terminal: boolean, group: string | undefined): void {
    this.reconciles++;
    if (result === 'error') this.errors++;
    else this.#succeeded[result]++;
    if (terminal) this.#terminalErrors++;
    if (group !== undefined) {
      const counts = this.#byGroup.get(group) ?? { reconciles: 0, errors: 0 };
      counts.reconciles++;
      if (result === 'error') counts.errors++;
      this.#byGroup.set(group, counts);
    }
    this.#histogram.observe(seconds(durationMs));
    if (this.#durations.length < WINDOW) this.#durations.push(durationMs);
    else {
      this.#sorted.splice(lowerBound(this.#sorted, this.#durations[this.#next]!), 1);
      this.#durations[this.#next] = durationMs;
    }
    this.#sorted.splice(lowerBound(this.#sorted, durationMs), 0, durationMs);
    this.#next = (this.#next + 1) % WINDOW;
  }

  /** Drops the counts of a group that is gone for good (a cluster that left): its series end rather than pile up (LT-14). */
  forget(group: string): void {
    this.#byGroup.delete(group);
  }

  /** The status, with `inFlightByGroup` (reconciles running per group) when the controller has `fairBy`. */
  snapshot(run: RunReading, inFlightByGroup?: ReadonlyMap<string, number>): ControllerStatus {
    const sorted = this.#sorted;
    const status: ControllerStatus = {
      ...run,
      reconciles: this.reconciles,
      errors: this.errors,
      requeues: this.requeues,
      gone: this.gone,
      durationP50Ms: percentile(sorted, 0.5),
      durationP99Ms: percentile(sorted, 0.99),
      lastError: this.lastError,
      succeeded: { ...this.#succeeded },
      terminalErrors: this.#terminalErrors,
      durationHistogram: this.#histogram.snapshot(),
    };
    if (inFlightByGroup === undefined) return status;
    const depth = run.queue.depthByGroup ?? {};
    const groups: Record<string, NonNullable<ControllerStatus['groups']>[string]> = {};
    for (const g of [...new Set([...this.#byGroup.keys(), ...Object.keys(depth), ...inFlightByGroup.keys()])].sort()) {
      const counts = this.#byGroup.get(g);
      groups[g] = { depth: depth[g] ?? 0, inFlight: inFlightByGroup.get(g) ?? 0, reconciles: counts?.reconciles ?? 0, errors: counts?.errors ?? 0 };
    }
    return { ...status, groups };
  }
}

/** The result label of a successful reconcile that asked for `requeueAfter`. */
export function successResult(requeueAfter: number | undefined): Exclude<ReconcileResult, 'error'> {
  if (requeueAfter === undefined) return 'success';
  return requeueAfter > 0 ? 'requeue_after' : 'requeue';
}

/** The first index of `sorted` whose value is not below `value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Nearest-rank percentile of sorted values; undefined when there are none. */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1];
}
