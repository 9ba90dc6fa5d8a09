// Result rows, the machine description and the printed table.

import os from 'node:os';
import type { Summary } from './stats.js';

/** One measured figure. `p50`/`p99` describe the distribution the mean came from (per run, per op or per event). */
export interface Row {
  readonly bench: string;
  readonly case: string;
  readonly metric: string;
  readonly unit: string;
  readonly mean: number;
  readonly p50?: number;
  readonly p99?: number;
  /** 95 % relative margin of error of the mean, percent. */
  readonly rme?: number;
  /** How many samples the figures come from (runs, batches or events). */
  readonly n: number;
  readonly note?: string;
  /** The per-repeat values of a side-by-side row (then `mean` is their median), in repeat order. */
  readonly values?: readonly number[];
  /** Whether lower or higher is better, for a side-by-side row. */
  readonly better?: 'lower' | 'higher';
}

/** Builds a row from a summary of repeated measurements. */
export function row(bench: string, kase: string, metric: string, unit: string, s: Summary, note?: string): Row {
  return { bench, case: kase, metric, unit, mean: s.mean, p50: s.p50, p99: s.p99, rme: s.rme, n: s.n, ...(note === undefined ? {} : { note }) };
}

/** What the numbers were measured on. */
export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly platform: string;
  readonly totalMemGiB: number;
  readonly loadBefore: readonly number[];
  loadAfter: readonly number[];
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpus: os.availableParallelism(),
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    totalMemGiB: os.totalmem() / 2 ** 30,
    loadBefore: os.loadavg(),
    loadAfter: [],
  };
}

/** A number with about three significant digits and thousands separators. */
export function fmt(v: number | undefined): string {
  if (v === undefined || Number.isNaN(v)) return '—';
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  return v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

function pct(v: number | undefined): string {
  return v === undefined || Number.isNaN(v) ? '—' : `±${v.toFixed(1)}%`;
}

/** The rows as an aligned text table. */
export function table(rows: readonly Row[]): string {
  const head = ['bench', 'case', 'metric', 'mean', 'p50', 'p99', 'rme', 'n', 'unit', 'note'];
  const body = rows.map((r) => [r.bench, r.case, r.metric, fmt(r.mean), fmt(r.p50), fmt(r.p99), pct(r.rme), String(r.n), r.unit, r.note ?? '']);
  const all = [head, ...body];
  const widths = head.map((_, c) => Math.max(...all.map((line) => (line[c] ?? '').length)));
  const numeric = new Set([3, 4, 5, 6, 7]);
  const render = (line: readonly string[]): string =>
    line
      .map((cell, c) => (numeric.has(c) ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [render(head), rule, ...body.map(render)].join('\n');
}

export function describeMachine(m: Machine): string {
  const load = (l: readonly number[]): string => l.map((x) => x.toFixed(2)).join(' ');
  return [
    `machine: ${m.cpus} cores (${m.cpuModel}), ${m.totalMemGiB.toFixed(1)} GiB, ${m.platform}, node ${m.node}`,
    `load average (1/5/15 min) before: ${load(m.loadBefore)}  after: ${load(m.loadAfter)}`,
  ].join('\n');
}

function medianOf(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * Median of the per-repeat ratios a/b (repeats ran interleaved, so each pair shares the machine's state), with
 * their [min–max] when there are several.
 */
function ratio(a: Row | undefined, b: Row | undefined): string {
  if (a?.values === undefined || b?.values === undefined) return '';
  const n = Math.min(a.values.length, b.values.length);
  const rs: number[] = [];
  for (let i = 0; i < n; i++) rs.push((a.values[i] as number) / (b.values[i] as number));
  const finite = rs.filter(Number.isFinite);
  const m = medianOf(finite);
  if (!Number.isFinite(m)) return '';
  return finite.length > 1 ? `${m.toFixed(2)}× [${Math.min(...finite).toFixed(2)}–${Math.max(...finite).toFixed(2)}]` : `${m.toFixed(2)}×`;
}

/**
 * A side-by-side row: one case's per-round values of one metric (then `mean` is their median), for
 * {@link sideBySide}. Rounds of the cases compared must be in the same order, as each ratio pairs round i with round i.
 */
export function sideRow(bench: string, kase: string, metric: string, unit: string, values: readonly number[], better: 'lower' | 'higher' = 'lower'): Row {
  return { bench, case: kase, metric, unit, mean: medianOf(values), values, n: values.length, better };
}

/** The case of rxkube run with the runner image's Node options (compare's `rxkube-image` client). */
export const IMAGE_CASE = 'rxkube, image flags';

/**
 * Side-by-side rows (those with `values`) as one table: a line per workload
 * and metric, a column per client with `median [min–max]` over the repeats,
 * then rxkube's ratios to the floor, to client-node and to client-go (and to
 * the baseline build, when one ran, and rxkube under the runner image's Node
 * options to client-go, when that ran).
 */
export function sideBySide(rows: readonly Row[], allClients: readonly string[]): string {
  const keyed = rows.filter((r) => r.values !== undefined);
  // A client no selected workload ran (client-go without BENCH_WORKLOADS naming a list, the baseline) gets no column.
  const clients = allClients.filter((c) => keyed.some((r) => r.case === c));
  const lines: string[][] = [];
  const seen = new Set<string>();
  const withBaseline = keyed.some((r) => r.case === 'rxkube baseline');
  const withImage = keyed.some((r) => r.case === IMAGE_CASE);
  for (const r of keyed) {
    const id = `${r.bench}\u0000${r.metric}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const of = (c: string): Row | undefined => keyed.find((x) => x.bench === r.bench && x.metric === r.metric && x.case === c);
    const cell = (c: string): string => {
      const x = of(c);
      if (x?.values === undefined) return '';
      const lo = Math.min(...x.values);
      const hi = Math.max(...x.values);
      return x.values.length > 1 ? `${fmt(x.mean)} [${fmt(lo)}–${fmt(hi)}]` : fmt(x.mean);
    };
    const rx = of('rxkube');
    lines.push([
      r.bench,
      `${r.metric} (${r.unit}${r.better === undefined ? '' : `, ${r.better} is better`})`,
      ...clients.map(cell),
      ratio(rx, of('floor')),
      ratio(of('rxkube keep mF'), of('floor')),
      ratio(rx, of('client-node')),
      ratio(rx, of('client-go')),
      ...(withBaseline ? [ratio(rx, of('rxkube baseline'))] : []),
      ...(withImage ? [ratio(of(IMAGE_CASE), of('client-go'))] : []),
    ]);
  }
  const fullHead = ['workload', 'metric', ...clients, 'rxkube / floor', 'keep mF / floor', 'rxkube / client-node', 'rxkube / client-go', ...(withBaseline ? ['rxkube / baseline'] : []), ...(withImage ? ['image flags / client-go'] : [])];
  // A ratio column no line fills (no floor or client-node ran: the before/after benchmarks alone) is left out.
  const kept = fullHead.map((_, c) => c < 2 + clients.length || lines.some((line) => (line[c] ?? '') !== ''));
  const head = fullHead.filter((_, c) => kept[c]);
  const all = [head, ...lines.map((line) => line.filter((_, c) => kept[c]))];
  const widths = head.map((_, c) => Math.max(...all.map((line) => (line[c] ?? '').length)));
  const render = (line: readonly string[]): string =>
    line
      .map((cell, c) => (c < 2 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
      .join('  ')
      .trimEnd();
  return all.map(render).toSpliced(1, 0, widths.map((w) => '-'.repeat(w)).join('  ')).join('\n');
}
