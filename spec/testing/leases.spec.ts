import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, StatusError, type ApiServer } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';

let server: ApiServer;
let leases: string;
const open: WireWatch[] = [];

beforeEach(async () => {
  server = await startApiServer();
  leases = `${server.url}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases`;
});
afterEach(async () => {
  for (const w of open.splice(0)) w.close();
  await server.close();
});

const lease = (name: string, holder: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, ...extra },
  spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
});

describe('leases over HTTP', () => {
  it('create, get, update, merge and JSON patch, delete', async () => {
    const created = await request(leases, { method: 'POST', body: lease('leader', 'a') });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', metadata: { name: 'leader', namespace: 'kube-system' } });
    const got = await request(`${leases}/leader`);
    expect(got.json).toEqual(created.json);

    const renewed = await request(`${leases}/leader`, {
      method: 'PUT',
      body: { ...created.json, spec: { ...created.json.spec, renewTime: '2026-01-01T00:00:00.000000Z' } },
    });
    expect(renewed.status).toBe(200);
    expect(Number(renewed.json.metadata.resourceVersion)).toBeGreaterThan(Number(created.json.metadata.resourceVersion));

    const merged = await request(`${leases}/leader`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { holderIdentity: 'b' } } });
    expect(merged.status).toBe(200);
    expect(merged.json.spec).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 15 });
    const patched = await request(`${leases}/leader`, {
      method: 'PATCH',
      contentType: 'application/json-patch+json',
      body: [{ op: 'add', path: '/spec/leaseTransitions', value: 1 }],
    });
    expect(patched.status).toBe(200);
    expect(patched.json.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });

    const deleted = await request(`${leases}/leader`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect((await request(`${leases}/leader`)).status).toBe(404);
  });

  it('a watch on leases sees every write, and a field selector narrows it to one lease', async () => {
    const all = await WireWatch.open(`${leases}?watch=true&resourceVersion=${server.resourceVersion()}`);
    const one = await WireWatch.open(`${leases}?watch=true&resourceVersion=${server.resourceVersion()}&fieldSelector=metadata.name%3Dleader`);
    open.push(all, one);
    const created = (await request(leases, { method: 'POST', body: lease('leader', 'a') })).json;
    await request(leases, { method: 'POST', body: lease('other', 'x') });
    await request(`${leases}/leader`, { method: 'PUT', body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } });
    await request(`${leases}/leader`, { method: 'DELETE' });
    await all.waitForLines(4);
    await one.waitForLines(3);
    expect(all.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED leader', 'ADDED other', 'MODIFIED leader', 'DELETED leader']);
    expect(one.events.map((e) => `${e.type} ${e.object.spec.holderIdentity}`)).toEqual(['ADDED a', 'MODIFIED b', 'DELETED b']);
  });
});

