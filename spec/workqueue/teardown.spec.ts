import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runNode, type ProgramRun } from '../helpers/runExample.js';

// The package as built by the test run's global setup, run in a process of its own.
const entry = JSON.stringify(new URL('../../dist/workqueue/index.js', import.meta.url).href);

/** Runs an ES module script in a new Node process from the project's root; it is killed after 20 s, which leaves no exit code. */
const runModule = (script: string): Promise<ProgramRun> =>
  runNode(['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeoutMs: 20_000 });

describe('WorkQueue teardown', () => {
  it('shutDown clears every timer it started on the real clock', async () => {
    // Counted where no timer but the queue's comes or goes: the test runner's own (its throttled reports) could fire
    // between two counts in this process.
    const script = `
      import { workQueue } from ${entry};
      const activeTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const before = activeTimers();
      const q = workQueue({ name: 'timers' });
      q.addAfter('late', 600000);
      for (let i = 0; i < 150; i++) q.addRateLimited('key-' + i); // the bucket delays the last 50
      const metrics = q.metrics$.subscribe();
      const run = new Promise((resolve) => q.process(() => {}).subscribe({ complete: resolve }));
      const during = activeTimers();
      q.shutDown();
      await run;
      process.stdout.write(JSON.stringify({ before, during, after: activeTimers(), closed: metrics.closed }));
    `;
    const result = await runModule(script);
    expect(result.stderr).toBe('');
    const counts = JSON.parse(result.stdout) as { before: number; during: number; after: number; closed: boolean };
    expect(counts.during).toBeGreaterThan(counts.before);
    expect(counts.after).toBe(counts.before);
    expect(counts.closed).toBe(true);
  });

  it('nothing keeps a Node process alive after shutDown', async () => {
    const script = `
      import { workQueue } from ${entry};
      const q = workQueue({ name: 'exit' });
      q.addAfter('late', 600000);
      q.metrics$.subscribe();
      // Shut down once the rate-limited items went through, so only the long timers are left to clear.
      let processed = 0;
      const count = () => {
        if (++processed === 3) {
          q.shutDown();
          process.stdout.write('shut down');
        }
      };
      q.process(async () => count()).subscribe();
      void (async () => { for await (const _ of q.items()) count(); })();
      for (const key of ['a', 'b', 'c']) q.addRateLimited(key);
    `;
    const result = await runModule(script);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('shut down');
    // Exited by itself: a timer left behind (the 600 s item's) would have kept it alive until the 20 s kill,
    // which leaves no exit code.
    expect(result.code).toBe(0);
  });
});
