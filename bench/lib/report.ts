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
