import { connect, createServer, type Server } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { V1Secret } from '@kubernetes/client-node';
import { asyncScheduler, BehaviorSubject, firstValueFrom, filter, type Observable, type SchedulerLike, type Subscription, VirtualTimeScheduler } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setErrorReporter } from '../../../src/errors/reportError.js';
import { CertificateProvisionError } from '../../../src/manager/certificates/CertificateProvisionError.js';
import { describePair } from '../../../src/manager/certificates/describe.js';
import { generateCa, issueServing } from '../../../src/manager/certificates/generate.js';
import { resolveWebhookCertificates, type WebhookCertificates } from '../../../src/manager/certificates/options.js';
import { provisionedPairs } from '../../../src/manager/certificates/provision.js';
import type { TlsPair } from '../../../src/manager/certificates/tlsPair.js';
import { startApiServer, type ApiServer, type AuditEvent } from '../../../src/testing/index.js';
import { waitFor } from '../../helpers/waitFor.js';
import { leakedSecrets, pemFragments } from '../../safety/secretScan.js';

const DAY = 86_400_000;
const VWC = 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MWC = 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const CRD = 'apiextensions.k8s.io/v1/customresourcedefinitions';
const NAMES = ['web-svc', 'web-svc.ops', 'web-svc.ops.svc', 'web-svc.ops.svc.cluster.local'];

const webhook = (name: string, caBundle?: string): object => ({
  name,
  clientConfig: { service: { namespace: 'ops', name: 'web-svc', path: `/${name}` }, ...(caBundle !== undefined && { caBundle }) },
  rules: [{ apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['websites'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
});

const websitesCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'websites.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'websites', singular: 'website', kind: 'Website', listKind: 'WebsiteList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'ops', name: 'web-svc', path: '/convert' } } } },
  },
};

let server: ApiServer;
let audit: AuditEvent[];
let reported: Error[];
const subscriptions: Subscription[] = [];
const tlsServers: Server[] = [];

beforeEach(async () => {
  audit = [];
  reported = [];
  setErrorReporter((err) => void reported.push(err));
  server = await startApiServer({
    audit: (e) => {
      audit.push(e);
      checkAudit(e);
    },
    crds: [websitesCrd],
  });
  await server.create(VWC, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'web-hooks' }, webhooks: [webhook('v1'), webhook('v2', 'c3RhbGU=')] });
  await server.create(MWC, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'web-hooks' }, webhooks: [webhook('m1')] });
});

afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await Promise.all(tlsServers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  await server.close();
  setErrorReporter(undefined);
  checkAudit = () => undefined;
});

function options(extra: Partial<WebhookCertificates> = {}): WebhookCertificates {
  return { kubeConfig: server.kubeConfig(), name: 'web-hooks', service: { namespace: 'ops', name: 'web-svc' }, customResources: [{ group: 'example.com', plural: 'websites' }], ...extra };
}

/** Subscribes a provisioner; `pairs` holds what it served, in order. */
function provisioner(leading$: Observable<boolean>, extra: Partial<WebhookCertificates> = {}, scheduler: SchedulerLike = asyncScheduler): { pairs: TlsPair[]; pairs$: Observable<TlsPair> } {
  const c = resolveWebhookCertificates(options(extra), scheduler);
  if (c === undefined) throw new Error('unreachable');
  const pairs$ = provisionedPairs(c, leading$);
  const pairs: TlsPair[] = [];
  subscriptions.push(pairs$.subscribe((p) => pairs.push(p)));
  return { pairs, pairs$ };
}

