// Summary statistics for repeated measurements that are too large for
// tinybench's per-iteration loop (a 100k-object LIST, a whole sync).

/** Two-sided 95 % Student t quantiles by degrees of freedom, for small repeat counts. */
const T95: readonly number[] = [
  Number.NaN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12,
  2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** Mean, spread and percentiles of a sample. */
export interface Summary {
  readonly n: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  readonly p50: number;
  readonly p99: number;
  /** Relative margin of error of the mean at 95 % confidence, in percent; NaN for n < 2. */
  readonly rme: number;
}

/** Percentile `p` (0..1) of sorted values, by linear interpolation. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const pos = (n - 1) * p;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

/**
 * Summarises a sample.
 *
 * @param values The measurements.
 * @returns Mean, min, max, p50, p99 and the 95 % relative margin of error.
 */
export function summarize(values: ArrayLike<number>): Summary {
  const n = values.length;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i] as number;
  const mean = n === 0 ? Number.NaN : sum / n;
  let sq = 0;
  for (let i = 0; i < n; i++) sq += ((sorted[i] as number) - mean) ** 2;
  const sd = n > 1 ? Math.sqrt(sq / (n - 1)) : Number.NaN;
  const t = n - 1 < T95.length ? (T95[n - 1] as number) : 1.96;
  const rme = n > 1 && mean !== 0 ? ((t * sd) / Math.sqrt(n) / Math.abs(mean)) * 100 : Number.NaN;
  return {
    n,
    mean,
    min: n === 0 ? Number.NaN : (sorted[0] as number),
    max: n === 0 ? Number.NaN : (sorted[n - 1] as number),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    rme,
  };
}
