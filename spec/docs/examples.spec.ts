import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkDocExamples, docExamples, examplesIn, markdownExamples, type DocExampleError } from '../../scripts/checkDocExamples.js';

describe('doc comment examples', () => {
  let errors: DocExampleError[] = [];
  beforeAll(() => {
    errors = checkDocExamples();
  }, 120_000);

  it('finds the ts block under each ## Example, with the line it starts on', () => {
    const text = ['/**', ' * Summary.', ' *', ' * ## Example', ' * ```ts', " * import { informer } from 'rxkube';", ' * informer;', ' * ```', ' */', '/** No example.', ' * ```ts', ' * nope;', ' * ```', ' */'].join('\n');
    expect(examplesIn('x.ts', text)).toEqual([{ file: 'x.ts', line: 6, code: "import { informer } from 'rxkube';\ninformer;" }]);
    expect(docExamples().length).toBeGreaterThan(200);
  });

  it('every example compiles against the package entries', () => {
    expect(errors.map((e) => `${e.file}:${String(e.line)}: ${e.message}`)).toEqual([]);
  });
});

describe("the README's TypeScript blocks", () => {
  it('finds every ts and typescript block, indented ones too, and leaves out those fenced as fragments', () => {
    const text = [
      '# Title', // 1
      '```ts', // 2
      "import { informer } from 'rxkube';", // 3
      '```', // 4
      '- item', // 5
      '  ```typescript', // 6
      '  const a = 1;', // 7
      '    const b = 2;', // 8
      '  ```', // 9
      '```ts fragment', // 10
      'cannot.compile(', // 11
      '```', // 12
      '```sh', // 13
      'npm test', // 14
      '```', // 15
    ].join('\n');
    expect(markdownExamples('README.md', text)).toEqual([
      { file: 'README.md', line: 3, code: "import { informer } from 'rxkube';" },
      { file: 'README.md', line: 7, code: 'const a = 1;\n  const b = 2;' },
    ]);
  });

  it('every block of README.md is among the examples checked, so a section added later is checked too', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const fences = readme.split('\n').filter((l) => /^\s*```(ts|typescript)\s*$/.test(l)).length;
    expect(fences).toBeGreaterThanOrEqual(5);
    expect(docExamples().filter((e) => e.file === 'README.md')).toHaveLength(fences);
  });

  it('a README block that does not compile is reported at its line in README.md', () => {
    const found = checkDocExamples([{ file: 'README.md', line: 40, code: "import { informer } from 'rxkube';\nconst n: number = informer;" }]);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ file: 'README.md', line: 41 });
  }, 60_000);
});
