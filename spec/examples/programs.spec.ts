import { describe, expect, it } from 'vitest';
import { runExample } from '../helpers/runExample.js';

describe('each example runs against the simulator', () => {
  it('deployments: prints readiness per deployment as pods turn ready, then exits cleanly', async () => {
    const { code, stdout, stderr } = await runExample('deployments', ['--simulator', '--duration', '4s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toContain('default/web: 3/3 pods ready');
    expect(lines).toContain('default/api: 2/2 pods ready');
    expect(lines.some((l) => /^default\/web: [12]\/3 pods ready \(waiting: /.test(l))).toBe(true);
  }, 30_000);

  it('a misspelt flag is named, not ignored', async () => {
    const { code, stderr } = await runExample('deployments', ['--simulater']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/unknown argument "--simulater"/);
  }, 30_000);
});
