import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { admission } from '../../../src/admission/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setErrorReporter } from '../../../src/errors/reportError.js';
import { informer } from '../../../src/informer/informer.js';
import { leaseLock } from '../../../src/leaderelection/leaseLock.js';
import { manager } from '../../../src/manager/manager.js';
import type { ManagerOptions } from '../../../src/manager/options.js';
import { kubeSource } from '../../../src/sources/kubeSource.js';
import { startApiServer, type ApiServer, type AuditEvent } from '../../../src/testing/index.js';
import { waitFor } from '../../helpers/waitFor.js';
import { start, type Running } from '../harness.js';

let server: ApiServer;
let audit: AuditEvent[];
const running: Running[] = [];

beforeEach(async () => {
  audit = [];
  setErrorReporter(() => undefined); // the takeover test strips tls.crt from the Secret: that report is expected
  server = await startApiServer({ audit: (e) => void audit.push(e) });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await server.close();
  setErrorReporter(undefined);
});

const secret = (): V1Secret | undefined => server.get<V1Secret>('v1/secrets', 'ops', 'web-hooks-webhook-tls');
const certOf = (s: V1Secret | undefined): string | undefined => s?.data?.['tls.crt'];

function opts(identity?: string): ManagerOptions {
  const kc = server.kubeConfig();
  return {
    controllers: [],
    informers: [informer<V1ConfigMap>(kubeSource(kc, 'v1/configmaps', { namespace: 'ops' }))],
    healthProbeBindAddress: '127.0.0.1:0',
    webhooks: [admission.validating('v1/configmaps', () => admission.allow())],
    webhookBindAddress: '127.0.0.1:0',
    webhookCertificates: { kubeConfig: kc, name: 'web-hooks', service: { namespace: 'ops', name: 'web-svc' } },
    ...(identity !== undefined && {
      leaderElection: { lock: leaseLock(kc, { namespace: 'ops', name: 'web-operator' }), identity, leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 500 },
    }),
  };
}

/** The fingerprint of the certificate a replica's webhook server presents now, once it serves. */
async function served(r: Running): Promise<string> {
  const at = await waitFor(() => r.events.find((e) => e.type === 'serving' && e.server === 'webhooks'), 'the webhook server listening');
  if (at.type !== 'serving') throw new Error('unreachable');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: at.port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
      socket.end();
    });
    socket.on('error', reject);
  });
}

const fingerprintOf = (s: V1Secret | undefined): string => new X509Certificate(Buffer.from(certOf(s) ?? '', 'base64')).fingerprint256;