describe('optimistic concurrency', () => {
  it('a create of an existing lease is 409 AlreadyExists', async () => {
    await request(leases, { method: 'POST', body: lease('leader', 'a') });
    const again = await request(leases, { method: 'POST', body: lease('leader', 'b') });
    expect(again.status).toBe(409);
    expect(again.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'leases.coordination.k8s.io "leader" already exists',
      reason: 'AlreadyExists',
      details: { name: 'leader', group: 'coordination.k8s.io', kind: 'leases' },
      code: 409,
    });
  });

  it('a PUT with a stale resourceVersion is 409 Conflict, worded as kube-apiserver words it', async () => {
    const created = (await request(leases, { method: 'POST', body: lease('leader', 'a') })).json;
    await request(`${leases}/leader`, { method: 'PUT', body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } });
    const stale = await request(`${leases}/leader`, { method: 'PUT', body: { ...created, spec: { ...created.spec, holderIdentity: 'c' } } });
    expect(stale.status).toBe(409);
    expect(stale.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'leader', group: 'coordination.k8s.io', kind: 'leases' },
      code: 409,
    });
  });

  it('two candidates racing from the same resourceVersion: exactly one wins', async () => {
    const created = (await request(leases, { method: 'POST', body: lease('leader', '') })).json;
    const attempts = await Promise.all(
      ['a', 'b', 'c'].map((holder) => request(`${leases}/leader`, { method: 'PUT', body: { ...created, spec: { ...created.spec, holderIdentity: holder } } })),
    );
    expect(attempts.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const winner = attempts.find((r) => r.status === 200)?.json.spec.holderIdentity;
    expect((await request(`${leases}/leader`)).json.spec.holderIdentity).toBe(winner);
  });

  it('a lease PUT without a resourceVersion is 422 Invalid, not an unconditional update', async () => {
    await request(leases, { method: 'POST', body: lease('leader', 'a') });
    const blind = await request(`${leases}/leader`, { method: 'PUT', body: lease('leader', 'b') });
    expect(blind.status).toBe(422);
    expect(blind.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'leases.coordination.k8s.io "leader" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      reason: 'Invalid',
      details: {
        name: 'leader',
        group: 'coordination.k8s.io',
        kind: 'leases',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }],
      },
      code: 422,
    });
    expect((await request(`${leases}/leader`)).json.spec.holderIdentity).toBe('a');
    await expect(server.update('coordination.k8s.io/v1/leases', { ...lease('leader', 'b'), metadata: { name: 'leader', namespace: 'kube-system' } })).rejects.toMatchObject({
      code: 422,
      reason: 'Invalid',
    });
  });

  it('a PUT of a missing lease creates it (201); a missing pod is 404', async () => {
    const made = await request(`${leases}/fresh`, { method: 'PUT', body: lease('fresh', 'a') });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ metadata: { name: 'fresh', namespace: 'kube-system', uid: expect.any(String) }, spec: { holderIdentity: 'a' } });
    const pod = await request(`${server.url}/api/v1/namespaces/default/pods/nope`, { method: 'PUT', body: { metadata: { name: 'nope' } } });
    expect(pod.status).toBe(404);
    expect(pod.json.reason).toBe('NotFound');
  });

  it('a pod or configmap PUT without a resourceVersion is an unconditional update', async () => {
    await server.create('v1/configmaps', { metadata: { name: 'cm', namespace: 'default' }, data: { v: '1' } });
    const blind = await request(`${server.url}/api/v1/namespaces/default/configmaps/cm`, {
      method: 'PUT',
      body: { metadata: { name: 'cm' }, data: { v: '2' } },
    });
    expect(blind.status).toBe(200);
    expect(blind.json.data).toEqual({ v: '2' });
    await server.create('v1/pods', { metadata: { name: 'p', namespace: 'default' } });
    const pod = await request(`${server.url}/api/v1/namespaces/default/pods/p`, { method: 'PUT', body: { metadata: { name: 'p' }, spec: { nodeName: 'n1' } } });
    expect(pod.status).toBe(200);
    expect(pod.json.spec).toEqual({ nodeName: 'n1' });
  });

  it('a custom resource PUT without a resourceVersion is 422, and patches never need one', async () => {
    server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget' });
    await server.create('example.com/v1/widgets', { metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
    const url = `${server.url}/apis/example.com/v1/namespaces/default/widgets/w`;
    const blind = await request(url, { method: 'PUT', body: { metadata: { name: 'w' }, spec: { size: 2 } } });
    expect(blind.status).toBe(422);
    expect(blind.json.message).toBe('widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    const patched = await request(url, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { size: 3 } } });
    expect(patched.status).toBe(200);
    const cleared = await request(url, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { metadata: { resourceVersion: null }, spec: { size: 4 } } });
    expect(cleared.status).toBe(200);
    expect(cleared.json.spec).toEqual({ size: 4 });
  });

  it('the direct methods throw the same errors', async () => {
    const created = await server.create('coordination.k8s.io/v1/leases', { metadata: { name: 'l', namespace: 'default' }, spec: {} });
    await server.update('coordination.k8s.io/v1/leases', { ...created, spec: { holderIdentity: 'a' } });
    const err = await server.update('coordination.k8s.io/v1/leases', { ...created, spec: { holderIdentity: 'b' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect(err).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(server.get<{ spec: object }>('coordination.k8s.io/v1/leases', 'default', 'l')?.spec).toEqual({ holderIdentity: 'a' });
  });
});
