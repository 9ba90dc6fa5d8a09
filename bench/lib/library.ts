// Which rxkube a measured client process runs: this checkout's build, or the
// build of another checkout (`BENCH_BASELINE`, its `dist/`), so a change is
// measured before and after in one interleaved run. The client is compiled
// against this checkout's types; it uses only what both builds export under
// the same names (the composite entry points and their core options).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** `current`: this checkout's rxkube; `baseline`: the one `BENCH_BASELINE` names. */
export type Build = 'current' | 'baseline';

/** The entry points the multi-cluster and sharding clients call. */
export type Library = Pick<typeof import('rxkube'), 'informer' | 'kubeSource' | 'multiClusterInformer' | 'multiClusterController' | 'shardedController'>;

/** The builds one round runs, in order: this checkout's, and the baseline's when `BENCH_BASELINE` names one. */
export function builds(): Build[] {
  const root = process.env.BENCH_BASELINE ?? '';
  if (root === '') return ['current'];
  // Checked here, before any server is seeded, rather than in the first measured process.
  if (!existsSync(join(root, 'dist', 'index.js'))) throw new TypeError(`BENCH_BASELINE: ${JSON.stringify(root)} has no dist/index.js; build it (npm run build in that checkout)`);
  return ['current', 'baseline'];
}

/**
 * The builds of round `r`, the order reversed every other round (current,
 * baseline; baseline, current; …), so neither always runs first on a machine
 * still busy with the other.
 */
export function buildsOfRound(r: number): Build[] {
  const bs = builds();
  return r % 2 === 0 ? bs : [...bs].reverse();
}

/** The case label of a build in the report's side-by-side table (compare's labels, so the ratio column reads alike). */
export function buildLabel(b: Build): string {
  return b === 'current' ? 'rxkube' : 'rxkube baseline';
}

/** Loads a build's rxkube; called in the measured process, before its clock starts. */
export async function library(b: Build): Promise<Library> {
  // Imported only when asked for, so a process holds one build's modules and its memory figures compare.
  if (b === 'current') return await import('rxkube');
  const root = process.env.BENCH_BASELINE;
  if (root === undefined || root === '') throw new TypeError('baseline: BENCH_BASELINE names no checkout');
  return (await import(pathToFileURL(join(root, 'dist', 'index.js')).href)) as Library;
}
