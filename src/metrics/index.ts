// rxkube's metrics for Prometheus, under the names Go controllers use. A separate entry so that prom-client,
// an optional peer dependency, is loaded only by those who export metrics.
import '../nodeVersion.js';

export { prometheusMetrics, type PrometheusMetrics, type PrometheusMetricsOptions } from './prometheusMetrics.js';
