import { describe, expect, it } from 'vitest';
import type { ApiServer } from '../../../src/testing/index.js';
import { websiteCrd } from '../crdFixtures.js';
import { MWC, register, VWC, webhookFixtures } from './fixtures.js';
import { reviewAnswer, webhookEntry } from './webhookServer.js';

// What admission webhooks see when the request is decoded, raced by another write, or made in a namespace
// that does not exist: kube-apiserver's behaviour in each case.

type AnyObject = Record<string, any>;

const { simulator, webhooks } = webhookFixtures();

async function send(server: ApiServer, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ code: number; body: AnyObject }> {
  const res = await fetch(`${server.url}${path}`, { method, headers: { 'content-type': contentType }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { code: res.status, body: (await res.json()) as AnyObject };
}

/** The Website CRD with `spec.colour` defaulted to blue and `spec.probe.path` to /healthz. */
function defaultingCrd(): AnyObject {
  const crd = websiteCrd();
  const spec = crd['spec'].versions[0].schema.openAPIV3Schema.properties.spec;
  spec.properties.colour = { type: 'string', default: 'blue' };
  spec.properties.probe = { type: 'object', properties: { path: { type: 'string', default: '/healthz' } } };
  return crd;
}

const WEBSITES = '/apis/example.com/v1/namespaces/default/websites';
const websiteRules = [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['websites'] }];

describe('what mutating webhooks see of a decoded request', () => {
  it('defaults and prunes a create or update before the mutating webhooks, as a patch is, so "set only if missing" agrees with kube-apiserver', async () => {
    const seen: AnyObject[] = [];
    const hooks = await webhooks((path, review) => {
      const spec = review['request'].object.spec ?? {};
      seen.push({ path: path.split('?')[0], spec });
      if (path.startsWith('/colour')) return reviewAnswer(review, spec.colour === undefined ? { patch: [{ op: 'add', path: '/spec/colour', value: 'red' }] } : {});
      return reviewAnswer(review, spec.probe === undefined ? { patch: [{ op: 'add', path: '/spec/probe', value: {} }] } : {});
    });
    const server = await simulator({ crds: [defaultingCrd()] });
    await register(server, MWC, 'a-colour', [webhookEntry(hooks, 'colour.example.com', '/colour', { rules: websiteRules })]);
    await register(server, MWC, 'b-probe', [webhookEntry(hooks, 'probe.example.com', '/probe', { rules: websiteRules })]);
    await register(server, MWC, 'c-watch', [webhookEntry(hooks, 'watch.example.com', '/watch', { rules: websiteRules })]);

    const created = await send(server, 'POST', WEBSITES, { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'w' }, spec: { image: 'nginx', unknown: 1 } });
    expect(created.code).toBe(201);
    expect(created.body['spec']).toEqual({ image: 'nginx', colour: 'blue', probe: { path: '/healthz' } });
    // The first webhook saw the body pruned and defaulted; the last saw the probe the second patched in, defaulted.
    expect(seen[0]).toEqual({ path: '/colour', spec: { image: 'nginx', colour: 'blue' } });
    expect(seen[2]).toEqual({ path: '/watch', spec: { image: 'nginx', colour: 'blue', probe: { path: '/healthz' } } });

    const current = await send(server, 'GET', `${WEBSITES}/w`);
    const updated = await send(server, 'PUT', `${WEBSITES}/w`, { ...current.body, spec: { image: 'httpd' } });
    expect(updated.code).toBe(200);
    expect(updated.body['spec']).toEqual({ image: 'httpd', colour: 'blue', probe: { path: '/healthz' } });

    const patched = await send(server, 'PATCH', `${WEBSITES}/w`, { spec: { colour: null, probe: null } }, 'application/merge-patch+json');
    expect(patched.code).toBe(200);
    expect(patched.body['spec']).toEqual({ image: 'httpd', colour: 'blue', probe: { path: '/healthz' } });
  });
});

