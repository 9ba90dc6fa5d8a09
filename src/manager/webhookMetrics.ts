import { Histogram, type DurationHistogram } from '../workqueue/metrics.js';

/**
 * controller-runtime's buckets for `controller_runtime_webhook_latency_seconds`: Prometheus's default ones
 * (5 ms to 10 s), which span the API server's webhook timeouts (1 to 30 s, 10 s by default).
 */
export const WEBHOOK_LATENCY_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * A snapshot of the webhook server's metrics: one entry per webhook it
 * serves, in the order given. Requests to other paths are not counted under
 * any webhook: a client choosing paths cannot add series.
 */
export interface WebhookServerMetrics {
  /** One webhook's series each. */
  readonly webhooks: readonly {
    /** The webhook's path: the `webhook` label. */
    readonly path: string;
    /** Requests answered, by HTTP status code [controller_runtime_webhook_requests_total{code}]. */
    readonly requests: ReadonlyMap<number, number>;
    /** Time from the request's headers to the end of its answer, in seconds [controller_runtime_webhook_latency_seconds]. */
    readonly latency: DurationHistogram;
    /** Requests being answered now [controller_runtime_webhook_requests_in_flight]. */
    readonly inFlight: number;
    /** Answers that report a handler failure, by the answer's `failure` ('threw', 'timeout', …) [rxkube_webhook_failures_total]. */
    readonly failures: ReadonlyMap<string, number>;
  }[];
}

// Distinct `failure` values kept per webhook; more are counted under 'other', so a handler's text cannot grow the series.
const MAX_FAILURE_KINDS = 16;

/** One webhook path's series, as they are counted. */
interface Series {
  // Answers by HTTP status.
  readonly requests: Map<number, number>;
  // Seconds from headers to the end of the answer.
  readonly latency: Histogram;
  // Requests between started() and ended().
  inFlight: number;
  // Answers that report a handler failure, by its word.
  readonly failures: Map<string, number>;
}

/** What the webhook server records per webhook path (internal). */
export class WebhookRecorder {
  // Per served path, in the order given: the only label values a snapshot has.
  readonly #series: Map<string, Series>;

  constructor(paths: readonly string[]) {
    this.#series = new Map(paths.map((p) => [p, { requests: new Map(), latency: new Histogram(WEBHOOK_LATENCY_BUCKETS), inFlight: 0, failures: new Map() }]));
  }

  /** A request to `path` started being answered. */
  started(path: string): void {
    const s = this.#series.get(path);
    if (s !== undefined) s.inFlight++;
  }

  /** The request to `path` ended with `status` after `seconds`, its answer naming `failure` if the handler failed. */
  ended(path: string, status: number, seconds: number, failure: string | undefined): void {
    const s = this.#series.get(path);
    if (s === undefined) return;
    s.inFlight = Math.max(0, s.inFlight - 1);
    s.requests.set(status, (s.requests.get(status) ?? 0) + 1);
    s.latency.observe(seconds);
    if (failure !== undefined) {
      const kind = s.failures.has(failure) || s.failures.size < MAX_FAILURE_KINDS ? failure : 'other';
      s.failures.set(kind, (s.failures.get(kind) ?? 0) + 1);
    }
  }

  snapshot(): WebhookServerMetrics {
    return {
      webhooks: [...this.#series].map(([path, s]) => ({
        path,
        requests: new Map(s.requests),
        latency: s.latency.snapshot(),
        inFlight: s.inFlight,
        failures: new Map(s.failures),
      })),
    };
  }
}
