import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { workQueue } from '../../src/workqueue/index.js';

const activeTimers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('WorkQueue teardown', () => {
  it('shutDown clears every timer it started on the real clock', async () => {
    const before = activeTimers();
    const q = workQueue<string>();
    q.addAfter('late', 600_000);
    for (let i = 0; i < 150; i++) q.addRateLimited(`key-${i}`); // the bucket delays the last 50
    const metrics = q.metrics$.subscribe();
    const run = lastValueFrom(q.process(() => {}), { defaultValue: undefined });
    expect(activeTimers()).toBeGreaterThan(before);
    q.shutDown();
    await run;
    expect(metrics.closed).toBe(true);
    expect(activeTimers()).toBe(before);
  });

  it('nothing keeps a Node process alive after shutDown', async () => {
    // The package as built by the test run's global setup, in a process of its own.
    const entry = new URL('../../dist/workqueue/index.js', import.meta.url).href;
    const script = `
      import { workQueue } from ${JSON.stringify(entry)};
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
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--input-type=module', '-e', script],
        { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeout: 20_000 },
        (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('shut down');
    // Exited by itself: a timer left behind (the 600 s item's) would have kept it alive until the 20 s kill,
    // which leaves no exit code.
    expect(result.code).toBe(0);
  });
});
