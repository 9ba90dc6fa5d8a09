import { CHAOS, STALL_DETECTION_MS } from './config.js';
import { FAULT_KINDS } from './faults.js';
import type { SeedResult } from './seed.js';

/** The command that replays one seed. */
export function replayCommand(seed: number): string {
  return `npm run chaos -- --seed ${seed}`;
}

/** The p-th percentile (0–100) of sorted values, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Convergence target of a fault kind: the target, plus the stall-detection time for a stall. */
export function targetMs(stall: boolean): number {
  return stall ? STALL_DETECTION_MS + CHAOS.targetMs : CHAOS.targetMs;
}

interface Row {
  readonly name: string;
  readonly times: number[];
  /** The seed of the slowest convergence, to replay it. */
  slowest: { seed: number; ms: number } | undefined;
  notConverged: number;
  readonly target: number;
}

function ms(v: number): string {
  return Number.isNaN(v) ? '—' : `${Math.round(v)}`;
}

function table(rows: readonly Row[]): string[] {
  const header = ['fault (measured alone)', 'n', 'p50 ms', 'p99 ms', 'max ms', 'target ms', 'over target', 'not converged', 'slowest seed'];
  const lines = rows.map((r) => {
    const sorted = [...r.times].sort((a, b) => a - b);
    const over = sorted.filter((t) => t > r.target).length;
    return [r.name, String(sorted.length + r.notConverged), ms(percentile(sorted, 50)), ms(percentile(sorted, 99)), ms(sorted.at(-1) ?? Number.NaN), String(r.target), String(over), String(r.notConverged), r.slowest === undefined ? '—' : String(r.slowest.seed)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const fmt = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [fmt(header), ...lines.map(fmt)];
}

/** The convergence table per fault kind, the random phase's distribution, the error counts and the failing seeds. */
export function summarize(results: readonly SeedResult[]): string {
  const byKind = new Map<string, Row>();
  for (const k of FAULT_KINDS) byKind.set(k.name, { name: k.name, times: [], slowest: undefined, notConverged: 0, target: targetMs(k.stall) });
  const mixed: Row = { name: 'random phase (last fault → converged)', times: [], slowest: undefined, notConverged: 0, target: targetMs(true) };
  const record = (row: Row, seed: number, ms: number | undefined): void => {
    if (ms === undefined) {
      row.notConverged++;
      return;
    }
    row.times.push(ms);
    if (row.slowest === undefined || ms > row.slowest.ms) row.slowest = { seed, ms };
  };
  const injected: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let untaken = 0;
  let ops = 0;
  let dropped = 0;
  let relists = 0;
  let watches = 0;
  for (const r of results) {
    const row = byKind.get(r.probe.kind);
    if (row !== undefined && r.probe.taken) record(row, r.seed, r.probe.convergedMs);
    record(mixed, r.seed, r.mixed.convergedMs);
    for (const [k, n] of Object.entries(r.faults)) injected[k] = (injected[k] ?? 0) + n;
    for (const [k, n] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + n;
    untaken += r.untaken;
    ops += r.ops;
    dropped += r.dropped;
    relists += r.relists;
    watches += r.watches;
  }
  const failing = results.filter((r) => r.failures.length > 0);
  const durations = results.map((r) => r.durationMs).sort((a, b) => a - b);
  const lines = [
    `${results.length} seeds, ${ops} writes, ${Object.values(injected).reduce((a, b) => a + b, 0)} faults caused (${untaken} armed but never taken), ${relists} relists, ${watches} watches, ${dropped} notifications dropped by dropOldest buffers (all reported)`,
    `seed duration ms: p50 ${ms(percentile(durations, 50))}, p99 ${ms(percentile(durations, 99))}, max ${ms(durations.at(-1) ?? Number.NaN)}`,
    `convergence (target ${CHAOS.targetMs} ms after the fault; ${STALL_DETECTION_MS} + ${CHAOS.targetMs} ms for stalls; a seed fails past ${CHAOS.ciBoundMs} ms):`,
    ...table([...byKind.values(), mixed]).map((l) => `  ${l}`),
    `faults caused: ${Object.entries(injected).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `errors reported on errors$: ${Object.entries(errors).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`,
    failing.length === 0 ? 'no failing seed' : `${failing.length} failing seeds:`,
    ...failing.map((r) => `  seed ${r.seed} (probe ${r.probe.kind}): ${r.failures[0] ?? ''}${r.failures.length > 1 ? ` (+${r.failures.length - 1} more)` : ''}\n    replay: ${replayCommand(r.seed)}`),
  ];
  return lines.join('\n');
}
