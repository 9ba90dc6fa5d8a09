import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The Node options the runner's image sets (`ENV NODE_OPTIONS=` in examples/deploy/Dockerfile), read from the
 * Dockerfile itself so that the benchmark measures what the image runs and the two cannot drift apart.
 */
export function runnerNodeOptions(): string[] {
  const dockerfile = fileURLToPath(new URL('../../../examples/deploy/Dockerfile', import.meta.url));
  const line = /^ENV NODE_OPTIONS=(.+)$/m.exec(readFileSync(dockerfile, 'utf8'));
  if (line === null) throw new Error(`${dockerfile}: no ENV NODE_OPTIONS= line; the runner-flags latency row has nothing to measure`);
  return (line[1] as string).trim().split(/\s+/);
}
