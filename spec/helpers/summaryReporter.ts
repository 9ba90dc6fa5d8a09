import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends a run with one plain line, `<label>: N passed, N failed, N skipped`,
 * that any CI log reader can count, beside vitest's own summary.
 */
export default class SummaryReporter implements Reporter {
  readonly #label: string;

  constructor(opts: { label?: string } = {}) {
    this.#label = opts.label ?? 'tests';
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const mod of testModules) {
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed++;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    process.stdout.write(`\n${this.#label}: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
