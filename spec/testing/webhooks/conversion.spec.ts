import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../../src/testing/index.js';
import { waitFor } from '../../helpers/waitFor.js';
import { reviewAnswer, startWebhookServer, webhookEntry, type Answer, type WebhookServer } from './webhookServer.js';

type AnyObject = Record<string, any>;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function webhooks(answer: (path: string, review: AnyObject) => Answer | Promise<Answer>): Promise<WebhookServer> {
  const w = await startWebhookServer(answer);
  closers.push(() => w.close());
  return w;
}

const schema = (field: string) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { [field]: { type: 'string' } } } } } });

/** Websites served as v1 (`spec.color`) and v2 (`spec.colour`, stored), converted by `hooks` when given. */
function websites(hooks?: WebhookServer): AnyObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'websites.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'websites', singular: 'website', kind: 'Website', listKind: 'WebsiteList' },
      versions: [
        { name: 'v1', served: true, storage: false, schema: schema('color') },
        { name: 'v2', served: true, storage: true, schema: schema('colour') },
      ],
      conversion:
        hooks === undefined
          ? { strategy: 'None' }
          : { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${hooks.url}/convert`, caBundle: hooks.caBundle } } },
    },
  };
}

/** A converter between the two versions, answering every ConversionReview. */
function convert(review: AnyObject): AnyObject {
  const { uid, desiredAPIVersion, objects } = review['request'];
  const convertedObjects = (objects as AnyObject[]).map((o) => {
    const { color, colour, ...rest } = o['spec'] ?? {};
    const value = color ?? colour;
    const spec = desiredAPIVersion === 'example.com/v2' ? { ...rest, colour: value } : { ...rest, color: value };
    return { ...o, apiVersion: desiredAPIVersion, spec };
  });
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid, convertedObjects, result: { status: 'Success' } } };
}

async function send(server: ApiServer, method: string, path: string, body?: unknown): Promise<{ code: number; body: AnyObject }> {
  const res = await fetch(`${server.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { code: res.status, body: (await res.json()) as AnyObject };
}

const V1 = '/apis/example.com/v1/namespaces/default/websites';
const V2 = '/apis/example.com/v2/namespaces/default/websites';

describe('CRD conversion through a webhook', () => {
  it('stores an object written as v1 in v2 and reads it back as v1 through the webhook; v2 reads need no call', async () => {
    const hooks = await webhooks((_p, review) => convert(review));
    const server = await startApiServer({ crds: [websites(hooks)] });
    closers.push(() => server.close());
    const created = await send(server, 'POST', V1, { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'w' }, spec: { color: 'red' } });
    expect(created.code).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: 'example.com/v1', spec: { color: 'red' } });
    const stored = await send(server, 'GET', `${V2}/w`);
    expect(stored.body).toMatchObject({ apiVersion: 'example.com/v2', spec: { colour: 'red' } });
    expect(hooks.received.map((r) => r.body['request'].desiredAPIVersion)).toEqual(['example.com/v2', 'example.com/v1']);
    expect(hooks.received[0]?.path).toBe('/convert?timeout=30s');
    const calls = hooks.received.length;
    const read = await send(server, 'GET', `${V1}/w`);
    expect(read.body).toMatchObject({ apiVersion: 'example.com/v1', metadata: { name: 'w', namespace: 'default' }, spec: { color: 'red' } });
    expect(hooks.received.length).toBe(calls + 1);
    expect(hooks.received.at(-1)?.body).toMatchObject({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { desiredAPIVersion: 'example.com/v1', objects: [{ apiVersion: 'example.com/v2', spec: { colour: 'red' } }] } });
    // An update through v1 round-trips too.
    const updated = await send(server, 'PUT', `${V1}/w`, { ...read.body, spec: { color: 'blue' } });
    expect(updated.body).toMatchObject({ apiVersion: 'example.com/v1', spec: { color: 'blue' } });
    expect(server.get<AnyObject>('example.com/v2/websites', 'default', 'w')?.['spec']).toEqual({ colour: 'blue' });
    // A patch through v1 is applied in v1: its field names are v1's.
    const res = await fetch(`${server.url}${V1}/w`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { color: 'green' } }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as AnyObject)['spec']).toEqual({ color: 'green' });
    expect(server.get<AnyObject>('example.com/v2/websites', 'default', 'w')?.['spec']).toEqual({ colour: 'green' });
  });

  it('applies a server-side apply through v1 in v1, with ownership and conflicts in the storage version\'s fields', async () => {
    const hooks = await webhooks((_p, review) => convert(review));
    const server = await startApiServer({ crds: [websites(hooks)] });
    closers.push(() => server.close());
    const apply = async (manager: string, body: AnyObject, force = false): Promise<{ code: number; body: AnyObject }> => {
      const res = await fetch(`${server.url}${V1}/w?fieldManager=${manager}${force ? '&force=true' : ''}`, { method: 'PATCH', headers: { 'content-type': 'application/apply-patch+yaml' }, body: JSON.stringify(body) });
      return { code: res.status, body: (await res.json()) as AnyObject };
    };
    const site = (spec: AnyObject, labels?: AnyObject): AnyObject => ({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'w', ...(labels === undefined ? {} : { labels }) }, spec });
    const created = await apply('ops', site({ color: 'red' }));
    expect(created.code).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: 'example.com/v1', spec: { color: 'red' } });
    expect(server.get<AnyObject>('example.com/v2/websites', 'default', 'w')?.['spec']).toEqual({ colour: 'red' });

    const changed = await apply('ops', site({ color: 'blue' }, { team: 'web' }));
    expect(changed.code).toBe(200);
    expect(changed.body).toMatchObject({ apiVersion: 'example.com/v1', metadata: { labels: { team: 'web' } }, spec: { color: 'blue' } });
    expect(server.get<AnyObject>('example.com/v2/websites', 'default', 'w')?.['spec']).toEqual({ colour: 'blue' });

    // Ownership is the storage version's: the applier owns colour, and applies again without conflicting with itself.
    const owners = (): unknown[] => (server.get<AnyObject>('example.com/v2/websites', 'default', 'w')?.['metadata']['managedFields'] as AnyObject[]).map((e) => [e['manager'], e['operation'], e['fieldsV1']]);
    expect(owners()).toEqual([['ops', 'Apply', { 'f:metadata': { 'f:labels': { 'f:team': {} } }, 'f:spec': { 'f:colour': {} } }]]);
    expect((await apply('ops', site({ color: 'blue' }, { team: 'web' }))).code).toBe(200);
    // Another manager setting the same field conflicts, unless it forces; a field the applier stops sending goes.
    const conflict = await apply('other', site({ color: 'green' }));
    expect(conflict.code).toBe(409);
    expect(conflict.body['message']).toBe('Apply failed with 1 conflict: conflict with "ops": .spec.colour');
    expect((await apply('other', site({ color: 'green' }), true)).code).toBe(200);
    expect(server.get<AnyObject>('example.com/v2/websites', 'default', 'w')?.['spec']).toEqual({ colour: 'green' });
    expect((await apply('ops', site({}))).body['metadata'].labels).toBeUndefined();
    // A configuration of another version than the URL's is refused as for any apply.
    expect((await apply('ops', { ...site({ colour: 'red' }), apiVersion: 'example.com/v2' })).code).toBe(400);
  });

  it('converts every item of a list in one review, and every event of a watch in order', async () => {
    const hooks = await webhooks((_p, review) => convert(review));
    const server = await startApiServer({ crds: [websites(hooks)] });
    closers.push(() => server.close());
    for (const [name, colour] of [['a', 'red'], ['b', 'green']]) await send(server, 'POST', V2, { apiVersion: 'example.com/v2', kind: 'Website', metadata: { name }, spec: { colour } });
    expect(hooks.received).toEqual([]);
    const list = await send(server, 'GET', V1);
    expect(list.body['items'].map((o: AnyObject) => [o['apiVersion'], o['spec'].color])).toEqual([
      ['example.com/v1', 'red'],
      ['example.com/v1', 'green'],
    ]);
    expect(hooks.received.map((r) => r.body['request'].objects.length)).toEqual([2]);

    const controller = new AbortController();
    const res = await fetch(`${server.url}${V1}?watch=true&resourceVersion=${list.body['metadata'].resourceVersion}`, { signal: controller.signal });
    const lines: AnyObject[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let text = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        const parts = text.split('\n');
        text = parts.pop() ?? '';
        for (const p of parts) lines.push(JSON.parse(p) as AnyObject);
      }
    })().catch(() => undefined);
    await send(server, 'POST', V2, { apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'c' }, spec: { colour: 'blue' } });
    await send(server, 'DELETE', `${V2}/a`);
    await waitFor(() => lines.length >= 2, 'two watch events');
    controller.abort();
    await reading;
    expect(lines.map((e) => [e['type'], e['object'].apiVersion, e['object'].metadata.name, e['object'].spec.color])).toEqual([
      ['ADDED', 'example.com/v1', 'c', 'blue'],
      ['DELETED', 'example.com/v1', 'a', 'red'],
    ]);
  });

  it('fails a read with kube-apiserver\'s 500 when the webhook fails, refuses, or changes what it may not', async () => {
    let mode: 'refuse' | 'rename' | 'ok' = 'ok';
    const hooks = await webhooks((_p, review) => {
      const answer = convert(review);
      if (mode === 'refuse') answer['response'].result = { status: 'Failure', message: 'cannot convert' };
      if (mode === 'rename') answer['response'].convertedObjects[0].metadata.name = 'other';
      return answer;
    });
    const server = await startApiServer({ crds: [websites(hooks)] });
    closers.push(() => server.close());
    await send(server, 'POST', V2, { apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'w' }, spec: { colour: 'red' } });
    mode = 'refuse';
    const refused = await send(server, 'GET', `${V1}/w`);
    expect(refused.code).toBe(500);
    expect(refused.body['message']).toBe('Internal error occurred: conversion webhook for example.com/v2, Kind=Website failed: cannot convert');
    mode = 'rename';
    expect((await send(server, 'GET', `${V1}/w`)).body['message']).toBe(
      'Internal error occurred: conversion webhook for example.com/v2, Kind=Website returned invalid converted object at index 0: must have the same name: w != other',
    );
    await hooks.close();
    const gone = await send(server, 'GET', `${V1}/w`);
    expect(gone.body['message']).toMatch(/^Internal error occurred: conversion webhook for example.com\/v2, Kind=Website failed: Post "https:\/\/127.0.0.1:\d+\/convert\?timeout=30s": dial tcp 127.0.0.1:\d+: connect: connection refused$/);
  });

  it('with matchPolicy Equivalent, calls an admission webhook registered for v1 on a write through v2, in v1', async () => {
    const hooks = await webhooks((_p, review) => reviewAnswer(review));
    const server = await startApiServer({ crds: [websites()] });
    closers.push(() => server.close());
    const rules = [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['websites'] }];
    await server.create('admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      metadata: { name: 'v' },
      webhooks: [webhookEntry(hooks, 'equivalent.example.com', '/equivalent', { rules }), webhookEntry(hooks, 'exact.example.com', '/exact', { rules, matchPolicy: 'Exact' })],
    });
    expect((await send(server, 'POST', V2, { apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'w' }, spec: { colour: 'red' } })).code).toBe(201);
    expect(hooks.received.map((r) => r.path.split('?')[0])).toEqual(['/equivalent']);
    expect(hooks.received[0]?.body['request']).toMatchObject({
      kind: { group: 'example.com', version: 'v1', kind: 'Website' },
      resource: { group: 'example.com', version: 'v1', resource: 'websites' },
      requestKind: { group: 'example.com', version: 'v2', kind: 'Website' },
      object: { apiVersion: 'example.com/v1' },
    });
  });

  it('sends an admission webhook registered for v1 the object converted to v1 by the conversion webhook, and converts its patch back', async () => {
    const hooks = await webhooks((path, review) => {
      if (path.startsWith('/convert')) return convert(review);
      if (path.startsWith('/mutate')) return reviewAnswer(review, { patch: [{ op: 'replace', path: '/spec/color', value: `${review['request'].object.spec.color}-checked` }] });
      return reviewAnswer(review);
    });
    const server = await startApiServer({ crds: [websites(hooks)] });
    closers.push(() => server.close());
    const rules = [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['websites'] }];
    await server.create('admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', { metadata: { name: 'm' }, webhooks: [webhookEntry(hooks, 'm.example.com', '/mutate', { rules })] });
    await server.create('admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { metadata: { name: 'v' }, webhooks: [webhookEntry(hooks, 'v.example.com', '/validate', { rules })] });
    const created = await send(server, 'POST', V2, { apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'w' }, spec: { colour: 'red' } });
    expect(created.code).toBe(201);
    expect(created.body['spec']).toEqual({ colour: 'red-checked' });
    const mutated = hooks.received.find((r) => r.path.startsWith('/mutate'))?.body['request'];
    expect(mutated).toMatchObject({ kind: { version: 'v1' }, requestKind: { version: 'v2' }, object: { apiVersion: 'example.com/v1', spec: { color: 'red' } } });
    const validated = hooks.received.find((r) => r.path.startsWith('/validate'))?.body['request'];
    expect(validated.object).toMatchObject({ apiVersion: 'example.com/v1', spec: { color: 'red-checked' } });
  });
});
