import { getEventListeners } from 'node:events';
import type { V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ConnectionError, isAlreadyExists, isConflict, isNotFound, isUnauthorized, KubeApiError } from '../../src/errors/api/index.js';
import { objectClient } from '../../src/client/objectClient.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

let server: ApiServer;
const SECRET = 'object-client-token';
beforeAll(async () => {
  server = await startApiServer({ token: SECRET });
});
afterAll(async () => {
  await server.close();
});

let seq = 0;
const fresh = (): string => `cm-${++seq}`;
const cms = () => objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });

describe('objectClient options', () => {
  it.each([
    ['namespace', { namespace: '' }],
    ['namespace', { namespace: 7 }],
    ['timeoutMs', { timeoutMs: 0 }],
    ['timeoutMs', { timeoutMs: Number.NaN }],
  ])('rejects a bad %s up front with a TypeError naming it', (name, opts) => {
    expect(() => objectClient(server.kubeConfig(), 'v1/configmaps', opts as never)).toThrow(TypeError);
    expect(() => objectClient(server.kubeConfig(), 'v1/configmaps', opts as never)).toThrow(name);
  });

  it('rejects a namespace for a resource declared cluster-scoped, and a malformed resource', () => {
    expect(() => objectClient(server.kubeConfig(), { version: 'v1', plural: 'nodes', namespaced: false }, { namespace: 'x' })).toThrow(/cluster-scoped/);
    expect(() => objectClient(server.kubeConfig(), 'pods' as never)).toThrow(TypeError);
    expect(() => objectClient(server.kubeConfig(), 'v1/nodes', { namespace: 'x' })).toThrow(/cluster-scoped/);
  });

  it('rejects bad call arguments before sending anything', async () => {
    const before = server.stats.requests;
    const c = cms();
    expect(() => c.get('')).toThrow(/name/);
    expect(() => c.get('a/b')).toThrow(/name/);
    expect(() => c.replace({ metadata: {} })).toThrow(/name/);
    expect(() => c.patch('x', [{ op: 'add' }], { type: 'merge' })).toThrow(/merge patch must be an object/);
    expect(() => c.patch('x', { a: 1 }, { type: 'json' })).toThrow(/array of operations/);
    expect(() => c.patch('x', {}, { type: 'apply' as never })).toThrow(/type/);
    expect(() => c.delete('x', { preconditions: { resourceVersion: '' } })).toThrow(/preconditions.resourceVersion/);
    expect(() => c.get('x', { signal: 'no' as never })).toThrow(/signal/);
    expect(server.stats.requests).toBe(before);
  });

  it('types the objects it returns', () => {
    const c = objectClient(server.kubeConfig(), 'coordination.k8s.io/v1/leases', { namespace: 'default' });
    expectTypeOf(c.get).returns.resolves.toEqualTypeOf<V1Lease>();
    // @ts-expect-error a lease client takes leases
    void (() => c.create({ metadata: { name: 'x' }, data: 1 }));
  });
});