describe('a namespaceSelector on a namespace that does not exist', () => {
  const configMaps = [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];
  const namespaces = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] }];
  const teamA = { matchLabels: { team: 'a' } };

  it('fails the request with 404 NotFound whatever the failure policy, once the rules and the object selector match, as kube-apiserver does', async () => {
    const hooks = await webhooks((_p, review) => reviewAnswer(review));
    const server = await simulator();
    await register(server, VWC, 'selective', [
      webhookEntry(hooks, 'team.example.com', '/team', { rules: configMaps, namespaceSelector: teamA, objectSelector: { matchLabels: { checked: 'yes' } }, failurePolicy: 'Ignore' }),
    ]);
    const cm = (name: string, labels: AnyObject) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { a: '1' } });

    const refused = await send(server, 'POST', '/api/v1/namespaces/ghost/configmaps', cm('one', { checked: 'yes' }));
    expect(refused.code).toBe(404);
    expect(refused.body).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'namespaces "ghost" not found', details: { name: 'ghost', kind: 'namespaces' } });
    expect(server.get('v1/configmaps', 'ghost', 'one')).toBeUndefined();

    // The object selector does not match: the webhook is not called, so the missing namespace does not matter.
    expect((await send(server, 'POST', '/api/v1/namespaces/ghost/configmaps', cm('two', { checked: 'no' }))).code).toBe(201);

    // Once the namespace exists, its labels decide.
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ghost', labels: { team: 'a' } } });
    expect((await send(server, 'POST', '/api/v1/namespaces/ghost/configmaps', cm('three', { checked: 'yes' }))).code).toBe(201);
    expect(hooks.received.map((r) => r.body['request'].name)).toEqual(['three']);
  });

  it('judges a namespace being created by its own labels', async () => {
    const hooks = await webhooks((_p, review) => reviewAnswer(review));
    const server = await simulator();
    await register(server, VWC, 'selective', [webhookEntry(hooks, 'team.example.com', '/team', { rules: namespaces, namespaceSelector: teamA })]);
    const ns = (name: string, labels: AnyObject) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    expect((await send(server, 'POST', '/api/v1/namespaces', ns('labelled', { team: 'a' }))).code).toBe(201);
    expect((await send(server, 'POST', '/api/v1/namespaces', ns('other', { team: 'b' }))).code).toBe(201);
    expect(hooks.received.map((r) => r.body['request'].name)).toEqual(['labelled']);
  });
});

