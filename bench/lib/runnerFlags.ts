import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The Node options a Dockerfile's image runs with, as {@link imageNodeFlags} reads them. */
export interface ImageNodeFlags {
  /** The options of its `ENV NODE_OPTIONS=`. */
  readonly nodeOptions: string[];
  /** The flags its `ENTRYPOINT` gives `node` before the program (the V8 flags NODE_OPTIONS may not carry). */
  readonly entrypoint: string[];
}

/**
 * Reads the Node options from a Dockerfile's text: its `ENV NODE_OPTIONS=` and the flags its `ENTRYPOINT` gives
 * `node` before the program. `where` names the file in the errors thrown when either line is missing or the
 * ENTRYPOINT does not run node.
 */
export function imageNodeFlags(text: string, where: string): ImageNodeFlags {
  const env = /^ENV NODE_OPTIONS=(.+)$/m.exec(text);
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(text);
  if (env === null || entrypoint === null) throw new Error(`${where}: no ENV NODE_OPTIONS= or ENTRYPOINT line`);
  const command = JSON.parse(entrypoint[1] as string) as string[];
  if (command[0] !== 'node') throw new Error(`${where}: the ENTRYPOINT does not run node`);
  const script = command.findIndex((arg, i) => i > 0 && !arg.startsWith('-'));
  return { nodeOptions: (env[1] as string).trim().split(/\s+/), entrypoint: command.slice(1, script < 0 ? undefined : script) };
}

/**
 * The Node options the runner's image runs with, read from examples/deploy/Dockerfile itself so that the benchmark
 * measures what the image runs and the two cannot drift apart: those of its `ENV NODE_OPTIONS=`, then its
 * ENTRYPOINT's flags.
 */
export function runnerNodeOptions(): string[] {
  // Found from the compiled file (build/bench/lib/), which is what the benchmarks run.
  const dockerfile = fileURLToPath(new URL('../../../examples/deploy/Dockerfile', import.meta.url));
  const { nodeOptions, entrypoint } = imageNodeFlags(readFileSync(dockerfile, 'utf8'), dockerfile);
  return [...nodeOptions, ...entrypoint];
}
