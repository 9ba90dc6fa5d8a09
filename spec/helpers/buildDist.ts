import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * vitest globalSetup: compiles src/ to dist/ (and examples/ and bench/ to build/) once per run, so specs that spawn
 * real processes (several replicas, the command-line tool) run the package as
 * users get it rather than a second copy of the sources. Type errors do not
 * stop the emit (the typecheck step of `npm test` reports them); only a
 * compiler that could not run fails the setup.
 */
export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  // The package first, then the examples and benchmarks, which import it by name.
  for (const project of ['tsconfig.build.json', 'tsconfig.tools.json']) {
    const result = spawnSync(process.execPath, [tsc, '-p', project], { cwd: root, encoding: 'utf8' });
    if (result.error !== undefined || (result.status !== 0 && result.status !== 2)) {
      throw new Error(`building ${project} failed (status ${String(result.status)}): ${result.error?.message ?? result.stdout + result.stderr}`);
    }
  }
}