/** A promise a spec opens by hand. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('a write that lands while the webhooks are called', () => {
  const SVC = '/api/v1/namespaces/default/services';
  const services = [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['services'] }];

  /** Webhooks whose first call waits until the spec has made its concurrent write; every call's object is recorded. */
  async function blockingWebhooks(patch?: (review: AnyObject) => AnyObject[]) {
    const called = gate();
    const release = gate();
    const seen: AnyObject[] = [];
    const hooks = await webhooks(async (path, review) => {
      seen.push({ path: path.split('?')[0], object: review['request'].object, old: review['request'].oldObject });
      if (seen.length === 1) {
        called.open();
        await release.opened;
      }
      return reviewAnswer(review, path.startsWith('/m') && patch !== undefined ? { patch: patch(review) } : {});
    });
    return { hooks, called, release, seen };
  }

  it('keeps the status written meanwhile on an unconditional PUT of a built-in with a status subresource, admitting the PUT again on it', async () => {
    const { hooks, called, release, seen } = await blockingWebhooks();
    const server = await simulator();
    await server.create('v1/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc', namespace: 'default' }, spec: { ports: [{ port: 80 }] } });
    await register(server, VWC, 'v', [webhookEntry(hooks, 'v.example.com', '/v', { rules: services })]);

    const put = send(server, 'PUT', `${SVC}/svc`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc', namespace: 'default' }, spec: { ports: [{ port: 8080 }] } });
    await called.opened;
    const status = { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } };
    expect((await send(server, 'PATCH', `${SVC}/svc/status`, { status }, 'application/merge-patch+json')).code).toBe(200);
    release.open();

    const answered = await put;
    expect(answered.code).toBe(200);
    expect(answered.body['spec'].ports).toEqual([{ port: 8080 }]);
    expect(answered.body['status']).toEqual(status);
    expect(server.get('v1/services', 'default', 'svc')?.['status']).toEqual(status);
    // Admitted again on the object with the new status.
    expect(seen).toHaveLength(2);
    expect(seen[1]?.old.status).toEqual(status);
  });

  const configMaps = [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];
  const CM_ONE = '/api/v1/namespaces/default/configmaps/one';

  async function withConfigMap(): Promise<ApiServer> {
    const server = await simulator();
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'default' }, data: { a: '1' } });
    return server;
  }

  it('admits a PATCH a mutating webhook changed again on the newer object instead of answering 409, when it has no precondition', async () => {
    const { hooks, called, release, seen } = await blockingWebhooks(() => [{ op: 'add', path: '/metadata/annotations', value: { stamped: 'yes' } }]);
    const server = await withConfigMap();
    await register(server, MWC, 'm', [webhookEntry(hooks, 'm.example.com', '/m', { rules: configMaps })]);

    const patch = send(server, 'PATCH', CM_ONE, { data: { b: '2' } }, 'application/merge-patch+json');
    await called.opened;
    await server.patch('v1/configmaps', 'default', 'one', { data: { c: '3' } });
    release.open();
    const answered = await patch;
    expect(answered.code).toBe(200);
    expect(answered.body['data']).toEqual({ a: '1', b: '2', c: '3' });
    expect(answered.body['metadata'].annotations).toEqual({ stamped: 'yes' });
    expect(seen.map((c) => c.object.data)).toEqual([{ a: '1', b: '2' }, { a: '1', b: '2', c: '3' }]);
  });

  it('writes a PATCH the webhooks left alone only as the validating webhooks saw it: admitted again on the newer object', async () => {
    const { hooks, called, release, seen } = await blockingWebhooks();
    const server = await withConfigMap();
    await register(server, VWC, 'v', [webhookEntry(hooks, 'v.example.com', '/v', { rules: configMaps })]);

    const patch = send(server, 'PATCH', CM_ONE, { data: { b: '2' } }, 'application/merge-patch+json');
    await called.opened;
    await server.patch('v1/configmaps', 'default', 'one', { data: { c: '3' } });
    release.open();
    expect((await patch).code).toBe(200);
    const stored = server.get('v1/configmaps', 'default', 'one') as AnyObject;
    expect(stored['data']).toEqual({ a: '1', b: '2', c: '3' });
    expect(seen.map((c) => c.object.data)).toEqual([{ a: '1', b: '2' }, { a: '1', b: '2', c: '3' }]);
  });

  it('still answers 409 when the PATCH carries the resourceVersion the concurrent write made stale', async () => {
    const { hooks, called, release } = await blockingWebhooks(() => [{ op: 'add', path: '/metadata/annotations', value: { stamped: 'yes' } }]);
    const server = await withConfigMap();
    await register(server, MWC, 'm', [webhookEntry(hooks, 'm.example.com', '/m', { rules: configMaps })]);
    const rv = (server.get('v1/configmaps', 'default', 'one') as AnyObject)['metadata'].resourceVersion;
    const patch = send(server, 'PATCH', CM_ONE, { metadata: { resourceVersion: rv }, data: { b: '2' } }, 'application/merge-patch+json');
    await called.opened;
    await server.patch('v1/configmaps', 'default', 'one', { data: { c: '3' } });
    release.open();
    const answered = await patch;
    expect(answered.code).toBe(409);
    expect(answered.body['reason']).toBe('Conflict');
    expect(server.get('v1/configmaps', 'default', 'one')?.['data']).toEqual({ a: '1', c: '3' });
  });

  it('gives up with 409 Conflict after five attempts when every one is raced by another write', async () => {
    const server = await withConfigMap();
    let raced = 0;
    // Each call writes the object before answering, so every attempt finds it moved.
    const hooks = await webhooks(async (_path, review) => {
      await server.patch('v1/configmaps', 'default', 'one', { data: { raced: String(++raced) } });
      return reviewAnswer(review);
    });
    await register(server, VWC, 'v', [webhookEntry(hooks, 'v.example.com', '/v', { rules: configMaps })]);
    const answered = await send(server, 'PATCH', CM_ONE, { data: { b: '2' } }, 'application/merge-patch+json');
    expect(answered.code).toBe(409);
    expect(answered.body['message']).toBe('Operation cannot be fulfilled on configmaps "one": the object has been modified; please apply your changes to the latest version and try again');
    expect(hooks.received).toHaveLength(5);
    expect(server.get('v1/configmaps', 'default', 'one')?.['data']).toEqual({ a: '1', raced: '5' });
  });
});
