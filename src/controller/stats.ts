import type { ControllerStatus } from './types.js';

// Percentiles are over this many recent reconciles: enough for a stable p99, small enough to keep sorted as they come.
const WINDOW = 512;

/** The controller's counters and recent durations, across all of its runs. */
export class ControllerStats {
  // Lifetime counters, as Prometheus counters: they only grow.
  reconciles = 0;
  errors = 0;
  requeues = 0;
  gone = 0;
  lastError: Error | undefined;
  // The last WINDOW durations in a ring, so memory stays fixed however long the controller runs.
  readonly #durations: number[] = [];
  #next = 0;
  // The same durations kept sorted, so a status (published several times per reconcile) reads percentiles without sorting.
  readonly #sorted: number[] = [];

  recordDuration(ms: number): void {
    if (this.#durations.length < WINDOW) this.#durations.push(ms);
    else {
      this.#sorted.splice(lowerBound(this.#sorted, this.#durations[this.#next]!), 1);
      this.#durations[this.#next] = ms;
    }
    this.#sorted.splice(lowerBound(this.#sorted, ms), 0, ms);
    this.#next = (this.#next + 1) % WINDOW;
  }

  snapshot(state: ControllerStatus['state'], queueDepth: number, inFlight: number, stuck: readonly string[]): ControllerStatus {
    const sorted = this.#sorted;
    return {
      state,
      queueDepth,
      inFlight,
      reconciles: this.reconciles,
      errors: this.errors,
      requeues: this.requeues,
      gone: this.gone,
      durationP50Ms: percentile(sorted, 0.5),
      durationP99Ms: percentile(sorted, 0.99),
      lastError: this.lastError,
      stuck,
    };
  }
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