const text = (b64: unknown): string => Buffer.from(String(b64 ?? ''), 'base64').toString('utf8');
const secret = (): V1Secret | undefined => server.get<V1Secret>('v1/secrets', 'ops', 'web-hooks-webhook-tls');
const secretPem = (field: string): string => text(secret()?.data?.[field]);
type Hooks = { webhooks: { clientConfig: { caBundle?: string } }[] };
const bundles = (): string[] => [
  ...(server.get<Hooks>(VWC, undefined, 'web-hooks')?.webhooks ?? []).map((h) => text(h.clientConfig.caBundle)),
  ...(server.get<Hooks>(MWC, undefined, 'web-hooks')?.webhooks ?? []).map((h) => text(h.clientConfig.caBundle)),
  text(server.get<{ spec: { conversion: { webhook: { clientConfig: { caBundle?: string } } } } }>(CRD, undefined, 'websites.example.com')?.spec.conversion.webhook.clientConfig.caBundle),
];
const everyBundleIs = (ca: string): boolean => ca !== '' && bundles().every((b) => b === ca);

/** Writes the Secret as an earlier run would have left it: without `caKey`, as versions that kept no CA key did. */
async function seedSecret(pair: TlsPair, ca: string, caKey?: string, type = 'kubernetes.io/tls'): Promise<void> {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const data = { 'tls.crt': b64(pair.cert), 'tls.key': b64(pair.key), 'ca.crt': b64(ca), ...(caKey !== undefined && { 'ca.key': b64(caKey) }) };
  await server.create('v1/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'web-hooks-webhook-tls', namespace: 'ops' }, type, data });
}

const casOf = (bundle: string): string[] => bundle.match(/-----BEGIN CERTIFICATE-----[^-]*-----END CERTIFICATE-----\n/g) ?? [];

/**
 * Checks, at every bundle the simulator stores, that each CA it holds is one
 * the Secret holds at that moment: bundles follow the Secret (WH-116).
 */
function bundlesFollowTheSecret(): string[] {
  const violations: string[] = [];
  checkAudit = (e) => {
    if (e.verb !== 'update' || e.code !== 200 || ![VWC, MWC, CRD].includes(e.resource)) return;
    const held = casOf(secretPem('ca.crt'));
    for (const b of bundles()) for (const ca of casOf(b)) if (!held.includes(ca)) violations.push(`${e.resource} ${e.name} trusts a CA the Secret does not hold`);
  };
  return violations;
}
let checkAudit: (e: AuditEvent) => void = () => undefined;

async function handshake(pair: TlsPair, ca: string, servername: string): Promise<string> {
  const tlsServer = createServer({ cert: pair.cert, key: pair.key }, (s) => s.end('hello'));
  tlsServers.push(tlsServer);
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  const port = (tlsServer.address() as AddressInfo).port;
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca: [ca], servername });
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString()));
    socket.on('end', () => resolve(got));
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('provisioned webhook certificates', () => {
  it('creates the Secret when missing, writes its CA into every webhook entry and the CRD, and serves a pair the API server can verify', async () => {
    const { pairs } = provisioner(new BehaviorSubject(true));
    await waitFor(() => pairs.length > 0 && everyBundleIs(secretPem('ca.crt')), 'the pair served and the bundles written', 10_000, { describe: () => JSON.stringify(reported.map((e) => e.message)) });
    const s = secret();
    expect(s?.type).toBe('kubernetes.io/tls');
    expect(pairs[0]).toEqual({ cert: secretPem('tls.crt'), key: secretPem('tls.key') });
    const d = await describePair({ ...pairs[0]!, ca: secretPem('ca.crt') });
    expect(d.dnsNames).toEqual(NAMES);
    expect(d.issuerCa).toBe(secretPem('ca.crt'));
    expect(d.notAfter.getTime() - d.notBefore.getTime()).toBe(365 * DAY + 3_600_000);
    // What kube-apiserver does with the caBundle: dial the Service's name trusting only it.
    expect(await handshake(pairs[0]!, bundles()[0]!, 'web-svc.ops.svc')).toBe('hello');
    expect(reported).toEqual([]);
  });

  it('reuses a valid Secret: nothing is rewritten but the missing bundles', async () => {
    const ca = await generateCa({ commonName: 'ca', validityMs: 3650 * DAY });
    const pair = await issueServing(ca, { dnsNames: NAMES, validityMs: 365 * DAY });
    await seedSecret(pair, ca.cert, ca.key);
    const before = secret()?.metadata?.resourceVersion;
    const { pairs } = provisioner(new BehaviorSubject(true));
    await waitFor(() => pairs.length > 0 && everyBundleIs(ca.cert), 'the bundles written');
    expect(pairs).toEqual([{ cert: pair.cert, key: pair.key }]);
    expect(secret()?.metadata?.resourceVersion).toBe(before);
    expect(audit.filter((e) => e.resource === 'v1/secrets' && e.verb !== 'get')).toEqual([]);
  });

  it('rotates a serving certificate near its end under the same CA: the bundle never changes', async () => {
    const start = Date.now() - 300 * DAY; // 65 days left: within the default 90
    const ca = await generateCa({ commonName: 'ca', validityMs: 3650 * DAY, now: start });
    const old = await issueServing(ca, { dnsNames: NAMES, validityMs: 365 * DAY, now: start });
    await seedSecret(old, ca.cert, ca.key, 'Opaque');
    const violations = bundlesFollowTheSecret();
    const { pairs } = provisioner(new BehaviorSubject(true));
    await waitFor(() => pairs.some((p) => p.cert !== old.cert) && everyBundleIs(ca.cert), 'the rotated pair served');
    expect(secretPem('ca.crt')).toBe(ca.cert);
    expect(secretPem('ca.key')).toBe(ca.key);
    const served = pairs.at(-1)!;
    expect((await describePair({ ...served, ca: ca.cert })).issuerCa).toBe(ca.cert);
    // One write per object that lacked the bundle, none for the rotation: API servers trust the new certificate as they trusted the old.
    expect(audit.filter((e) => [VWC, MWC, CRD].includes(e.resource) && e.verb === 'update' && e.code === 200)).toHaveLength(3);
    expect(await handshake(served, bundles()[0]!, 'web-svc')).toBe('hello');
    expect(await handshake(old, bundles()[0]!, 'web-svc')).toBe('hello');
    expect(secret()?.type).toBe('Opaque'); // a Secret's type cannot change: kept
    expect(violations).toEqual([]);
  });

  it('rotates the CA in two phases on the manager clock: the new CA joins every bundle, and signs the served pair only once it settled', async () => {
    const clock = new VirtualTimeScheduler();
    const base = Date.now();
    clock.now = () => base + clock.frame;
    // A Secret without ca.key (as kept before CAs were): a CA rotation, with no moment where the served pair is untrusted.
    const oldCa = await generateCa({ commonName: 'old', validityMs: 365 * DAY, now: base - 100 * DAY });
    const old = await issueServing(oldCa, { dnsNames: NAMES, validityMs: 365 * DAY, now: base - 100 * DAY });
    await seedSecret(old, oldCa.cert);
    const violations = bundlesFollowTheSecret();
    const { pairs } = provisioner(new BehaviorSubject(true), { caSettleMs: 600_000 }, clock);
    await waitFor(() => casOf(secretPem('ca.crt')).length === 2 && everyBundleIs(secretPem('ca.crt')) && clock.actions.length > 0, 'the new CA in every bundle', 10_000, {
      describe: () => JSON.stringify(reported.map((e) => e.message)),
    });
    const [newCa, carried] = casOf(secretPem('ca.crt'));
    expect(carried).toBe(oldCa.cert);
    expect(secretPem('tls.crt')).toBe(old.cert);
    expect(pairs).toEqual([{ cert: old.cert, key: old.key }]);
    const phaseOne = bundles()[0]!;
    expect(await handshake(old, phaseOne, 'web-svc')).toBe('hello');

    clock.flush(); // the settle period, on the manager clock
    await waitFor(() => pairs.length === 2, 'a pair from the new CA served');
    expect(clock.frame).toBe(600_000);
    expect((await describePair({ ...pairs[1]!, ca: secretPem('ca.crt') })).issuerCa).toBe(newCa);
    expect(everyBundleIs(phaseOne)).toBe(true);
    expect(await handshake(pairs[1]!, phaseOne, 'web-svc')).toBe('hello');
    expect(await handshake(old, phaseOne, 'web-svc')).toBe('hello');
    expect(casOf(secretPem('ca.crt'))).toEqual([newCa, oldCa.cert]);
    expect(violations).toEqual([]);
    expect(reported).toEqual([]);
  });

  it('rotates only once every bundle trusts the new CA, but writes a first pair even when a bundle cannot be written', async () => {
    server.faults.inject({ type: 'status', status: 403 }, { verb: 'update', resource: VWC, times: 1_000 });
    const first = provisioner(new BehaviorSubject(true));
    await waitFor(() => first.pairs.length > 0, 'a first pair despite the forbidden bundle');
    await waitFor(() => reported.some((e) => e instanceof CertificateProvisionError && e.step === 'write-bundle'), 'the bundle failure reported');
    for (const s of subscriptions.splice(0)) s.unsubscribe();

    // Now a rotation is due, and the bundle still cannot be written: the Secret must stay as it is.
    await server.delete('v1/secrets', 'ops', 'web-hooks-webhook-tls');
    const start = Date.now() - 300 * DAY;
    const oldCa = await generateCa({ commonName: 'ca', validityMs: 3650 * DAY, now: start });
    const old = await issueServing(oldCa, { dnsNames: NAMES, validityMs: 365 * DAY, now: start });
    await seedSecret(old, oldCa.cert, oldCa.key);
    const rv = secret()?.metadata?.resourceVersion;
    reported.length = 0;
    const second = provisioner(new BehaviorSubject(true));
    await waitFor(() => reported.some((e) => e instanceof CertificateProvisionError && e.step === 'write-bundle'), 'the bundle failure reported');
    expect(secret()?.metadata?.resourceVersion).toBe(rv);
    await waitFor(() => second.pairs.length > 0, 'the old pair served');
    expect(second.pairs).toEqual([{ cert: old.cert, key: old.key }]);
    server.faults.clear();
    await waitFor(() => second.pairs.length === 2 && everyBundleIs(secretPem('ca.crt')), 'rotated once the bundle could be written', 15_000);
  });

  it('reports a Secret whose key is not its certificate\'s, never quoting a key, and replaces the pair', async () => {
    const ca = await generateCa({ commonName: 'ca', validityMs: 3650 * DAY });
    const a = await issueServing(ca, { dnsNames: NAMES, validityMs: 365 * DAY });
    const b = await issueServing(ca, { dnsNames: NAMES, validityMs: 365 * DAY });
    await seedSecret({ cert: a.cert, key: b.key }, ca.cert, ca.key);
    const { pairs } = provisioner(new BehaviorSubject(true));
    await waitFor(() => pairs.length > 0 && everyBundleIs(secretPem('ca.crt')), 'a fresh pair');
    expect(reported.map((e) => (e as CertificateProvisionError).step)).toContain('serve');
    expect(reported.find((e) => (e as CertificateProvisionError).step === 'serve')?.message).toMatch(/the private key is not the certificate's/);
    const keys = [a.key, b.key, ca.key, ...pairs.map((p) => p.key)];
    expect(leakedSecrets(reported, keys.flatMap(pemFragments))).toEqual([]);
  });

  it('prunes a CA whose certificate has ended from the Secret and every bundle', async () => {
    const oldCa = await generateCa({ commonName: 'old', validityMs: 10 * DAY, now: Date.now() - 20 * DAY });
    const ca = await generateCa({ commonName: 'ca', validityMs: 3650 * DAY });
    const pair = await issueServing(ca, { dnsNames: NAMES, validityMs: 365 * DAY });
    await seedSecret(pair, ca.cert + oldCa.cert, ca.key);
    const { pairs } = provisioner(new BehaviorSubject(true));
    await waitFor(() => pairs.length > 0 && secretPem('ca.crt') === ca.cert && everyBundleIs(ca.cert), 'the ended CA pruned');
    expect(pairs).toEqual([{ cert: pair.cert, key: pair.key }]);
  });

  it('issues anew from the same CA when the DNS names changed or the pair became unreadable', async () => {
    const ca = await generateCa({ commonName: 'ca', validityMs: 3650 * DAY });
    const elsewhere = await issueServing(ca, { dnsNames: ['other-svc.ops.svc'], validityMs: 365 * DAY });
    await seedSecret(elsewhere, ca.cert, ca.key);
    const { pairs } = provisioner(new BehaviorSubject(true));
    await waitFor(() => pairs.some((p) => p.cert !== elsewhere.cert) && everyBundleIs(ca.cert), 'a pair for the Service');
    expect((await describePair({ ...pairs.at(-1)!, ca: secretPem('ca.crt') })).dnsNames).toEqual(NAMES);
    expect(secretPem('ca.crt')).toBe(ca.cert);

    await server.patch('v1/secrets', 'ops', 'web-hooks-webhook-tls', { data: { 'tls.key': Buffer.from('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n').toString('base64') } });
    await waitFor(async () => {
      const s = secret();
      const m = { cert: text(s?.data?.['tls.crt']), key: text(s?.data?.['tls.key']), ca: text(s?.data?.['ca.crt']) };
      return (await describePair(m).then(() => true, () => false)) && m.ca === ca.cert && everyBundleIs(m.ca);
    }, 'a fresh pair from the same CA');
    // The replicas never served the unreadable pair.
    expect(reported.filter((e) => e.name === 'CertificateProvisionError').map((e) => (e as Error & { step: string }).step)).toContain('serve');
    for (const p of pairs) await expect(describePair(p)).resolves.toBeDefined();
    expect(JSON.stringify(reported.map((e) => e.message))).not.toContain('AAAA');
  });

  it('writes the bundle again after someone strips it, and leaves bundles that are right alone', async () => {
    const { pairs } = provisioner(new BehaviorSubject(true));
    await waitFor(() => pairs.length > 0 && everyBundleIs(secretPem('ca.crt')), 'the bundles written');
    const written = audit.filter((e) => e.resource === VWC && e.verb === 'update' && e.code === 200).length;
    const vwc = server.get<Record<string, unknown> & Hooks>(VWC, undefined, 'web-hooks')!;
    // As `kubectl replace -f` of the manifests, which carry no caBundle, would.
    await server.update(VWC, { ...vwc, webhooks: vwc.webhooks.map((h) => ({ ...h, clientConfig: { ...h.clientConfig, caBundle: undefined } })) });
    expect(everyBundleIs(secretPem('ca.crt'))).toBe(false);
    await waitFor(() => everyBundleIs(secretPem('ca.crt')), 'the bundle written again');
    expect(audit.filter((e) => e.resource === VWC && e.verb === 'update' && e.code === 200).length).toBe(written + 1); // the fix (the strip went to storage directly)
  });

  it('rotates on its timer, before expiry, on the manager clock', async () => {
    const clock = new VirtualTimeScheduler();
    const base = Date.now();
    clock.now = () => base + clock.frame;
    const ca = await generateCa({ commonName: 'ca', validityMs: 1000 * DAY, now: base });
    const pair = await issueServing(ca, { dnsNames: NAMES, validityMs: 100 * DAY, now: base });
    await seedSecret(pair, ca.cert, ca.key);
    const { pairs } = provisioner(new BehaviorSubject(true), { validityMs: 100 * DAY, rotateBeforeMs: 10 * DAY }, clock);
    await waitFor(() => pairs.length > 0 && everyBundleIs(ca.cert) && clock.actions.length > 0, 'the first pass done and its wake-up set');
    expect(pairs).toEqual([{ cert: pair.cert, key: pair.key }]);
    clock.flush(); // 90 days on (through a timer clamped to 24.8 days at a time)
    await waitFor(
      () => {
        if (pairs.length < 2 && clock.actions.length > 0) clock.flush();
        return pairs.length === 2 && everyBundleIs(secretPem('ca.crt'));
      },
      'rotated at 90 days',
    );
    // Certificates hold whole seconds: notAfter is up to a second before base + 100 days.
    expect(clock.frame).toBeGreaterThan(90 * DAY - 1000);
    expect(clock.frame).toBeLessThanOrEqual(90 * DAY);
  });

  it('two replicas that both provision converge on the one CA the Secret holds, at creation and at a CA rotation', async () => {
    const violations = bundlesFollowTheSecret();
    // Both lead, as every replica does without leader election.
    const a = provisioner(new BehaviorSubject(true), { caSettleMs: 0 });
    const b = provisioner(new BehaviorSubject(true), { caSettleMs: 0 });
    const converged = (): boolean => {
      const cert = secretPem('tls.crt');
      return cert !== '' && everyBundleIs(secretPem('ca.crt')) && a.pairs.at(-1)?.cert === cert && b.pairs.at(-1)?.cert === cert;
    };
    await waitFor(converged, 'both replicas serving the pair of the one Secret, every bundle its ca.crt', 10_000, { describe: () => JSON.stringify(reported.map((e) => e.message)) });
    expect(await handshake(a.pairs.at(-1)!, bundles()[0]!, 'web-svc.ops.svc')).toBe('hello');
    expect(audit.filter((e) => e.resource === 'v1/secrets' && e.verb === 'create' && e.code === 201)).toHaveLength(1);
    expect(violations).toEqual([]); // never a bundle ahead of the Secret, even for a moment

    // Both see a Secret without ca.key at once: each starts a CA rotation, and only one new CA may win.
    const first = secretPem('ca.crt');
    await server.patch('v1/secrets', 'ops', 'web-hooks-webhook-tls', { data: { 'ca.key': null } });
    await waitFor(
      () => converged() && secretPem('ca.key') !== '' && casOf(secretPem('ca.crt')).length === 2 && casOf(secretPem('ca.crt'))[0] !== first && a.pairs.length > 1,
      'a pair from the new CA, served by both',
      10_000,
      { describe: () => JSON.stringify(reported.map((e) => e.message)) },
    );
    const bundle = secretPem('ca.crt');
    const served = a.pairs.at(-1)!;
    expect(b.pairs.at(-1)).toEqual(served);
    expect((await describePair({ ...served, ca: bundle })).issuerCa).toBe(casOf(bundle)[0]);
    expect(await handshake(served, bundles()[0]!, 'web-svc.ops.svc')).toBe('hello');
    expect(violations).toEqual([]);
  });

  it('writes only while leading; a standby serves the leader pair, and takes over when it leads', async () => {
    const standbyLeads = new BehaviorSubject(false);
    const leaderLeads = new BehaviorSubject(true);
    const standby = provisioner(standbyLeads);
    const leader = provisioner(leaderLeads);
    await waitFor(() => standby.pairs.length > 0 && leader.pairs.length > 0 && everyBundleIs(secretPem('ca.crt')), 'both serving');
    expect(standby.pairs).toEqual(leader.pairs);
    // Had the standby written too, both would have created the Secret: one of them refused.
    expect(audit.filter((e) => e.resource === 'v1/secrets' && e.verb === 'create').map((e) => e.code)).toEqual([201]);
    expect(audit.filter((e) => e.code === 409)).toEqual([]);

    leaderLeads.next(false);
    standbyLeads.next(true);
    await server.patch('v1/secrets', 'ops', 'web-hooks-webhook-tls', { data: { 'tls.crt': null } });
    await waitFor(() => standby.pairs.length > 1 && leader.pairs.length > 1 && everyBundleIs(secretPem('ca.crt')), 'the new leader issued a pair, served by both');
    expect(standby.pairs.at(-1)).toEqual(leader.pairs.at(-1));
    await expect(firstValueFrom(leader.pairs$.pipe(filter((p) => p.cert === secretPem('tls.crt'))))).resolves.toBeDefined();
  });
});
