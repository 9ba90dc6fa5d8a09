import type { WebhookServerMetrics } from '../manager/webhookMetrics.js';
import type { FamilySpec, HistogramReading, ValueReading } from './snapshotMetric.js';

/** The webhook server exported, read at each scrape (undefined when it has none or its read threw). */
export type WebhookSource = () => WebhookServerMetrics | undefined;

function* paths(read: WebhookSource): Generator<WebhookServerMetrics['webhooks'][number]> {
  yield* read()?.webhooks ?? [];
}

/**
 * controller-runtime's webhook metrics (its webhook/internal/metrics: `controller_runtime_webhook_*`, label
 * `webhook` the path), and rxkube's count of handler failures beside them, which controller-runtime has none of.
 */
export function webhookFamilies(read: WebhookSource): FamilySpec[] {
  return [
    {
      name: 'controller_runtime_webhook_requests_total',
      help: 'Total number of admission requests by HTTP status code.',
      type: 'counter',
      *read(): Generator<ValueReading> {
        for (const w of paths(read)) for (const [code, value] of w.requests) yield { labels: { webhook: w.path, code: String(code) }, value };
      },
    },
    {
      name: 'controller_runtime_webhook_latency_seconds',
      help: 'Histogram of the latency of processing admission requests',
      type: 'histogram',
      *read(): Generator<HistogramReading> {
        for (const w of paths(read)) yield { labels: { webhook: w.path }, histogram: w.latency };
      },
    },
    {
      name: 'controller_runtime_webhook_requests_in_flight',
      help: 'Current number of admission requests being served.',
      type: 'gauge',
      *read(): Generator<ValueReading> {
        for (const w of paths(read)) yield { labels: { webhook: w.path }, value: w.inFlight };
      },
    },
    {
      name: 'rxkube_webhook_failures_total',
      help: 'Admission and conversion requests whose handler threw, rejected or overran its deadline, by what failed.',
      type: 'counter',
      *read(): Generator<ValueReading> {
        for (const w of paths(read)) for (const [failure, value] of w.failures) yield { labels: { webhook: w.path, failure }, value };
      },
    },
  ];
}
