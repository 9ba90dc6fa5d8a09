/**
 * The whole webhook loop as a team runs it in `npm test`: a manager serving a validating, a mutating and a
 * conversion webhook on 127.0.0.1, registered with the simulator by webhookManifests, its certificates
 * provisioned by webhookCertificates (or read from a cert dir that is rewritten), and every request made through
 * rxkube's own objectClient and kubeSource (WH-143).
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1CustomResourceDefinition, V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { admission, webhookManifests, type Webhook } from '../../src/admission/index.js';
import { objectClient } from '../../src/client/index.js';
import { customResource } from '../../src/crd/index.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import { informer } from '../../src/informer/informer.js';
import { generateCa, issueServing } from '../../src/manager/certificates/generate.js';
import type { ManagerOptions } from '../../src/manager/options.js';
import { prometheusMetrics, type PrometheusMetrics } from '../../src/metrics/index.js';
import { KubeApiError } from '../../src/errors/api/KubeApiError.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { start, type Running } from './harness.js';

/** `nginx:1.25` → nginx, 1.25; `nginx` → nginx and no tag (the mutating webhook defaults it). */
function splitImage(image: string): { repository: string; tag?: string } {
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? { repository: image.slice(0, colon), tag: image.slice(colon + 1) } : { repository: image };
}

const status = z.object({ readyReplicas: z.number().int().optional() });
const Website = customResource({
  group: 'example.com',
  kind: 'Website',
  versions: {
    v1: { spec: z.object({ image: z.string(), replicas: z.number().int() }), status, subresources: { status: true } },
    v2: { spec: z.object({ repository: z.string(), tag: z.string().optional(), replicas: z.number().int() }), status, subresources: { status: true }, storage: true },
  },
  conversion: {
    v1: {
      toStorage: ({ metadata, spec, status: s }) => ({ apiVersion: 'example.com/v2', kind: 'Website', metadata, spec: { ...splitImage(spec.image), replicas: spec.replicas }, ...(s ? { status: s } : {}) }),
      fromStorage: ({ metadata, spec, status: s }) => ({
        apiVersion: 'example.com/v1',
        kind: 'Website',
        metadata,
        spec: { image: spec.tag === undefined ? spec.repository : `${spec.repository}:${spec.tag}`, replicas: spec.replicas },
        ...(s ? { status: s } : {}),
      }),
    },
  },
});
const WebsiteV1 = Website.forVersion('v1');

const validateWebsite = admission.validating(Website, ({ object }) =>
  object !== undefined && object.spec.replicas > 10 ? admission.deny('spec.replicas: at most 10', { field: 'spec.replicas' }) : admission.allow());
const defaultWebsite = admission.mutating(Website, ({ object }) => ({ ...object, spec: { ...object.spec, tag: object.spec.tag ?? 'latest' } }));
const convertWebsite = admission.conversion(Website);
const protectWebsite = admission.validating(
  Website,
  ({ oldObject }) => (oldObject.metadata?.labels?.['protected'] === 'true' ? admission.deny(`${oldObject.metadata.name ?? ''} is protected`) : admission.allow()),
  { operations: ['DELETE'], path: '/validate-website-deletion', name: 'vwebsite-deletion.example.com' },
);
const webhooks: readonly Webhook[] = [validateWebsite, protectWebsite, defaultWebsite, convertWebsite];

const NAME = 'website-webhooks';
const VALIDATING = 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MUTATING = 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const CRDS = 'apiextensions.k8s.io/v1/customresourcedefinitions';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  reported.length = 0;
});
beforeAll(() => setErrorReporter((err) => void reported.push(err as Error)));
afterAll(() => setErrorReporter(undefined));
const reported: Error[] = [];

async function simulator(): Promise<ApiServer> {
  const server = await startApiServer();
  closers.push(() => server.close());
  return server;
}

