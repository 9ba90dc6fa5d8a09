import { concat, interval, map, of, startWith, takeUntil, type Observable, type SchedulerLike } from 'rxjs';

/** Observations of a duration, in seconds, in Prometheus histogram form. */
export interface DurationHistogram {
  /** How many durations were observed. */
  readonly count: number;
  /** Their sum, in seconds. */
  readonly sum: number;
  /** Cumulative counts: how many observations were at most `le` seconds, one per bucket bound, ascending (+Inf is `count`). */
  readonly buckets: readonly { readonly le: number; readonly count: number }[];
}

/**
 * A snapshot of a work queue's metrics, the ones client-go's work queues
 * export (the Prometheus names are in brackets). Durations are in seconds,
 * measured on the queue's scheduler clock, in client-go's buckets: ten-fold
 * steps from 10 ns to 1000 s.
 */
export interface WorkQueueMetrics {
  /** The queue's `name` option (the `name` label). */
  readonly name: string;
  /** Items added and not yet handed to a worker, counting an item re-added while it is processed [workqueue_depth]. */
  readonly depth: number;
  /** Adds that were not collapsed into an item already waiting [workqueue_adds_total]. */
  readonly adds: number;
  /** Delayed and rate-limited adds (`addAfter`, `addRateLimited`) [workqueue_retries_total]. */
  readonly retries: number;
  /** Time from an item's add to its hand-over to a worker [workqueue_queue_duration_seconds]; client-go's buckets, ten-fold steps from 10 ns to 1000 s. */
  readonly queueLatency: DurationHistogram;
  /** Time from hand-over to `done()` [workqueue_work_duration_seconds]. */
  readonly workDuration: DurationHistogram;
  /** Sum of how long every item being processed has been processed so far [workqueue_unfinished_work_seconds]. */
  readonly unfinishedWorkSeconds: number;
  /** How long the item processed longest so far has been processed [workqueue_longest_running_processor_seconds]. */
  readonly longestRunningProcessorSeconds: number;
  /** With `fairBy`: items waiting, per group, those re-added while processed included, so they sum to `depth` (a group with none is absent). @default undefined */
  readonly depthByGroup?: Readonly<Record<string, number>>;
}

// client-go's latency buckets: ten-fold steps from 10 ns to 1000 s.
const QUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000] as const;

/** Durations observed into fixed buckets, read as a {@link DurationHistogram} (internal). */
export class Histogram {
  // Upper bounds in seconds, ascending.
  readonly #bounds: readonly number[];
  // Per-bucket (not cumulative) counts; the last slot is +Inf.
  readonly #counts: number[];
  // Prometheus histograms carry the count and sum beside the buckets.
  #count = 0;
  #sum = 0;

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.#counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(seconds: number): void {
    this.#count++;
    this.#sum += seconds;
    let i = this.#bounds.findIndex((le) => seconds <= le);
    if (i === -1) i = this.#bounds.length;
    this.#counts[i] = (this.#counts[i] ?? 0) + 1;
  }

  snapshot(): DurationHistogram {
    let cumulative = 0;
    const buckets = this.#bounds.map((le, i) => ({ le, count: (cumulative += this.#counts[i] ?? 0) }));
    return { count: this.#count, sum: this.#sum, buckets };
  }
}

/** What a work queue records as items pass through it. */
export class QueueMetricsRecorder<T> {
  // The queue's name, repeated in every snapshot.
  readonly #name: string;
  // The queue's clock, so virtual time gives exact durations.
  readonly #now: () => number;
  // Counters only ever grow, as Prometheus counters do.
  #adds = 0;
  #retries = 0;
  // Durations observed so far, for the two histograms.
  readonly #queueLatency = new Histogram(QUEUE_BUCKETS);
  readonly #workDuration = new Histogram(QUEUE_BUCKETS);
  // When each waiting item was first added, for its queue latency.
  readonly #addTimes = new Map<T, number>();
  // When each item being processed was handed out, for work duration and unfinished work.
  readonly #startTimes = new Map<T, number>();

  constructor(name: string, now: () => number) {
    this.#name = name;
    this.#now = now;
  }

  add(item: T): void {
    this.#adds++;
    if (!this.#addTimes.has(item)) this.#addTimes.set(item, this.#now());
  }

  retry(): void {
    this.#retries++;
  }

  get(item: T): void {
    const now = this.#now();
    this.#startTimes.set(item, now);
    const added = this.#addTimes.get(item);
    if (added !== undefined) {
      this.#queueLatency.observe(seconds(now - added));
      this.#addTimes.delete(item);
    }
  }

  done(item: T): void {
    const started = this.#startTimes.get(item);
    if (started === undefined) return;
    this.#workDuration.observe(seconds(this.#now() - started));
    this.#startTimes.delete(item);
  }

  snapshot(depth: number): WorkQueueMetrics {
    const now = this.#now();
    let unfinished = 0;
    let longest = 0;
    for (const started of this.#startTimes.values()) {
      const age = seconds(now - started);
      unfinished += age;
      longest = Math.max(longest, age);
    }
    return {
      name: this.#name,
      depth,
      adds: this.#adds,
      retries: this.#retries,
      queueLatency: this.#queueLatency.snapshot(),
      workDuration: this.#workDuration.snapshot(),
      unfinishedWorkSeconds: unfinished,
      longestRunningProcessorSeconds: longest,
    };
  }
}

/** Milliseconds to seconds, never negative (a clock that stepped back measures 0). */
export function seconds(ms: number): number {
  return Math.max(0, ms) / 1000;
}

// client-go refreshes its unfinished-work gauges this often; metrics$ emits at the same pace.
const METRICS_PERIOD_MS = 500;

/**
 * A queue's `metrics$`: `read()` when subscribed, then every
 * `METRICS_PERIOD_MS` on `scheduler`, and once more when `closed` emits,
 * after which it completes.
 */
export function metricsEvery(scheduler: SchedulerLike, closed: Observable<void>, read: () => WorkQueueMetrics): Observable<WorkQueueMetrics> {
  return concat(interval(METRICS_PERIOD_MS, scheduler).pipe(startWith(0), takeUntil(closed)), of(0)).pipe(map(read));
}
