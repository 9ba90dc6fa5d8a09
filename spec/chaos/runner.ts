import { waitFor, WaitTimeoutError } from '../helpers/waitFor.js';
import { runSeed, type SeedOptions, type SeedResult } from './seed.js';

/** Options of {@link runSeeds}. */
export interface RunOptions extends SeedOptions {
  readonly seeds: readonly number[];
  /** Seeds running at once, each on its own simulator. @default 1 */
  readonly concurrency?: number;
  /** Called as each seed finishes. @default undefined */
  readonly onResult?: (result: SeedResult) => void;
}

/** What a run found beyond the seeds' own results. */
export interface RunReport {
  readonly results: readonly SeedResult[];
  /** Resource types (timers, sockets…) more numerous after the run than before it, with their counts. */
  readonly leaks: readonly string[];
  /** Unhandled promise rejections during the run, with the seeds that were running. */
  readonly unhandled: readonly string[];
}

function countResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

function excess(baseline: ReadonlyMap<string, number>): string[] {
  const out: string[] = [];
  for (const [type, n] of countResources()) {
    const before = baseline.get(type) ?? 0;
    if (n > before) out.push(`${type} ${before} → ${n}`);
  }
  return out;
}

/**
 * Runs seeds, several at once on separate simulators, and checks the
 * process as a whole: no unhandled rejection while they ran, and no timer or
 * socket left once all of them tore down (`process.getActiveResourcesInfo()`
 * back to its count before the run). With concurrency 1 that check
 * pins a leak to the seed; with more it says only that one of them leaked.
 */
export async function runSeeds(opts: RunOptions): Promise<RunReport> {
  const concurrency = opts.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError(`concurrency must be a positive integer, got ${String(opts.concurrency)}`);
  const baseline = countResources();
  const running = new Set<number>();
  const unhandled: string[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(`seeds running [${[...running].join(', ')}]: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
  };
  process.on('unhandledRejection', onUnhandled);
  const results: SeedResult[] = [];
  const queue = [...opts.seeds];
  const worker = async (): Promise<void> => {
    for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) {
      running.add(seed);
      const result = await runSeed(seed, opts.probe !== undefined ? { probe: opts.probe } : {});
      running.delete(seed);
      results.push(result);
      opts.onResult?.(result);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
    // Sockets and timers are released asynchronously after close; wait for the count to come back, with a limit.
    let leaks = excess(baseline);
    await waitFor(() => (leaks = excess(baseline)).length === 0, 'sockets and timers to be released', 5000, { everyMs: 20 }).catch((err: unknown) => {
      // Still there at the limit: reported as leaks below, with every seed's result.
      if (!(err instanceof WaitTimeoutError)) throw err;
    });
    return { results: results.sort((a, b) => a.seed - b.seed), leaks, unhandled };
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
}
