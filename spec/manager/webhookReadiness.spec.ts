/**
 * WH-89: /readyz fails, naming the webhook server, until it listens. With provisioned certificates a standby
 * waits for the leader's Secret before it can listen, and the Service must not send it the API server's calls.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { admission } from '../../src/admission/index.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import { informer } from '../../src/informer/informer.js';
import { leaseLock } from '../../src/leaderelection/leaseLock.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { probe, probeUntil } from '../helpers/probe.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { start, type Running } from './harness.js';

let server: ApiServer | undefined;
let running: Running | undefined;

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await server?.close();
  server = undefined;
  setErrorReporter(undefined);
});

describe('readiness and the webhook server', () => {
  it('answers 503 naming the webhook server while it waits for its first certificate, then 200 once it listens', async () => {
    setErrorReporter(() => undefined);
    const s = await startApiServer({ port: 0 });
    server = s;
    const kc = s.kubeConfig();
    // Another replica holds the lock and has written no Secret yet: this one has nothing to serve.
    const now = new Date().toISOString().replace(/Z$/, '000Z');
    await s.create('coordination.k8s.io/v1/leases', {
      metadata: { name: 'web-operator', namespace: 'ops' },
      spec: { holderIdentity: 'other', leaseDurationSeconds: 3_600, acquireTime: now, renewTime: now, leaseTransitions: 0 },
    });
    running = start({
      controllers: [],
      informers: [informer<V1ConfigMap>(kubeSource(kc, 'v1/configmaps', { namespace: 'ops' }))],
      healthProbeBindAddress: '127.0.0.1:0',
      webhooks: [admission.validating('v1/configmaps', () => admission.allow())],
      webhookBindAddress: '127.0.0.1:0',
      webhookCertificates: { kubeConfig: kc, name: 'web-hooks', service: { namespace: 'ops', name: 'web-svc' } },
      leaderElection: { lock: leaseLock(kc, { namespace: 'ops', name: 'web-operator' }), identity: 'replica-b', leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 200 },
    });
    const base = await running.probes();
    // The cache synced; only the webhook server keeps the pod out of its Service.
    const waiting = await probeUntil(`${base}/readyz?verbose`, 503, 'the informer to sync', { body: /\[\+\]informer v1\/configmaps ok/ });
    expect(waiting.body).toMatch(/^\[-\]webhook server failed: not listening yet \(waiting for its first certificate\)$/m);
    expect(running.events.some((e) => e.type === 'serving' && e.server === 'webhooks')).toBe(false);
    expect((await probe(`${base}/healthz`)).status).toBe(200);

    // The other replica is gone: this one leads, provisions its pair, listens, and is ready.
    await s.delete('coordination.k8s.io/v1/leases', 'ops', 'web-operator');
    const ready = await probeUntil(`${base}/readyz`, 200, 'the webhook server to listen');
    expect(ready.body).toMatch(/^\[\+\]webhook server ok$/m);
    expect(running.events.some((e) => e.type === 'serving' && e.server === 'webhooks')).toBe(true);
  });
});
