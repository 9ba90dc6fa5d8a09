// What every benchmark gets from the runner, and the environment knobs.

import type { Row } from './report.js';

/** Sizes, repeat count and logging, shared by every benchmark. */
export interface Context {
  /** BENCH_SCALE: multiplies every default size (0.1 for a quick run). */
  readonly scale: number;
  /** BENCH_REPEATS: how many times each large measurement is repeated. */
  readonly repeats: number;
  /** `n * scale`, rounded, at least `min`. */
  scaled(n: number, min?: number): number;
  /** Progress line on stderr (the table goes to stdout). */
  log(message: string): void;
}

/** One benchmark file's entry point. */
export interface Benchmark {
  readonly name: string;
  readonly description: string;
  run(ctx: Context): Promise<Row[]>;
}

/**
 * A numeric environment variable, or `fallback` when unset.
 *
 * @throws {TypeError} naming the variable when it is set but not a finite number.
 */
export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw.replaceAll('_', ''));
  if (!Number.isFinite(n)) throw new TypeError(`${name}: expected a number, got ${JSON.stringify(raw)}`);
  return n;
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}
