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

/** What the webhook server records per webhook path (internal). */
export class WebhookRecorder {
  // The served paths, in the order given: the only label values a snapshot has.
  readonly #paths: readonly string[];
  // Per path: answers by HTTP status.
  readonly #requests = new Map<string, Map<number, number>>();
  // Per path: seconds from headers to the end of the answer.
  readonly #latency = new Map<string, Histogram>();
  // Per path: requests between started() and ended().
  readonly #inFlight = new Map<string, number>();
  // Per path: answers that report a handler failure, by its word.
  readonly #failures = new Map<string, Map<string, number>>();

  constructor(paths: readonly string[]) {
    this.#paths = paths;
    for (const p of paths) {
      this.#requests.set(p, new Map());
      this.#latency.set(p, new Histogram(WEBHOOK_LATENCY_BUCKETS));
      this.#inFlight.set(p, 0);
      this.#failures.set(p, new Map());
    }
  }

  /** A request to `path` started being answered. */
  started(path: string): void {
    this.#inFlight.set(path, (this.#inFlight.get(path) ?? 0) + 1);
  }

  /** The request to `path` ended with `status` after `seconds`, its answer naming `failure` if the handler failed. */
  ended(path: string, status: number, seconds: number, failure: string | undefined): void {
    this.#inFlight.set(path, Math.max(0, (this.#inFlight.get(path) ?? 0) - 1));
    const requests = this.#requests.get(path);
    requests?.set(status, (requests.get(status) ?? 0) + 1);
    this.#latency.get(path)?.observe(seconds);
    const failures = this.#failures.get(path);
    if (failures !== undefined && failure !== undefined) {
      const kind = failures.has(failure) || failures.size < MAX_FAILURE_KINDS ? failure : 'other';
      failures.set(kind, (failures.get(kind) ?? 0) + 1);
    }
  }

  snapshot(): WebhookServerMetrics {
    return {
      webhooks: this.#paths.map((path) => ({
        path,
        requests: new Map(this.#requests.get(path)),
        latency: this.#latency.get(path)?.snapshot() ?? { count: 0, sum: 0, buckets: [] },
        inFlight: this.#inFlight.get(path) ?? 0,
        failures: new Map(this.#failures.get(path)),
      })),
    };
  }
}
