import { describe, expect, it } from 'vitest';
import { runExample } from '../helpers/runExample.js';

describe('examples/website-operator as a program', () => {
  it('on the simulator, with its CRD installed from the definition, every Website gets its Deployment and Service and turns Ready', async () => {
    const { code, stdout, stderr } = await runExample('website-operator', ['--simulator', '--duration', '1s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toContain('converged: 2 websites, each with its Deployment and Service, Ready');
    expect(lines).toContain('reconciled default/blog: 2/2 ready');
    expect(lines).toContain('reconciled default/shop: 3/3 ready');
  }, 60_000);
});
