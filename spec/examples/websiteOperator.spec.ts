import { describe, expect, it } from 'vitest';
import { runExample } from '../helpers/runExample.js';

describe('examples/website-operator as a program', () => {
  it('on the simulator, with its CRD installed from the definition and its webhooks registered, every Website gets its Deployment and Service and turns Ready', async () => {
    const { code, stdout, stderr } = await runExample('website-operator', ['--simulator', '--duration', '1s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toContain('converged: 3 websites, each with its Deployment and Service, Ready');
    expect(lines).toContain('reconciled default/blog: 2/2 ready');
    expect(lines).toContain('reconciled default/shop: 3/3 ready');
    // Its webhooks, registered with the simulator: a Website written as v2 is converted to v1 for storage and
    // labelled by the mutating webhook; one asking for too many replicas is refused with the handler's message.
    expect(lines).toContain('webhooks: default/docs written as example.com/v2 reads as example.com/v1 with image docs:2.0 and label app.kubernetes.io/name=docs');
    expect(lines).toContain('webhooks: default/huge refused: admission webhook "vwebsite.example.com" denied the request: spec.replicas: at most 10 for non-admins, got 20');
    expect(lines).toContain('reconciled default/docs: 1/1 ready');
  }, 60_000);
});