describe('manager with webhookCertificates', () => {
  it('provisions the Secret when it runs alone, without leader election', async () => {
    const r = start(opts());
    running.push(r);
    await waitFor(() => certOf(secret()), 'the Secret written');
    expect(secret()?.type).toBe('kubernetes.io/tls');
    expect(await served(r)).toBe(fingerprintOf(secret()));
  });

  it('provisions only from the leader, and the standby takes over once the leader stops', async () => {
    const a = start(opts('replica-a'));
    running.push(a);
    await waitFor(() => a.events.some((e) => e.type === 'leadership' && e.leading), 'replica-a leading');
    const b = start(opts('replica-b'));
    running.push(b);
    await waitFor(() => certOf(secret()), 'the Secret written');
    await waitFor(() => b.events.some((e) => e.type === 'leadership' && e.leader === 'replica-a'), 'replica-b seeing replica-a lead');
    expect(audit.filter((e) => e.resource === 'v1/secrets' && e.verb === 'create').map((e) => e.code)).toEqual([201]);
    // Both serve the leader's pair: the leader only once it had one, which it could only write while leading.
    expect(await served(a)).toBe(fingerprintOf(secret()));
    expect(await served(b)).toBe(fingerprintOf(secret()));

    await a.stop();
    await waitFor(() => b.events.some((e) => e.type === 'leadership' && e.leading), 'replica-b leading');
    const before = certOf(secret());
    await server.patch('v1/secrets', 'ops', 'web-hooks-webhook-tls', { data: { 'tls.crt': null } });
    await waitFor(() => certOf(secret()) !== undefined && certOf(secret()) !== before, 'replica-b issuing a new pair');
  });

  it('issues for the hosts too, and reissues when they change (WH-112)', async () => {
    const base = opts();
    const withHosts = (hosts: string[]): ManagerOptions => ({ ...base, webhookCertificates: { ...base.webhookCertificates!, hosts } });
    const r = start(withHosts(['127.0.0.1', 'webhooks.test']));
    running.push(r);
    await waitFor(() => certOf(secret()), 'the Secret written');
    const first = new X509Certificate(Buffer.from(certOf(secret()) ?? '', 'base64'));
    expect(first.subjectAltName).toMatch(/DNS:webhooks\.test/);
    expect(first.subjectAltName).toMatch(/IP Address:127\.0\.0\.1/);
    expect(first.checkIP('127.0.0.1')).toBe('127.0.0.1');
    await r.stop();
    const again = start(withHosts(['127.0.0.1', 'webhooks.test']));
    running.push(again);
    expect(await served(again)).toBe(first.fingerprint256);
    await again.stop();
    const other = start(withHosts(['::1']));
    running.push(other);
    await waitFor(() => certOf(secret()) !== undefined && fingerprintOf(secret()) !== first.fingerprint256, 'a pair for the new hosts');
    const second = new X509Certificate(Buffer.from(certOf(secret()) ?? '', 'base64'));
    expect(second.checkIP('::1')).toBe('::1');
    expect(second.checkIP('127.0.0.1')).toBeUndefined();
  });

  it('checks the option up front', () => {
    const kc = server.kubeConfig();
    const base = opts();
    const bad = (w: unknown): (() => unknown) => () => manager({ ...base, webhookCertificates: w as never });
    expect(bad({ kubeConfig: kc, name: 'Web', service: { namespace: 'ops', name: 'web' } })).toThrow(/option "webhookCertificates.name" must be a DNS subdomain .* got "Web"/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops' } })).toThrow(/"webhookCertificates.service.name"/);
    expect(bad({ kubeConfig: {}, name: 'web', service: { namespace: 'ops', name: 'web' } })).toThrow(/"webhookCertificates.kubeConfig" must be a KubeConfig/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, validityMs: 1000 })).toThrow(/"webhookCertificates.validityMs" must be .* >= 60000, got 1000/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, validityMs: 86_400_000, rotateBeforeMs: 86_400_000 })).toThrow(/"webhookCertificates.rotateBeforeMs" \(86400000\) must be less than validityMs/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, validityMs: 86_400_000, caValidityMs: 100_000_000 })).toThrow(/"webhookCertificates.caValidityMs" \(100000000\) must be at least twice validityMs/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, caSettleMs: -1 })).toThrow(/"webhookCertificates.caSettleMs" must be .*, got -1/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, customResources: [{}] })).toThrow(/"webhookCertificates.customResources\[0\]" must be a customResource/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, secrets: {} })).toThrow(/unknown option "secrets"/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, hosts: '127.0.0.1' })).toThrow(/"webhookCertificates.hosts" must be an array of DNS names or IP addresses, got "127.0.0.1"/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, hosts: ['ok.test', 'Not_A_Host'] })).toThrow(/"webhookCertificates.hosts\[1\]" must be a DNS name .* or an IP address, got "Not_A_Host"/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, hosts: ['256.1.1.1'] })).toThrow(/"webhookCertificates.hosts\[0\]"/);
    // A zone names an interface of this host, which no certificate can carry; a control character is shown escaped.
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, hosts: ['fe80::1%eth0'] })).toThrow(/"webhookCertificates.hosts\[0\]" must be .* or an IP address, got "fe80::1%eth0"$/);
    expect(bad({ kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, hosts: ['a\u202eb'] })).toThrow(/got "a\\u202eb"$/);
    expect(() => manager(base)).not.toThrow();
  });
});
