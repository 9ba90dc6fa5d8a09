import { beforeAll, describe, expect, it } from 'vitest';
import { checkDocExamples, docExamples, examplesIn, type DocExampleError } from '../../scripts/checkDocExamples.js';

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