/** Starts a manager and resolves the webhook server's port and URL (its `serving` event's) once it listens. */
async function serve(opts: ManagerOptions): Promise<{ running: Running; port: number; url: string }> {
  const running = start(opts);
  closers.push(() => (running.ended === undefined ? running.stop() : undefined));
  const serving = await waitFor(() => {
    const e = running.events.find((x) => x.type === 'serving' && x.server === 'webhooks');
    return e?.type === 'serving' && e;
  }, 'the webhook server listening');
  return { running, port: serving.port, url: serving.url };
}

/** Applies what webhookManifests gives (the CRD first) through objectClient, as `kubectl apply` of its output would. */
async function register(server: ApiServer, url: string, caBundle?: string): Promise<readonly object[]> {
  const manifests = webhookManifests({ name: NAME, webhooks, clientConfig: { url }, customResources: [Website], ...(caBundle === undefined ? {} : { caBundle }) });
  const kc = server.kubeConfig();
  for (const m of manifests) {
    const kind = (m as { kind: string }).kind;
    const resource = kind === 'CustomResourceDefinition' ? CRDS : kind === 'ValidatingWebhookConfiguration' ? VALIDATING : MUTATING;
    await objectClient(kc, resource).apply(m as never, { fieldManager: 'spec', force: true });
  }
  return manifests;
}

/** The CA bundles (base64) the simulator holds for the two configurations' entries and the CRD's conversion. */
function bundles(server: ApiServer): (string | undefined)[] {
  const v = server.get<V1ValidatingWebhookConfiguration>(VALIDATING, undefined, NAME);
  const m = server.get<V1MutatingWebhookConfiguration>(MUTATING, undefined, NAME);
  const crd = server.get<V1CustomResourceDefinition>(CRDS, undefined, 'websites.example.com');
  return [...(v?.webhooks ?? [undefined]).map((w) => w?.clientConfig.caBundle), ...(m?.webhooks ?? [undefined]).map((w) => w?.clientConfig.caBundle), crd?.spec.conversion?.webhook?.clientConfig?.caBundle];
}

const v1 = (name: string, image: string, replicas: number) => ({ apiVersion: 'example.com/v1' as const, kind: 'Website' as const, metadata: { name }, spec: { image, replicas } });

async function refusal(p: Promise<unknown>): Promise<KubeApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof KubeApiError)) throw new Error(`expected a KubeApiError, got ${String(err)}`);
  return err;
}

/** The value of a webhook metric's series, read from the registry. */
async function sample(metrics: PrometheusMetrics, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const m = await metrics.registry.getSingleMetric(name)?.get();
  return m?.values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want) && (v as { metricName?: string }).metricName !== `${name}_sum`)?.value;
}

