import { describe, expect, it } from 'vitest';
import type { ApiServer } from '../../../src/testing/index.js';
import { websiteCrd } from '../crdFixtures.js';
import { MWC, register, VWC, webhookFixtures } from './fixtures.js';
import { reviewAnswer, startWebhookServer, webhookEntry } from './webhookServer.js';

type AnyObject = Record<string, any>;

const { simulator, webhooks } = webhookFixtures();

interface Reply {
  code: number;
  body: AnyObject;
  warnings: string | null;
}

async function send(server: ApiServer, method: string, path: string, body?: unknown, contentType = 'application/json', token?: string): Promise<Reply> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': contentType, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { code: res.status, body: (await res.json()) as AnyObject, warnings: res.headers.get('warning') };
}

const CM = '/api/v1/namespaces/default/configmaps';
const configMap = (name: string, data: AnyObject = { a: '1' }, labels?: AnyObject) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data });

describe('the simulator calls admission webhooks', () => {
  it('calls mutating webhooks in configuration-name order, each seeing the patches before it, then validating ones on the patched object, with the review kube-apiserver sends', async () => {
    const calls: string[] = [];
    const hooks = await webhooks((path, review) => {
      calls.push(path.split('?')[0] as string);
      const data = review['request'].object?.data ?? {};
      if (path.startsWith('/m-first')) return reviewAnswer(review, { patch: [{ op: 'add', path: '/data/first', value: String(Object.keys(data).length) }] });
      if (path.startsWith('/m-second')) return reviewAnswer(review, { patch: [{ op: 'add', path: '/data/second', value: data.first ?? 'missing' }] });
      return reviewAnswer(review);
    });
    const server = await simulator({ token: 'admin', users: [{ token: 'alice', username: 'alice', groups: ['devs'], uid: 'a-1' }] });
    await register(server, VWC, 'validate', [webhookEntry(hooks, 'v.example.com', '/v')]);
    await register(server, MWC, 'z-config', [webhookEntry(hooks, 'second.example.com', '/m-second')]);
    await register(server, MWC, 'a-config', [webhookEntry(hooks, 'first.example.com', '/m-first')]);

    const created = await send(server, 'POST', `${CM}?fieldManager=spec`, configMap('one'), 'application/json', 'alice');
    expect(created.code).toBe(201);
    expect(created.body['data']).toEqual({ a: '1', first: '1', second: '1' });
    expect(server.get('v1/configmaps', 'default', 'one')?.['data']).toEqual({ a: '1', first: '1', second: '1' });
    expect(calls).toEqual(['/m-first', '/m-second', '/v']);
    expect(hooks.received[0]?.path).toBe('/m-first?timeout=10s');

    const [mutating, , validating] = hooks.received.map((r) => r.body);
    expect(mutating?.['apiVersion']).toBe('admission.k8s.io/v1');
    expect(mutating?.['kind']).toBe('AdmissionReview');
    const req = mutating?.['request'];
    expect(req.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(req).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'one',
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'alice', uid: 'a-1', groups: ['devs', 'system:authenticated'] },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'spec' },
    });
    // Mutating webhooks see the object as sent; validating ones see it as it would be stored.
    expect(req.object.metadata.uid).toBeUndefined();
    expect(validating?.['request'].object.data).toEqual({ a: '1', first: '1', second: '1' });
    expect(validating?.['request'].object.metadata.uid).toEqual(expect.any(String));
    expect(validating?.['request'].uid).not.toBe(req.uid);
  });

  it('answers a denial with the webhook\'s code and message in kube-apiserver\'s words, passes warnings on, and stores nothing', async () => {
    const hooks = await webhooks((_path, review) =>
      reviewAnswer(review, { allowed: false, warnings: ['think "twice"'], status: { code: 403, reason: 'Forbidden', message: 'data.a: must not be 1' } }),
    );
    const server = await simulator();
    await register(server, VWC, 'validate', [webhookEntry(hooks, 'v.example.com', '/v')]);
    const refused = await send(server, 'POST', CM, configMap('one'));
    expect(refused.code).toBe(403);
    expect(refused.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403, message: 'admission webhook "v.example.com" denied the request: data.a: must not be 1' });
    expect(refused.warnings).toBe('299 - "think \\"twice\\""');
    expect(server.list('v1/configmaps', 'default')).toEqual([]);
  });

  it('fails a request whose Fail webhook cannot be called with kube-apiserver\'s 500, and goes on past an Ignore one', async () => {
    const gone = await startWebhookServer(() => ({}));
    await gone.close();
    const server = await simulator();
    await register(server, VWC, 'ignored', [webhookEntry(gone, 'ignored.example.com', '/v', { failurePolicy: 'Ignore' })]);
    expect((await send(server, 'POST', CM, configMap('passes'))).code).toBe(201);
    await register(server, VWC, 'failing', [webhookEntry(gone, 'failing.example.com', '/v')]);
    const failed = await send(server, 'POST', CM, configMap('refused'));
    expect(failed.code).toBe(500);
    expect(failed.body['reason']).toBe('InternalError');
    const port = new URL(gone.url).port;
    expect(failed.body['message']).toBe(
      `Internal error occurred: failed calling webhook "failing.example.com": Post "https://127.0.0.1:${port}/v?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
  });

  it('gives up on a webhook that never answers after its timeoutSeconds', async () => {
    const hooks = await webhooks(() => 'hang');
    const server = await simulator();
    await register(server, VWC, 'slow', [webhookEntry(hooks, 'slow.example.com', '/v', { timeoutSeconds: 1 })]);
    const failed = await send(server, 'POST', CM, configMap('one'));
    expect(failed.code).toBe(500);
    expect(failed.body['message']).toBe(`Internal error occurred: failed calling webhook "slow.example.com": Post "${hooks.url}/v?timeout=1s": context deadline exceeded`);
    expect(hooks.received[0]?.path).toBe('/v?timeout=1s');
  });

  it('refuses an answer that is not a review of this request, and a webhook whose CA is not the one given', async () => {
    const hooks = await webhooks((path, review) => (path.startsWith('/wrong-uid') ? { ...reviewAnswer(review), response: { uid: 'other', allowed: true } } : { raw: 'x'.repeat(100), status: 500 }));
    const other = await webhooks((_p, review) => reviewAnswer(review));
    const server = await simulator();
    await register(server, VWC, 'a', [webhookEntry(hooks, 'uid.example.com', '/wrong-uid')]);
    const wrong = await send(server, 'POST', CM, configMap('one'));
    expect(wrong.body['message']).toMatch(/^Internal error occurred: failed calling webhook "uid.example.com": received invalid webhook response: expected response.uid="[0-9a-f-]{36}", got "other"$/);
    await server.delete(VWC, undefined, 'a');
    await register(server, VWC, 'b', [{ ...webhookEntry(other, 'ca.example.com', '/v'), clientConfig: { url: `${other.url}/v`, caBundle: hooks.caBundle } }]);
    const untrusted = await send(server, 'POST', CM, configMap('one'));
    expect(untrusted.body['message']).toContain('x509: certificate signed by unknown authority');
    expect(other.received).toEqual([]);
  });

  it('bounds and escapes what a hostile webhook answers: a huge or control-laden denial, an oversized body', async () => {
    const hooks = await webhooks((path, review) =>
      path.startsWith('/huge')
        ? { raw: JSON.stringify({ ...reviewAnswer(review), padding: 'x'.repeat(9 * 1024 * 1024) }) }
        : reviewAnswer(review, { allowed: false, status: { code: 200, message: `\u001b[31mred${'y'.repeat(10_000)}` } }),
    );
    const server = await simulator();
    await register(server, VWC, 'hostile', [webhookEntry(hooks, 'hostile.example.com', '/deny')]);
    const denied = await send(server, 'POST', CM, configMap('one'));
    // A code below 400 becomes 400, as kube-apiserver never answers a refusal with success.
    expect(denied.code).toBe(400);
    expect(denied.body['message']).toMatch(/^admission webhook "hostile.example.com" denied the request: \\x1b\[31mredy+$/);
    expect(denied.body['message'].length).toBeLessThan(5000);
    await server.delete(VWC, undefined, 'hostile');
    await register(server, VWC, 'huge', [webhookEntry(hooks, 'huge.example.com', '/huge')]);
    const huge = await send(server, 'POST', CM, configMap('one'));
    expect(huge.code).toBe(500);
    expect(huge.body['message']).toMatch(/failed calling webhook "huge.example.com": Post ".*": the response body is larger than 8388608 bytes$/);
  });

  it('refuses a dry run a webhook with side effects would see, and tells the others it is one', async () => {
    const hooks = await webhooks((_p, review) => reviewAnswer(review));
    const server = await simulator();
    await register(server, VWC, 'pure', [webhookEntry(hooks, 'pure.example.com', '/pure')]);
    const dry = await send(server, 'POST', `${CM}?dryRun=All`, configMap('one'));
    expect(dry.code).toBe(201);
    expect(hooks.received[0]?.body['request']).toMatchObject({ dryRun: true, options: { dryRun: ['All'] } });
    expect(server.list('v1/configmaps', 'default')).toEqual([]);
    await register(server, VWC, 'effects', [webhookEntry(hooks, 'effects.example.com', '/effects', { sideEffects: 'Some' })]);
    const refused = await send(server, 'POST', `${CM}?dryRun=All`, configMap('one'));
    expect(refused.code).toBe(400);
    expect(refused.body['message']).toBe('admission webhook "effects.example.com" does not support dry run');
    expect(hooks.received.filter((r) => r.path.startsWith('/effects'))).toEqual([]);
  });

  it('calls a webhook only for the operations, resources, subresources and scope its rules name', async () => {
    const hooks = await webhooks((_p, review) => reviewAnswer(review));
    const server = await simulator();
    const rule = (resources: string[], operations = ['*'], scope?: string) => ({ operations, apiGroups: ['*'], apiVersions: ['*'], resources, ...(scope ? { scope } : {}) });
    await register(server, VWC, 'rules', [
      webhookEntry(hooks, 'status.example.com', '/status', { rules: [rule(['pods/status'])] }),
      webhookEntry(hooks, 'delete.example.com', '/delete', { rules: [rule(['configmaps'], ['DELETE'])] }),
      webhookEntry(hooks, 'cluster.example.com', '/cluster', { rules: [rule(['*'], ['CREATE'], 'Cluster')] }),
    ]);
    const pods = '/api/v1/namespaces/default/pods';
    await send(server, 'POST', pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
    await send(server, 'POST', CM, configMap('c'));
    expect(hooks.received).toEqual([]);
    const pod = server.get('v1/pods', 'default', 'p');
    await send(server, 'PUT', `${pods}/p/status`, { ...pod, status: { phase: 'Running' } });
    await send(server, 'DELETE', `${CM}/c`);
    await send(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
    expect(hooks.received.map((r) => r.path.split('?')[0])).toEqual(['/status', '/delete', '/cluster']);
    const [status, deleted] = hooks.received.map((r) => r.body['request']);
    expect(status).toMatchObject({ operation: 'UPDATE', subResource: 'status', requestSubResource: 'status', name: 'p' });
    expect(status.object.status.phase).toBe('Running');
    expect(status.oldObject.status.phase).toBe('Pending');
    expect(deleted).toMatchObject({ operation: 'DELETE', object: null, options: { kind: 'DeleteOptions' } });
    expect(deleted.oldObject.metadata.name).toBe('c');
  });

  it('sends each object of a collection delete as a DELETE of its own, and deletes none when one is refused', async () => {
    const hooks = await webhooks((_p, review) =>
      review['request'].oldObject.metadata.name === 'keep' ? reviewAnswer(review, { allowed: false, status: { code: 403, message: 'kept' } }) : reviewAnswer(review),
    );
    const server = await simulator();
    await register(server, VWC, 'deletes', [webhookEntry(hooks, 'd.example.com', '/d', { rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] })]);
    for (const name of ['a', 'keep']) await server.create('v1/configmaps', { metadata: { name, namespace: 'default' } });
    const refused = await send(server, 'DELETE', CM);
    expect(refused.code).toBe(403);
    expect(refused.body['message']).toBe('admission webhook "d.example.com" denied the request: kept');
    expect(server.list('v1/configmaps', 'default')).toHaveLength(2);
    expect(hooks.received.map((r) => [r.body['request'].operation, r.body['request'].name, r.body['request'].namespace])).toEqual([
      ['DELETE', 'a', 'default'],
      ['DELETE', 'keep', 'default'],
    ]);
    expect((await send(server, 'DELETE', `${CM}?labelSelector=gone`)).code).toBe(200);
    await server.delete('v1/configmaps', 'default', 'keep');
    expect((await send(server, 'DELETE', CM)).code).toBe(200);
    expect(server.list('v1/configmaps', 'default')).toEqual([]);
  });

  it('honours namespaceSelector (the namespace\'s labels) and objectSelector (the new or the old object\'s labels)', async () => {
    const hooks = await webhooks((_p, review) => reviewAnswer(review));
    const server = await simulator();
    await server.create('v1/namespaces', { metadata: { name: 'watched', labels: { admission: 'on' } } });
    await server.create('v1/namespaces', { metadata: { name: 'quiet' } });
    await register(server, VWC, 'selectors', [
      webhookEntry(hooks, 'ns.example.com', '/ns', { namespaceSelector: { matchLabels: { admission: 'on' } } }),
      webhookEntry(hooks, 'obj.example.com', '/obj', { objectSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] } }),
    ]);
    await send(server, 'POST', '/api/v1/namespaces/quiet/configmaps', configMap('a'));
    expect(hooks.received).toEqual([]);
    await send(server, 'POST', '/api/v1/namespaces/watched/configmaps', configMap('b'));
    expect(hooks.received.map((r) => r.path.split('?')[0])).toEqual(['/ns']);
    await send(server, 'POST', '/api/v1/namespaces/quiet/configmaps', configMap('c', {}, { tier: 'web' }));
    // An update that removes the label still reaches the webhook: the old object had it.
    const c = server.get<AnyObject>('v1/configmaps', 'quiet', 'c') as AnyObject;
    await send(server, 'PUT', '/api/v1/namespaces/quiet/configmaps/c', { ...c, metadata: { ...c['metadata'], labels: {} } });
    expect(hooks.received.map((r) => r.path.split('?')[0])).toEqual(['/ns', '/obj', '/obj']);
  });

  it('calls an IfNeeded webhook again when a later webhook changed the object, once', async () => {
    const hooks = await webhooks((path, review) => {
      const data = review['request'].object.data ?? {};
      if (path.startsWith('/count')) return reviewAnswer(review, { patch: [{ op: 'add', path: '/data/seen', value: String(Object.keys(data).length) }] });
      return reviewAnswer(review, { patch: [{ op: 'add', path: '/data/later', value: 'x' }] });
    });
    const server = await simulator();
    await register(server, MWC, 'a', [webhookEntry(hooks, 'count.example.com', '/count', { reinvocationPolicy: 'IfNeeded' })]);
    await register(server, MWC, 'b', [webhookEntry(hooks, 'later.example.com', '/later')]);
    const created = await send(server, 'POST', CM, configMap('one', {}));
    expect(hooks.received.map((r) => r.path.split('?')[0])).toEqual(['/count', '/later', '/count']);
    expect(created.body['data']).toEqual({ seen: '2', later: 'x' });
  });

  it('applies a patch to a patch request and to an update, and refuses a patch on a delete', async () => {
    const hooks = await webhooks((_path, review) =>
      reviewAnswer(review, { patch: [{ op: 'add', path: '/metadata/annotations', value: { stamped: review['request'].operation } }] }),
    );
    const server = await simulator();
    await server.create('v1/configmaps', { ...configMap('one'), metadata: { name: 'one', namespace: 'default' } });
    await register(server, MWC, 'stamp', [webhookEntry(hooks, 'stamp.example.com', '/m', { rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] })]);
    const patched = await send(server, 'PATCH', `${CM}/one`, { data: { b: '2' } }, 'application/merge-patch+json');
    expect(patched.code).toBe(200);
    expect(patched.body['data']).toEqual({ a: '1', b: '2' });
    expect(patched.body['metadata'].annotations).toEqual({ stamped: 'UPDATE' });
    const refused = await send(server, 'DELETE', `${CM}/one`);
    expect(refused.code).toBe(400);
    expect(refused.body['message']).toBe('admission webhook "stamp.example.com" attempted to modify the object, which is not supported for this operation');
    expect(server.get('v1/configmaps', 'default', 'one')).toBeDefined();
  });

  it('keeps an apply\'s field ownership when a mutating webhook changes the object: what the webhook adds is nobody\'s, and the applier applies again without conflict', async () => {
    const hooks = await webhooks((_path, review) =>
      review['request'].object?.data?.defaulted === undefined ? reviewAnswer(review, { patch: [{ op: 'add', path: '/data/defaulted', value: 'yes' }] }) : reviewAnswer(review),
    );
    const server = await simulator();
    await register(server, MWC, 'defaults', [webhookEntry(hooks, 'defaults.example.com', '/m')]);
    const apply = (manager: string, data: AnyObject): Promise<Reply> => send(server, 'PATCH', `${CM}/one?fieldManager=${manager}`, configMap('one', data), 'application/apply-patch+yaml');
    expect((await apply('ops', { a: '1' })).body['data']).toEqual({ a: '1', defaulted: 'yes' });
    const owners = (): AnyObject[] => (server.get<AnyObject>('v1/configmaps', 'default', 'one')?.['metadata'].managedFields as AnyObject[]).map((e) => ({ manager: e['manager'], operation: e['operation'], fields: e['fieldsV1'] }));
    // As kube-apiserver's field manager decides ownership before admission: the applier owns what it sent.
    expect(owners()).toEqual([{ manager: 'ops', operation: 'Apply', fields: { 'f:data': { 'f:a': {} } } }]);
    const again = await apply('ops', { a: '2' });
    expect(again.code).toBe(200);
    expect(again.body['data']).toEqual({ a: '2', defaulted: 'yes' });
    // Another applier may take the defaulted field without force: nobody owns it.
    expect((await apply('other', { defaulted: 'no' })).code).toBe(200);
  });

  it('drops what a mutating webhook patches into the status on a write to the main resource', async () => {
    const hooks = await webhooks((_p, review) => reviewAnswer(review, { patch: [{ op: 'add', path: '/status', value: { phase: 'Running' } }, { op: 'add', path: '/metadata/labels', value: { stamped: 'yes' } }] }));
    const server = await simulator();
    await register(server, MWC, 'pods', [webhookEntry(hooks, 'p.example.com', '/p', { rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] })]);
    const created = await send(server, 'POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
    expect(created.body['metadata'].labels).toEqual({ stamped: 'yes' });
    expect(created.body['status']).toEqual({ phase: 'Pending' });
  });

  it('runs the schema between mutating and validating webhooks: a default patched in makes an object valid, and validating webhooks see the pruned object', async () => {
    const hooks = await webhooks((path, review) =>
      path.startsWith('/m') ? reviewAnswer(review, { patch: [{ op: 'replace', path: '/spec/replicas', value: 3 }] }) : reviewAnswer(review),
    );
    const server = await simulator({ crds: [websiteCrd()] });
    const rules = [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['websites'] }];
    await register(server, MWC, 'm', [webhookEntry(hooks, 'm.example.com', '/m', { rules })]);
    await register(server, VWC, 'v', [webhookEntry(hooks, 'v.example.com', '/v', { rules })]);
    const body = { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'w' }, spec: { image: 'nginx', replicas: 'many', unknown: true } };
    const created = await send(server, 'POST', '/apis/example.com/v1/namespaces/default/websites', body);
    expect(created.code).toBe(201);
    expect(created.body['spec']).toEqual({ image: 'nginx', replicas: 3 });
    const validated = hooks.received.find((r) => r.path.startsWith('/v'))?.body['request'].object;
    expect(validated.spec).toEqual({ image: 'nginx', replicas: 3 });
  });

  it('sends a /scale write as an UPDATE of autoscaling/v1 Scale objects, whose replicas a mutating webhook may change', async () => {
    const hooks = await webhooks((path, review) =>
      path.startsWith('/cap') && review['request'].object.spec.replicas > 5 ? reviewAnswer(review, { patch: [{ op: 'replace', path: '/spec/replicas', value: 5 }] }) : reviewAnswer(review),
    );
    const server = await simulator({ crds: [websiteCrd()] });
    const rules = [{ operations: ['UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['websites/scale'] }];
    await register(server, MWC, 'cap', [webhookEntry(hooks, 'cap.example.com', '/cap', { rules })]);
    await register(server, VWC, 'see', [webhookEntry(hooks, 'see.example.com', '/see', { rules })]);
    await server.create('example.com/v1/websites', { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'w', namespace: 'default' }, spec: { image: 'nginx', replicas: 1 } });
    const scaled = await send(server, 'PUT', '/apis/example.com/v1/namespaces/default/websites/w/scale', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'w', namespace: 'default' }, spec: { replicas: 9 } });
    expect(scaled.code).toBe(200);
    expect(scaled.body['spec']).toEqual({ replicas: 5 });
    expect(server.get<AnyObject>('example.com/v1/websites', 'default', 'w')?.['spec'].replicas).toBe(5);
    const [cap, see] = hooks.received.map((r) => r.body['request']);
    expect(cap).toMatchObject({ operation: 'UPDATE', subResource: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, resource: { group: 'example.com', version: 'v1', resource: 'websites' } });
    expect([cap.object.spec.replicas, cap.oldObject.spec.replicas, see.object.spec.replicas]).toEqual([9, 1, 5]);
  });

  it('stores configurations as a cluster-scoped built-in, refuses an invalid one with 422, and never sends configurations to webhooks', async () => {
    const hooks = await webhooks((_p, review) => reviewAnswer(review, { allowed: false }));
    const server = await simulator();
    const everything = [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }];
    await register(server, VWC, 'deny-all', [webhookEntry(hooks, 'deny.example.com', '/v', { rules: everything })]);
    expect((await send(server, 'POST', CM, configMap('x'))).body['message']).toBe('admission webhook "deny.example.com" denied the request without explanation');
    const bad = await send(server, 'POST', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'bad' },
      webhooks: [{ name: 'x', clientConfig: {}, sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 31 }],
    });
    expect(bad.code).toBe(422);
    expect(bad.body['message']).toMatch(/^ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: \[webhooks\[0\].clientConfig: Required value/);
    expect((await send(server, 'DELETE', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/deny-all')).code).toBe(200);
    expect(hooks.received.map((r) => r.body['request'].resource.resource)).toEqual(['configmaps']);
    expect((await send(server, 'POST', CM, configMap('x'))).code).toBe(201);
  });

  it('calls the validating webhooks at once: one that waits for the other to be called is answered', async () => {
    let otherCalled: () => void = () => undefined;
    const other = new Promise<void>((resolve) => {
      otherCalled = resolve;
    });
    const hooks = await webhooks(async (path, review) => {
      if (path.startsWith('/second')) otherCalled();
      else await other;
      return reviewAnswer(review);
    });
    const server = await simulator();
    await register(server, VWC, 'both', [webhookEntry(hooks, 'first.example.com', '/first', { timeoutSeconds: 5 }), webhookEntry(hooks, 'second.example.com', '/second')]);
    expect((await send(server, 'POST', CM, configMap('one'))).code).toBe(201);
    expect(hooks.received.map((r) => r.path.split('?')[0])).toEqual(['/first', '/second']);
  });

  it('serves the configurations in discovery and takes them by server-side apply', async () => {
    const hooks = await webhooks((_p, review) => reviewAnswer(review));
    const server = await simulator();
    const discovery = (await send(server, 'GET', '/apis/admissionregistration.k8s.io/v1')).body;
    expect(discovery['resources'].map((r: AnyObject) => [r['name'], r['kind'], r['namespaced']])).toEqual([
      ['validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false],
      ['mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false],
    ]);
    const applied = await send(
      server,
      'PATCH',
      '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/applied?fieldManager=test',
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'applied' }, webhooks: [webhookEntry(hooks, 'm.example.com', '/m')] },
      'application/apply-patch+yaml',
    );
    expect(applied.code).toBe(201);
    await send(server, 'POST', CM, configMap('one'));
    expect(hooks.received.map((r) => r.path.split('?')[0])).toEqual(['/m']);
  });

  it('skips a service clientConfig with a warning, as the simulator cannot reach a Service', async () => {
    const server = await simulator();
    await register(server, VWC, 'svc', [{ name: 'svc.example.com', clientConfig: { service: { namespace: 'ns', name: 'webhook' } }, rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], sideEffects: 'None', admissionReviewVersions: ['v1'] }]);
    const created = await send(server, 'POST', CM, configMap('x'));
    expect(created.code).toBe(201);
    expect(created.warnings).toContain('webhook \\"svc.example.com\\" was not called');
  });
});
