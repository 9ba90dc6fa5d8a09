import type { WebhookServerMetrics } from '../manager/webhookMetrics.js';
import { counter, gauge, histogram } from './families.js';
import type { FamilySpec } from './snapshotMetric.js';

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
    counter('controller_runtime_webhook_requests_total', 'Total number of admission requests by HTTP status code.', function* () {
      for (const w of paths(read)) for (const [code, value] of w.requests) yield { labels: { webhook: w.path, code: String(code) }, value };
    }),
    histogram('controller_runtime_webhook_latency_seconds', 'Histogram of the latency of processing admission requests', function* () {
      for (const w of paths(read)) yield { labels: { webhook: w.path }, histogram: w.latency };
    }),
    gauge('controller_runtime_webhook_requests_in_flight', 'Current number of admission requests being served.', function* () {
      for (const w of paths(read)) yield { labels: { webhook: w.path }, value: w.inFlight };
    }),
    counter(
      'rxkube_webhook_failures_total',
      'Admission and conversion requests whose handler threw, rejected or overran its deadline, by what failed.',
      function* () {
        for (const w of paths(read)) for (const [failure, value] of w.failures) yield { labels: { webhook: w.path, failure }, value };
      },
    ),
  ];
}
