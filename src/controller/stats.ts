import type { ControllerStatus } from './types.js';

// Percentiles are over this many recent reconciles: enough for a stable p99, small enough to sort on every snapshot.
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

  recordDuration(ms: number): void {
    if (this.#durations.length < WINDOW) this.#durations.push(ms);
    else this.#durations[this.#next] = ms;
    this.#next = (this.#next + 1) % WINDOW;
  }

  snapshot(state: ControllerStatus['state'], queueDepth: number, inFlight: number, stuck: readonly string[]): ControllerStatus {
    const sorted = [...this.#durations].sort((a, b) => a - b);
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

/** Nearest-rank percentile of sorted values; undefined when there are none. */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1];
}