describe('objectClient CRUD against the simulator', () => {
  it('creates, gets, replaces, patches and deletes', async () => {
    const c = cms();
    const name = fresh();
    const created = await c.create({ metadata: { name }, data: { a: '1' } });
    expect(created.metadata?.uid).toBeTruthy();
    expect(created.metadata?.namespace).toBe('default');

    const got = await c.get(name);
    expect(got.data).toEqual({ a: '1' });
    expect(got.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);

    const replaced = await c.replace({ ...got, data: { a: '2' } });
    expect(replaced.data).toEqual({ a: '2' });
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(Number(got.metadata?.resourceVersion));

    const merged = await c.patch(name, { metadata: { labels: { tier: 'gold' } }, data: { b: '3' } }, { type: 'merge' });
    expect(merged.metadata?.labels).toEqual({ tier: 'gold' });
    expect(merged.data).toEqual({ a: '2', b: '3' });

    const jsonPatched = await c.patch(name, [{ op: 'replace', path: '/data/a', value: '4' }, { op: 'remove', path: '/data/b' }], { type: 'json' });
    expect(jsonPatched.data).toEqual({ a: '4' });

    const strategic = await c.patch(name, { data: { c: '5' } }, { type: 'strategic' });
    expect(strategic.data).toEqual({ a: '4', c: '5' });

    const stored = server.get<V1ConfigMap>('v1/configmaps', 'default', name);
    expect(stored?.data).toEqual({ a: '4', c: '5' });

    await c.delete(name);
    await expect(c.get(name)).rejects.toSatisfy(isNotFound);
  });

  it('a cluster-scoped resource is addressed without a namespace', async () => {
    const ns = objectClient(server.kubeConfig(), 'v1/namespaces');
    const created = await ns.create({ metadata: { name: 'object-client-ns' } });
    expect(created.metadata?.name).toBe('object-client-ns');
    expect((await ns.get('object-client-ns')).metadata?.uid).toBe(created.metadata?.uid);
  });

  it('404 is a KubeApiError carrying the server message, for every verb', async () => {
    const c = cms();
    for (const call of [() => c.get('missing'), () => c.replace({ metadata: { name: 'missing' } }), () => c.patch('missing', {}), () => c.delete('missing')]) {
      const err = await call().catch((e: unknown) => e);
      expect(isNotFound(err)).toBe(true);
      expect((err as KubeApiError).status).toBe(404);
      expect((err as KubeApiError).reason).toBe('NotFound');
      expect((err as KubeApiError).serverMessage).toMatch(/missing/);
    }
  });

  it('a second create is 409 AlreadyExists, told apart from a conflict', async () => {
    const c = cms();
    const name = fresh();
    await c.create({ metadata: { name } });
    const err = await c.create({ metadata: { name } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(409);
    expect(isAlreadyExists(err)).toBe(true);
    expect(isConflict(err)).toBe(false);
  });

  it('replace is conditional on metadata.resourceVersion: a stale one is 409 Conflict and writes nothing', async () => {
    const c = cms();
    const name = fresh();
    const v1 = await c.create({ metadata: { name }, data: { v: '1' } });
    await c.replace({ ...v1, data: { v: '2' } });
    const err = await c.replace({ ...v1, data: { v: 'stale' } }).catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    expect((err as KubeApiError).status).toBe(409);
    expect((await c.get(name)).data).toEqual({ v: '2' });
    // Without a resourceVersion the replace is unconditional.
    const { resourceVersion: _rv, ...meta } = v1.metadata!;
    expect((await c.replace({ ...v1, metadata: meta, data: { v: '3' } })).data).toEqual({ v: '3' });
  });

  it('delete honours resourceVersion preconditions', async () => {
    const c = cms();
    const name = fresh();
    const v1 = await c.create({ metadata: { name } });
    const v2 = await c.patch(name, { data: { x: 'y' } });
    const err = await c.delete(name, { preconditions: { resourceVersion: v1.metadata!.resourceVersion! } }).catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    await c.delete(name, { preconditions: { resourceVersion: v2.metadata!.resourceVersion!, uid: v2.metadata!.uid! } });
    await expect(c.get(name)).rejects.toSatisfy(isNotFound);
  });

  it('an injected 500 on update is a typed error', async () => {
    const c = cms();
    const name = fresh();
    const v1 = await c.create({ metadata: { name } });
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'update', resource: 'v1/configmaps' });
    const err = await c.replace(v1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(500);
  });
});

describe('objectClient error messages', () => {
  it('name the object with its control characters escaped, since a name may come from a hostile list (HI-70)', async () => {
    const name = 'a\u001b]0;title\u0007\u009bb';
    const errors = await Promise.all([
      cms().get(name).catch((e: unknown) => e),
      cms().apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } }, { fieldManager: 'spec' }).catch((e: unknown) => e),
    ]);
    for (const err of errors) {
      expect(err).toBeInstanceOf(KubeApiError);
      expect((err as Error).message).toMatch(/^(get|apply) v1\/configmaps default\/a\\x1b\]0;title\\x07\\u009bb: /);
      expect((err as Error).message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
  });
});

describe('objectClient transport', () => {
  it('a signal that outlives its calls keeps no listener of them, whether they succeed or fail', async () => {
    const c = cms();
    const life = new AbortController();
    const name = fresh();
    await c.create({ metadata: { name } }, { signal: life.signal });
    await c.get(name, { signal: life.signal });
    await expect(c.get(fresh(), { signal: life.signal })).rejects.toSatisfy(isNotFound);
    expect(getEventListeners(life.signal, 'abort')).toHaveLength(0);
  });

  it('aborting a call rejects with the signal reason and frees the socket', async () => {
    const c = cms();
    const name = fresh();
    await c.create({ metadata: { name } });
    server.faults.inject({ type: 'stall' }, { verb: 'get', resource: 'v1/configmaps' });
    const controller = new AbortController();
    const pending = c.get(name, { signal: controller.signal });
    const reason = new Error('stop now');
    // The stall fired: the get is held by the server (a kept-alive connection from the create counts before that).
    await waitFor(() => server.faults.pending() === 0, 'the get to reach the server and stall');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await waitFor(() => server.stats.connections === 0, 'the connection to close');
  });

  it('an already aborted signal sends nothing', async () => {
    const before = server.stats.requests;
    const reason = new Error('too late');
    await expect(cms().get('x', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(server.stats.requests).toBe(before);
  });

  it('a stalled answer ends at timeoutMs with ConnectionError TIMEOUT', async () => {
    const c = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default', timeoutMs: 200 });
    server.faults.inject({ type: 'stall' }, { verb: 'get', resource: 'v1/configmaps' });
    const err = await c.get('whatever').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).code).toBe('TIMEOUT');
  });

  it('a refused connection is a ConnectionError, and a wrong token a 401 that never shows the token', async () => {
    const down = await startApiServer();
    const kc = down.kubeConfig();
    await down.close();
    const refused = await objectClient(kc, 'v1/configmaps', { namespace: 'default' }).get('x').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectionError);
    expect((refused as ConnectionError).code).toBe('ECONNREFUSED');

    const wrong = server.kubeConfig();
    (wrong.getCurrentUser() as { token?: string }).token = "not-the-token";
    const err = await objectClient(wrong, 'v1/configmaps', { namespace: 'default' }).get('x').catch((e: unknown) => e);
    expect(isUnauthorized(err)).toBe(true);
    expect(String((err as Error).message)).not.toContain('not-the-token');
    expect(JSON.stringify(err)).not.toContain('not-the-token');
  });
});
