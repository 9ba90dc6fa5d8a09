import type { Metric } from 'prom-client';
import type { DurationHistogram } from '../workqueue/metrics.js';

/** Label names to values, in the order they are written; `le` is added last for histogram buckets. */
export type LabelSet = Readonly<Record<string, string>>;

/** One series of a counter or gauge, read at scrape time. */
export interface ValueReading {
  readonly labels: LabelSet;
  readonly value: number;
}

/** One series of a histogram, read at scrape time from buckets the library already keeps. */
export interface HistogramReading {
  readonly labels: LabelSet;
  readonly histogram: DurationHistogram;
}

/** A metric family: its name, help and type, and how to read its series now. */
export type FamilySpec =
  | { readonly name: string; readonly help: string; readonly type: 'counter' | 'gauge'; readonly read: () => Iterable<ValueReading> }
  | { readonly name: string; readonly help: string; readonly type: 'histogram'; readonly read: () => Iterable<HistogramReading> };

/** What prom-client's registry reads from a metric: the shape its own classes return from get(). */
interface Collected {
  name: string;
  help: string;
  type: string;
  aggregator: 'sum';
  values: { labels: LabelSet; value: number; metricName?: string }[];
}

/**
 * A metric family whose series are read when the registry is scraped, from
 * snapshots the library keeps anyway: nothing is recorded per event on
 * rxkube's side. prom-client's Counter, Gauge and Histogram hold their own
 * values and cannot be set from a snapshot (a histogram least of all: only
 * observe() fills its buckets), so this implements the contract prom-client's
 * registry reads instead (`name`, `help`, `type`, `get()`, `reset()`), the
 * same one its own classes fulfil.
 */
export class SnapshotMetric {
  // Not readonly: an OpenMetrics registry renames counters (drops `_total`) in place as it writes them.
  name: string;
  readonly help: string;
  readonly type: FamilySpec['type'];
  /** How prom-client's cluster aggregator combines workers: added up, as for its own counters and gauges. */
  readonly aggregator = 'sum' as const;
  // Reads the series now.
  readonly #spec: FamilySpec;

  constructor(spec: FamilySpec) {
    this.name = spec.name;
    this.help = spec.help;
    this.type = spec.type;
    this.#spec = spec;
  }

  /** The family's series now, as prom-client's registry reads them. */
  get(): Promise<Collected> {
    const values: Collected['values'] = [];
    const spec = this.#spec;
    if (spec.type === 'histogram') {
      for (const { labels, histogram } of spec.read()) {
        for (const b of histogram.buckets) values.push({ labels: { ...labels, le: formatBound(b.le) }, value: b.count, metricName: `${this.name}_bucket` });
        values.push({ labels: { ...labels, le: '+Inf' }, value: histogram.count, metricName: `${this.name}_bucket` });
        values.push({ labels, value: histogram.sum, metricName: `${this.name}_sum` });
        values.push({ labels, value: histogram.count, metricName: `${this.name}_count` });
      }
    } else {
      for (const { labels, value } of spec.read()) values.push({ labels, value });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** `registry.resetMetrics()` has nothing to clear: the values live in the controllers, queues and informers. */
  reset(): void {}

  /** This family, as the type prom-client's registry accepts (its types name only its own four classes). */
  asMetric(): Metric {
    return this as unknown as Metric;
  }
}

/**
 * A bucket bound as Go's Prometheus client writes it (`strconv.FormatFloat(v, 'g', -1, 64)`): `1e-08`, `0.0001`,
 * `1000`, `1e+06`. Dashboards written for Go controllers may select buckets by this exact string.
 */
export function formatBound(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  if (Number.isNaN(value)) return 'NaN';
  if (value === 0) return '0';
  const [mantissa = '0', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  return String(value);
}
