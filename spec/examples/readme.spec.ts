import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runNode, type ProgramRun } from '../helpers/runExample.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The first `ts` block after the README's "## Quick start" heading, as a user would copy it. */
async function quickStart(): Promise<string> {
  const readme = await readFile(`${root}README.md`, 'utf8');
  const section = readme.slice(readme.indexOf('\n## Quick start\n'));
  const block = /\n```ts\n([\s\S]*?)\n```\n/.exec(section);
  if (block?.[1] === undefined) throw new Error('README.md has no ts block under "## Quick start"');
  return block[1];
}

const run = (args: readonly string[]): Promise<ProgramRun> => runNode(args, { cwd: root });

describe("the README's quick start", () => {
  it('typechecks against the built package and runs on the simulator as the README says it prints', async () => {
    // Saved inside the package, as the README says, so that `import 'rxkube'` resolves to dist/ (built by the
    // test run's global setup); build/ is the tools' output folder, outside git.
    const dir = `${root}build/readme`;
    await mkdir(dir, { recursive: true });
    const file = `${dir}/quickstart.ts`;
    await writeFile(file, await quickStart());

    const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
    const checked = await run([
      tsc, '--ignoreConfig', '--noEmit', '--strict', '--noUncheckedIndexedAccess', '--skipLibCheck',
      '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2023', '--types', 'node', file,
    ]);
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);

    // The project's Node runs the TypeScript file as it is, as the README tells a new user to.
    const { code, stdout, stderr } = await run([file]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual([
      'add default/web-1',
      'add default/web-2',
      '2 pods cached with app=web',
      'add default/web-3',
      'delete default/web-1',
    ]);
  }, 60_000);
});
