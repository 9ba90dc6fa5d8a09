import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The Node options the runner's image runs with, read from examples/deploy/Dockerfile itself so that the benchmark
 * measures what the image runs and the two cannot drift apart: its `ENV NODE_OPTIONS=` and the flags its
 * `ENTRYPOINT` gives `node` before the program (the V8 flags NODE_OPTIONS may not carry).
 */
export function runnerNodeOptions(): string[] {
  const dockerfile = fileURLToPath(new URL('../../../examples/deploy/Dockerfile', import.meta.url));
  const text = readFileSync(dockerfile, 'utf8');
  const env = /^ENV NODE_OPTIONS=(.+)$/m.exec(text);
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(text);
  if (env === null || entrypoint === null) throw new Error(`${dockerfile}: no ENV NODE_OPTIONS= or ENTRYPOINT line; the runner-flags rows have nothing to measure`);
  const command = JSON.parse(entrypoint[1] as string) as string[];
  if (command[0] !== 'node') throw new Error(`${dockerfile}: the ENTRYPOINT does not run node`);
  const script = command.findIndex((arg, i) => i > 0 && !arg.startsWith('-'));
  return [...(env[1] as string).trim().split(/\s+/), ...command.slice(1, script < 0 ? undefined : script)];
}