describe('the webhook loop against the simulator, with provisioned certificates', () => {
  async function loop(): Promise<{ server: ApiServer; running: Running; port: number; metrics: PrometheusMetrics }> {
    const server = await simulator();
    const kc = server.kubeConfig();
    const metrics = prometheusMetrics({ defaultMetrics: false });
    const { running, port, url } = await serve({
      controllers: [],
      webhooks,
      webhookBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '0',
      metrics,
      metricsBindAddress: '0',
      webhookCertificates: { kubeConfig: kc, name: NAME, service: { namespace: 'default', name: NAME }, hosts: ['127.0.0.1'], customResources: [Website] },
    });
    expect(url).toBe(`https://127.0.0.1:${port}`);
    await register(server, url);
    // The provisioner writes the CA bundle into what it finds once it appears; until then kube-apiserver (and
    // the simulator) would trust only the system roots.
    await waitFor(() => bundles(server).every((b) => b !== undefined && b !== '') && bundles(server), 'the CA bundle in every configuration and the CRD');
    return { server, running, port, metrics };
  }

  it('registers what webhookManifests gives: the CRD converting at /convert, and an entry per admission webhook', async () => {
    const server = await simulator();
    const manifests = await register(server, 'https://127.0.0.1:4443');
    expect(manifests.map((m) => (m as { kind: string }).kind)).toEqual(['CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']);
    expect(manifests[0]).toEqual(Website.crd({ conversionWebhook: { url: 'https://127.0.0.1:4443/convert' } }));
    expect(server.get<V1ValidatingWebhookConfiguration>(VALIDATING, undefined, NAME)?.webhooks?.[0]?.clientConfig.url).toBe(`https://127.0.0.1:4443${validateWebsite.path}`);
  });

  it('refuses an invalid Website with the handler message in kube-apiserver wording, and patches a default in', async () => {
    const { server } = await loop();
    const sites = objectClient(server.kubeConfig(), WebsiteV1, { namespace: 'default' });
    const err = await refusal(sites.create(v1('big', 'nginx:1.25', 11)));
    expect(err.status).toBe(403);
    expect(err.reason).toBe('Forbidden');
    expect(err.serverMessage).toBe(`admission webhook "${validateWebsite.options.name}" denied the request: spec.replicas: at most 10`);
    expect(err.details?.details?.causes).toEqual([expect.objectContaining({ field: 'spec.replicas' })]);
    expect(server.get(Website, 'default', 'big')).toBeUndefined();

    const created = await sites.create(v1('small', 'nginx', 2));
    // Written as v1 without a tag, defaulted in v2 by the mutating webhook, answered as v1 again.
    expect(created).toMatchObject({ apiVersion: 'example.com/v1', spec: { image: 'nginx:latest', replicas: 2 } });
  });

  it('stores a v1 write as v2, reads it back as v1, and a v2 informer sees it', async () => {
    const { server } = await loop();
    const kc = server.kubeConfig();
    const sites = objectClient(kc, WebsiteV1, { namespace: 'default' });
    await sites.create(v1('shop', 'httpd:2.4', 3));
    expect(server.get(Website, 'default', 'shop')).toMatchObject({ apiVersion: 'example.com/v2', spec: { repository: 'httpd', tag: '2.4', replicas: 3 } });
    expect(await sites.get('shop')).toMatchObject({ apiVersion: 'example.com/v1', spec: { image: 'httpd:2.4', replicas: 3 } });
    expect((await sites.list()).items.map((s) => s.spec.image)).toEqual(['httpd:2.4']);

    const stored = informer(kubeSource(kc, Website, { namespace: 'default' }));
    const sub = stored.subscribe();
    closers.push(() => sub.unsubscribe());
    await waitFor(() => stored.store.getByKey('default/shop'), 'the v2 informer to see shop');
    expect(stored.store.getByKey('default/shop')).toMatchObject({ apiVersion: 'example.com/v2', spec: { repository: 'httpd', tag: '2.4' } });
    // A v1 informer's watch converts each event.
    const asV1 = informer(kubeSource(kc, WebsiteV1, { namespace: 'default' }));
    const sub1 = asV1.subscribe();
    closers.push(() => sub1.unsubscribe());
    await waitFor(() => asV1.status().synced, 'the v1 informer synced');
    await sites.patch('shop', { spec: { image: 'httpd:2.5' } }, { type: 'merge' });
    await waitFor(() => asV1.store.getByKey('default/shop')?.spec.image === 'httpd:2.5' && stored.store.getByKey('default/shop')?.spec.tag === '2.5', 'both informers to see the patch');
  });

  it('admits updates, patches through v1, dry runs, generated names and deletes as kube-apiserver would', async () => {
    const { server } = await loop();
    const kc = server.kubeConfig();
    const sites = objectClient(kc, WebsiteV1, { namespace: 'default' });
    await sites.create(v1('shop', 'httpd:2.4', 3));
    const patched = await refusal(sites.patch('shop', { spec: { replicas: 20 } }, { type: 'merge' }));
    expect(patched.serverMessage).toBe(`admission webhook "${validateWebsite.options.name}" denied the request: spec.replicas: at most 10`);
    const current = await sites.get('shop');
    const replaced = await refusal(sites.replace({ ...current, spec: { ...current.spec, replicas: 11 } }));
    expect(replaced.status).toBe(403);
    // An update that drops the tag gets the default again.
    expect(await sites.replace({ ...current, spec: { image: 'httpd', replicas: 4 } })).toMatchObject({ spec: { image: 'httpd:latest', replicas: 4 } });

    const dry = await objectClient(kc, WebsiteV1, { namespace: 'default', dryRun: true }).create(v1('dry', 'nginx', 1));
    expect(dry).toMatchObject({ spec: { image: 'nginx:latest' } });
    expect(server.get(Website, 'default', 'dry')).toBeUndefined();
    expect(await refusal(objectClient(kc, WebsiteV1, { namespace: 'default', dryRun: true }).create(v1('dry', 'nginx', 11)))).toMatchObject({ status: 403 });

    // ObjectMeta has no generateName field (yet): the mutating webhook sees the name as '' (the name is made after it).
    const generated = await sites.create({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { generateName: 'shop-' } as { name?: string }, spec: { image: 'nginx', replicas: 1 } });
    expect(generated.metadata?.name).toMatch(/^shop-[a-z0-9]{5}$/);
    expect(generated.spec.image).toBe('nginx:latest');

    await sites.delete('shop');
    await waitFor(async () => (await sites.list()).items.every((s) => s.metadata?.name !== 'shop'), 'shop deleted');
  });

  it('calls a webhook registered for v1 with the objects converted to v1, whichever version is written', async () => {
    const server = await simulator();
    const kc = server.kubeConfig();
    const seen: string[] = [];
    const noLatestV1 = admission.validating(WebsiteV1, ({ object }) => {
      seen.push(`${object?.apiVersion} ${object?.spec.image}`);
      return object?.spec.image.endsWith(':latest') === true ? admission.deny('spec.image: pin a tag other than latest', { field: 'spec.image' }) : admission.allow();
    });
    const labelV1 = admission.mutating(WebsiteV1, ({ object }) => ({ ...object, metadata: { ...object.metadata, labels: { ...object.metadata?.labels, 'seen-as': object.apiVersion.split('/')[1] ?? '' } } }));
    const hooks = [noLatestV1, labelV1, convertWebsite];
    const { url } = await serve({
      controllers: [],
      webhooks: hooks,
      webhookBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '0',
      webhookCertificates: { kubeConfig: kc, name: NAME, service: { namespace: 'default', name: NAME }, hosts: ['127.0.0.1'], customResources: [Website] },
    });
    for (const m of webhookManifests({ name: NAME, webhooks: hooks, clientConfig: { url }, customResources: [Website] })) {
      const kind = (m as { kind: string }).kind;
      await objectClient(kc, kind === 'CustomResourceDefinition' ? CRDS : kind === 'ValidatingWebhookConfiguration' ? VALIDATING : MUTATING).apply(m as never, { fieldManager: 'spec', force: true });
    }
    const v = (): V1ValidatingWebhookConfiguration | undefined => server.get<V1ValidatingWebhookConfiguration>(VALIDATING, undefined, NAME);
    await waitFor(() => bundles(server).every((b) => b !== undefined && b !== ''), 'the CA bundles');
    expect(v()?.webhooks?.[0]?.rules?.[0]).toMatchObject({ apiVersions: ['v1'], resources: ['websites'] });

    const stored = objectClient(kc, Website, { namespace: 'default' });
    const err = await refusal(stored.create({ apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'a' }, spec: { repository: 'nginx', tag: 'latest', replicas: 1 } }));
    expect(err.serverMessage).toBe(`admission webhook "${noLatestV1.options.name}" denied the request: spec.image: pin a tag other than latest`);
    await objectClient(kc, WebsiteV1, { namespace: 'default' }).create(v1('b', 'nginx:1.25', 1));
    expect(seen).toEqual(['example.com/v1 nginx:latest', 'example.com/v1 nginx:1.25']);
    // The mutating webhook's patch, made on the v1 object, is converted back and stored in v2.
    expect(server.get<{ metadata: { labels?: Record<string, string> } }>(Website, 'default', 'b')?.metadata.labels).toEqual({ 'seen-as': 'v1' });
  });

  it('lets a write through a slow webhook whose failurePolicy is Ignore, as kube-apiserver passes over a call that timed out', async () => {
    const server = await simulator();
    const kc = server.kubeConfig();
    const metrics = prometheusMetrics({ defaultMetrics: false });
    const slow = admission.validating(Website, ({ signal }) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))), {
      failurePolicy: 'Ignore',
      timeoutSeconds: 1,
      path: '/validate-slow',
      name: 'slow.example.com',
    });
    const hooks = [slow, convertWebsite];
    const { url } = await serve({
      controllers: [],
      webhooks: hooks,
      webhookBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '0',
      metrics,
      metricsBindAddress: '0',
      webhookCertificates: { kubeConfig: kc, name: NAME, service: { namespace: 'default', name: NAME }, hosts: ['127.0.0.1'], customResources: [Website] },
    });
    for (const m of webhookManifests({ name: NAME, webhooks: hooks, clientConfig: { url }, customResources: [Website] })) {
      await objectClient(kc, (m as { kind: string }).kind === 'CustomResourceDefinition' ? CRDS : VALIDATING).apply(m as never, { fieldManager: 'spec', force: true });
    }
    await waitFor(() => bundles(server).slice(0, 1).concat(bundles(server).slice(-1)).every((b) => b !== undefined && b !== ''), 'the CA bundles');
    const stored = objectClient(kc, Website, { namespace: 'default' });
    expect(await stored.create({ apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'a' }, spec: { repository: 'nginx', replicas: 1 } })).toMatchObject({ metadata: { name: 'a' } });
    // The overrun is still a failure of the webhook's, counted (and reported).
    expect(await sample(metrics, 'rxkube_webhook_failures_total', { webhook: '/validate-slow', failure: 'timeout' })).toBe(1);
    expect(reported.map((e) => e.message)).toContainEqual(expect.stringMatching(/^admission webhook slow\.example\.com: the handler overran its deadline .*; allowed, as its failurePolicy is Ignore\)$/));
  });

  it('converts status writes through v1 without admitting them, and guards deletes through v1 with the stored object', async () => {
    const { server, metrics } = await loop();
    const sites = objectClient(server.kubeConfig(), WebsiteV1, { namespace: 'default' });
    const created = await sites.create({ ...v1('keep', 'nginx:1', 1), metadata: { name: 'keep', labels: { protected: 'true' } } });
    const admitted = (): Promise<number | undefined> => sample(metrics, 'controller_runtime_webhook_requests_total', { webhook: validateWebsite.path, code: '200' });
    const before = await admitted();
    expect(await sites.replaceStatus({ ...created, status: { readyReplicas: 1 } })).toMatchObject({ apiVersion: 'example.com/v1', status: { readyReplicas: 1 } });
    // The rules name `websites`, not `websites/status`.
    expect(await admitted()).toBe(before);
    expect(server.get<{ status?: object }>(Website, 'default', 'keep')?.status).toEqual({ readyReplicas: 1 });
    const err = await refusal(sites.delete('keep'));
    expect(err.serverMessage).toBe('admission webhook "vwebsite-deletion.example.com" denied the request: keep is protected');
    await sites.patch('keep', { metadata: { labels: { protected: null } } }, { type: 'merge' });
    await sites.delete('keep');
    expect(server.get(Website, 'default', 'keep')).toBeUndefined();
  });

  it('a v1 informer rides out the conversion webhook going away and catches up once it is back', async () => {
    const { server, running, port } = await loop();
    const kc = server.kubeConfig();
    await objectClient(kc, WebsiteV1, { namespace: 'default' }).create(v1('shop', 'httpd:2.4', 1));
    const errors: Error[] = [];
    const asV1 = informer(kubeSource(kc, WebsiteV1, { namespace: 'default' }), { reflector: { backoff: { initialMs: 20, maxMs: 100 } }, onError: (e) => errors.push(e) });
    const sub = asV1.subscribe();
    closers.push(() => sub.unsubscribe());
    await waitFor(() => asV1.status().synced, 'the v1 informer synced');
    await running.stop();

    // Written past the webhooks (they are down): the watch cannot convert the event.
    server.patch(Website, 'default', 'shop', { spec: { tag: '2.5' } });
    await waitFor(() => errors.some((e) => /conversion webhook for example\.com\/v2, Kind=Website failed/.test(e.message)), 'the informer to report the failed conversion');
    expect(asV1.store.getByKey('default/shop')?.spec.image).toBe('httpd:2.4');

    // The same port and the Secret's pair: the CA bundles still trust it.
    await serve({
      controllers: [],
      webhooks,
      webhookBindAddress: `127.0.0.1:${port}`,
      healthProbeBindAddress: '0',
      webhookCertificates: { kubeConfig: kc, name: NAME, service: { namespace: 'default', name: NAME }, hosts: ['127.0.0.1'], customResources: [Website] },
    });
    await waitFor(() => asV1.store.getByKey('default/shop')?.spec.image === 'httpd:2.5', 'the v1 informer to catch up');
  });

  it('takes server-side applies through v1, as a controller written against v1 sends them, admitted as any write', async () => {
    const { server } = await loop();
    const sites = objectClient(server.kubeConfig(), WebsiteV1, { namespace: 'default', fieldManager: 'website-controller' });
    expect(await sites.apply(v1('shop', 'httpd', 2))).toMatchObject({ apiVersion: 'example.com/v1', spec: { image: 'httpd:latest', replicas: 2 } });
    expect(await sites.apply(v1('shop', 'httpd:2.4', 3))).toMatchObject({ spec: { image: 'httpd:2.4', replicas: 3 } });
    expect(server.get(Website, 'default', 'shop')).toMatchObject({ spec: { repository: 'httpd', tag: '2.4', replicas: 3 } });
    const err = await refusal(sites.apply(v1('shop', 'httpd:2.4', 30)));
    expect(err.serverMessage).toBe(`admission webhook "${validateWebsite.options.name}" denied the request: spec.replicas: at most 10`);
    expect(await sites.applyStatus({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'shop' }, status: { readyReplicas: 3 } } as never)).toMatchObject({ status: { readyReplicas: 3 } });
    expect(server.get<{ status?: object }>(Website, 'default', 'shop')?.status).toEqual({ readyReplicas: 3 });
  });

  it('counts the requests in the webhook metrics', async () => {
    const { server, metrics } = await loop();
    const sites = objectClient(server.kubeConfig(), WebsiteV1, { namespace: 'default' });
    await refusal(sites.create(v1('big', 'nginx', 11)));
    await sites.create(v1('ok', 'nginx', 1));
    expect(await sample(metrics, 'controller_runtime_webhook_requests_total', { webhook: validateWebsite.path, code: '200' })).toBe(2);
    expect(await sample(metrics, 'controller_runtime_webhook_requests_total', { webhook: defaultWebsite.path, code: '200' })).toBe(2);
    // Each create converted the body to v2; the one stored converted its answer back to v1.
    expect(await sample(metrics, 'controller_runtime_webhook_requests_total', { webhook: '/convert', code: '200' })).toBe(3);
    expect(await sample(metrics, 'controller_runtime_webhook_requests_in_flight', { webhook: '/convert' })).toBe(0);
  });

  it('fails requests once the manager is stopped under failurePolicy Fail, and passes the webhooks over under Ignore', async () => {
    const { server, running, port } = await loop();
    const kc = server.kubeConfig();
    const sites = objectClient(kc, WebsiteV1, { namespace: 'default' });
    const stored = objectClient(kc, Website, { namespace: 'default' });
    await sites.create(v1('before', 'nginx', 1));
    expect(await running.stop()).toBe('completed');

    const err = await refusal(stored.create({ apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'after' }, spec: { repository: 'nginx', replicas: 12 } }));
    expect(err.status).toBe(500);
    expect(err.serverMessage).toBe(
      `Internal error occurred: failed calling webhook "${defaultWebsite.options.name}": Post "https://127.0.0.1:${port}${defaultWebsite.path}?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
    // Reading in the storage version needs no webhook; reading as v1 needs the conversion webhook, which has no failure policy.
    expect(await stored.get('before')).toMatchObject({ spec: { repository: 'nginx', tag: 'latest' } });
    const read = await refusal(sites.get('before'));
    expect(read.status).toBe(500);
    expect(read.serverMessage).toMatch(/^Internal error occurred: conversion webhook for example\.com\/v2, Kind=Website failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert\?timeout=30s": dial tcp .*connection refused$/);

    for (const resource of [VALIDATING, MUTATING] as const) {
      await objectClient(kc, resource).patch(NAME, [{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Ignore' }], { type: 'json' });
    }
    // Neither the default nor the check: an object the webhooks would have changed and refused is stored as sent.
    expect(await stored.create({ apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'after' }, spec: { repository: 'nginx', replicas: 12 } })).toMatchObject({ spec: { repository: 'nginx', replicas: 12 } });
    expect(server.get<{ spec: { tag?: string } }>(Website, 'default', 'after')?.spec.tag).toBeUndefined();
  });
});

describe('the webhook loop against the simulator, with certificates from a cert dir', () => {
  it("serves a pair rewritten on disk, and the simulator's next call succeeds against the new CA bundle", async () => {
    const server = await simulator();
    const kc = server.kubeConfig();
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-loop-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    /** A new CA and a serving pair it signed; `write()` puts the pair in the dir. */
    const issue = async (name: string): Promise<{ ca: string; write(): void }> => {
      const ca = await generateCa({ commonName: name, validityMs: 86_400_000 });
      const pair = await issueServing(ca, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], validityMs: 86_400_000 });
      // Written beside and renamed in, as the kubelet swaps a mounted Secret: never half a pair.
      const write = (): void => {
        writeFileSync(join(dir, 'tls.key.new'), pair.key);
        writeFileSync(join(dir, 'tls.crt.new'), pair.cert);
        renameSync(join(dir, 'tls.key.new'), join(dir, 'tls.key'));
        renameSync(join(dir, 'tls.crt.new'), join(dir, 'tls.crt'));
      };
      return { ca: ca.cert, write };
    };
    const first = await issue('first');
    first.write();
    const { port, url } = await serve({ controllers: [], webhooks, webhookBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0', webhookCertDir: dir });
    await register(server, url, first.ca);
    const sites = objectClient(kc, WebsiteV1, { namespace: 'default' });
    expect(await sites.create(v1('one', 'nginx', 1))).toMatchObject({ spec: { image: 'nginx:latest' } });

    // A cert-manager CA injector's part: the bundles trust the next CA only, while the old pair is still served.
    const second = await issue('second');
    await register(server, url, second.ca);
    const encoded = Buffer.from(second.ca).toString('base64');
    expect(bundles(server)).toEqual([encoded, encoded, encoded, encoded]);
    const untrusted = await refusal(sites.create(v1('two', 'nginx', 1)));
    expect(untrusted.status).toBe(500);
    // The body written as v1 is converted first, so the conversion webhook is the one that cannot be trusted.
    expect(untrusted.serverMessage).toBe(
      `Internal error occurred: conversion webhook for example.com/v1, Kind=Website failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
    );

    second.write();
    // The server picks the pair up as it watches the dir, not at once: wait until a create goes through.
    let last: unknown;
    await waitFor(
      () =>
        sites.create(v1('two', 'nginx', 1)).then(
          (o) => o,
          (e: unknown) => void (last = e),
        ),
      'a create through the rewritten pair',
      10_000,
      { describe: () => String(last), everyMs: 50 },
    );
    const err = await refusal(sites.create(v1('three', 'nginx', 11)));
    expect(err.serverMessage).toBe(`admission webhook "${validateWebsite.options.name}" denied the request: spec.replicas: at most 10`);
    expect(await sites.get('two')).toMatchObject({ spec: { image: 'nginx:latest' } });
  });
});
