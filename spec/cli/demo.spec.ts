import { describe, expect, it } from 'vitest';
import { runCli } from './run.js';

describe('rxkube demo', () => {
  it('recovers from every fault and ends with the cache equal to the server', async () => {
    const { code, stdout, stderr } = await runCli(['demo', '--duration', '6s', '--rate', '300']);
    expect(stderr).toBe('');
    expect(stdout).not.toContain('\u001b[');
    expect(stdout).toMatch(/^synced 200 pods in \d+/m);
    // Each scheduled fault is injected, then recovered: a change made after it arrived through a new watch.
    const faults = [...stdout.matchAll(/^fault: (.+)$/gm)].map((m) => m[1]);
    expect(faults).toEqual([
      'every watch closed by the server',
      'a malformed line written into the watch',
      'every connection reset mid-stream',
      '429 Too Many Requests on the next watch',
      'the server down for a second, its history compacted',
    ]);
    for (const fault of faults) expect(stdout).toMatch(new RegExp(`^  fault "${fault}": recovered in \\d+(ms|\\.\\ds): `, 'm'));
    expect(stdout).toMatch(/fault "the server down for a second, its history compacted": recovered in [^:]+: relisted and re-watched/);
    expect(stdout).toMatch(/fault "every watch closed by the server": recovered in [^:]+: re-watched from the last resourceVersion, no relist/);
    expect(stdout).toMatch(/^ {2}events: \d+ adds, \d+ updates, \d+ deletes; lists \d+ \(relists [1-9]\d*\)/m);
    expect(stdout).toMatch(/^ {2}cache (\d+) objects, server \1 objects: the cache matches the server$/m);
    // Each status line shows the deepest the handler's buffer got since the line before (a sample taken once a second
    // finds it drained), so the deepest of the lines is the summary's; the initial list alone fills it past 0.
    const depths = [...stdout.matchAll(/^t=.* handler depth max=(\d+)$/gm)].map((m) => Number(m[1]));
    expect(depths.length).toBeGreaterThan(0);
    const deepest = Number(/^ {2}handler: \d+ reconciles of running pods, deepest buffer (\d+) /m.exec(stdout)?.[1]);
    expect(deepest).toBeGreaterThan(0);
    expect(Math.max(...depths)).toBe(deepest);
    expect(code).toBe(0);
  }, 90_000);
});
