import { AppsV1Api, CoordinationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, StatusError, type ApiServer } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';
import { waitFor } from '../helpers/waitFor.js';

let server: ApiServer;
let core: CoreV1Api;

beforeEach(async () => {
  server = await startApiServer();
  core = server.kubeConfig().makeApiClient(CoreV1Api);
});
afterEach(async () => {
  await server.close();
});

function pod(name: string, extra: Partial<V1Pod> = {}): V1Pod {
  return { metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }] }, ...extra };
}

async function apiError(p: Promise<unknown>): Promise<{ code: number; body: any }> {
  try {
    await p;
  } catch (err: any) {
    return { code: err.code, body: typeof err.body === 'string' ? JSON.parse(err.body) : err.body };
  }
  throw new Error('expected the call to fail');
}

describe('REST verbs through client-node', () => {
  it('create assigns uid, resourceVersion, creationTimestamp, generation and defaults', async () => {
    const before = Number(server.resourceVersion());
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    expect(created.kind).toBe('Pod');
    expect(created.apiVersion).toBe('v1');
    expect(created.metadata?.namespace).toBe('default');
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(created.metadata?.resourceVersion)).toBe(before + 1);
    expect(created.metadata?.generation).toBe(1);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(created.status?.phase).toBe('Pending');
    expect(server.resourceVersion()).toBe(created.metadata?.resourceVersion);
  });

  it('create with generateName makes a unique name', async () => {
    const a = await core.createNamespacedPod({ namespace: 'default', body: { metadata: { generateName: 'web-' } } });
    const b = await core.createNamespacedPod({ namespace: 'default', body: { metadata: { generateName: 'web-' } } });
    expect(a.metadata?.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(a.metadata?.name).not.toBe(b.metadata?.name);
  });

  it('a second create of the same name is 409 AlreadyExists', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const err = await apiError(core.createNamespacedPod({ namespace: 'default', body: pod('a') }));
    expect(err.code).toBe(409);
    expect(err.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'AlreadyExists', code: 409, details: { name: 'a', kind: 'pods' } });
  });

  it('get of a missing object is 404 NotFound with a Status body', async () => {
    const err = await apiError(core.readNamespacedPod({ namespace: 'default', name: 'nope' }));
    expect(err.code).toBe(404);
    expect(err.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', reason: 'NotFound', message: 'pods "nope" not found', code: 404 });
  });

  it('replace with a stale resourceVersion is 409 Conflict; with the current one it succeeds', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const updated = await core.replaceNamespacedPod({
      namespace: 'default',
      name: 'a',
      body: { ...created, metadata: { ...created.metadata, labels: { v: '1' } } },
    });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));
    const err = await apiError(
      core.replaceNamespacedPod({ namespace: 'default', name: 'a', body: { ...created, metadata: { ...created.metadata, labels: { v: '2' } } } }),
    );
    expect(err.code).toBe(409);
    expect(err.body.reason).toBe('Conflict');
    expect(err.body.message).toContain('the object has been modified');
    expect(server.get<V1Pod>('v1/pods', 'default', 'a')?.metadata?.labels).toEqual({ v: '1' });
  });

  it('generation bumps on spec changes only, and uid/creationTimestamp cannot be changed', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const labelled = await core.replaceNamespacedPod({
      namespace: 'default',
      name: 'a',
      body: { ...created, metadata: { ...created.metadata, labels: { x: 'y' } }, status: { phase: 'Running' } },
    });
    expect(labelled.metadata?.generation).toBe(1);
    const respec = await core.replaceNamespacedPod({
      namespace: 'default',
      name: 'a',
      body: { ...labelled, metadata: { ...labelled.metadata, creationTimestamp: new Date(0) }, spec: { containers: [{ name: 'c', image: 'j' }] } },
    });
    expect(respec.metadata?.generation).toBe(2);
    expect(respec.metadata?.uid).toBe(created.metadata?.uid);
    expect(respec.metadata?.creationTimestamp).toEqual(created.metadata?.creationTimestamp);
  });

  it('a no-op update keeps the resourceVersion and writes no event', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const same = await core.replaceNamespacedPod({ namespace: 'default', name: 'a', body: created });
    expect(same.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
    expect(server.resourceVersion()).toBe(created.metadata?.resourceVersion);
  });

  it('patch accepts JSON patch (client-node default) and merge patch, and checks a resourceVersion in the patch', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a', { metadata: { name: 'a', labels: { a: '1', b: '2' } } }) });
    const jp = await core.patchNamespacedPod({ namespace: 'default', name: 'a', body: [{ op: 'replace', path: '/metadata/labels/a', value: 'x' }] });
    expect(jp.metadata?.labels).toEqual({ a: 'x', b: '2' });
    const merged = await request(`${server.url}/api/v1/namespaces/default/pods/a`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { b: null, c: '3' } } },
    });
    expect(merged.status).toBe(200);
    expect(merged.json.metadata.labels).toEqual({ a: 'x', c: '3' });
    const stale = await request(`${server.url}/api/v1/namespaces/default/pods/a`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: created.metadata?.resourceVersion, labels: { d: '4' } } },
    });
    expect(stale.status).toBe(409);
    expect(stale.json.reason).toBe('Conflict');
    const failedTest = await request(`${server.url}/api/v1/namespaces/default/pods/a`, {
      method: 'PATCH',
      contentType: 'application/json-patch+json',
      body: [{ op: 'test', path: '/metadata/labels/a', value: 'nope' }],
    });
    expect(failedTest.status).toBe(422);
    // A server-side apply names its field manager, or kube-apiserver refuses it before reading the body.
    const apply = await request(`${server.url}/api/v1/namespaces/default/pods/a`, { method: 'PATCH', contentType: 'application/apply-patch+yaml', body: {} });
    expect(apply.status).toBe(422);
    expect(apply.json.message).toMatch(/fieldManager: Required value/);
    const unknown = await request(`${server.url}/api/v1/namespaces/default/pods/a`, { method: 'PATCH', contentType: 'application/yaml', body: {} });
    expect(unknown.status).toBe(415);
  });

  it('the status subresource replaces only the status', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const res = await request(`${server.url}/api/v1/namespaces/default/pods/a/status`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { ignored: 'yes' } }, status: { phase: 'Running' } },
    });
    expect(res.status).toBe(200);
    expect(res.json.status.phase).toBe('Running');
    expect(res.json.metadata.labels).toBeUndefined();
  });

  it('delete returns the object stamped with the deletion resourceVersion, then 404', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const res = await request(`${server.url}/api/v1/namespaces/default/pods/a`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(res.json.metadata.resourceVersion).toBe(server.resourceVersion());
    expect(server.get('v1/pods', 'default', 'a')).toBeUndefined();
    const again = await apiError(core.deleteNamespacedPod({ namespace: 'default', name: 'a' }));
    await core.createNamespacedPod({ namespace: 'default', body: pod('b') });
    const viaClient = await core.deleteNamespacedPod({ namespace: 'default', name: 'b' });
    expect(viaClient.metadata?.name).toBe('b');
    expect(again.code).toBe(404);
  });

  it('delete honours uid and resourceVersion preconditions', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const wrongUid = await request(`${server.url}/api/v1/namespaces/default/pods/a`, { method: 'DELETE', body: { preconditions: { uid: 'other' } } });
    expect(wrongUid.status).toBe(409);
    const wrongRv = await request(`${server.url}/api/v1/namespaces/default/pods/a`, { method: 'DELETE', body: { preconditions: { resourceVersion: '1' } } });
    expect(wrongRv.status).toBe(409);
    const ok = await request(`${server.url}/api/v1/namespaces/default/pods/a`, {
      method: 'DELETE',
      body: { preconditions: { uid: created.metadata?.uid, resourceVersion: created.metadata?.resourceVersion } },
    });
    expect(ok.status).toBe(200);
  });

  it('an object with finalizers is only marked for deletion until its last finalizer goes', async () => {
    await server.create('v1/configmaps', { metadata: { name: 'f', namespace: 'default', finalizers: ['example.com/keep'] } });
    const marked = await server.delete<any>('v1/configmaps', 'default', 'f');
    expect(marked.metadata.deletionTimestamp).toBeDefined();
    expect(server.get('v1/configmaps', 'default', 'f')).toBeDefined();
    await server.patch('v1/configmaps', 'default', 'f', { metadata: { finalizers: null } });
    expect(server.get('v1/configmaps', 'default', 'f')).toBeUndefined();
  });

  it('rejects a body whose namespace or name contradicts the URL, and invalid names', async () => {
    const wrongNs = await request(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: { metadata: { name: 'a', namespace: 'other' } } });
    expect(wrongNs.status).toBe(400);
    const wrongName = await request(`${server.url}/api/v1/namespaces/default/pods/a`, { method: 'PUT', body: { metadata: { name: 'b' } } });
    expect(wrongName.status).toBe(400);
    const badName = await request(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: { metadata: { name: 'Not_Valid' } } });
    expect(badName.status).toBe(422);
    expect(badName.json.reason).toBe('Invalid');
    const unknown = await request(`${server.url}/api/v1/namespaces/default/widgets`);
    expect(unknown.status).toBe(404);
  });

  it('answers 404 to a core-group path whose version segment is an encoded group/version, as kube-apiserver does', async () => {
    await server.create('apps/v1/deployments', { metadata: { name: 'web', namespace: 'default' } });
    for (const path of ['namespaces/default/deployments', 'namespaces/default/deployments/web', 'deployments', 'deployments?watch=true&timeoutSeconds=1']) {
      expect((await request(`${server.url}/api/apps%2Fv1/${path}`)).status).toBe(404);
    }
    expect((await request(`${server.url}/api/apps%2Fv1/namespaces/default/deployments/web`, { method: 'DELETE' })).status).toBe(404);
    expect(server.get('apps/v1/deployments', 'default', 'web')).toBeDefined();
  });

  it('serves apps/v1 deployments, cluster-scoped namespaces and nodes, and leases', async () => {
    const kc = server.kubeConfig();
    const apps = kc.makeApiClient(AppsV1Api);
    const dep = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: { metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } } } } },
    });
    expect(dep.apiVersion).toBe('apps/v1');
    const ns = await core.createNamespace({ body: { metadata: { name: 'team-a' } } });
    expect(ns.metadata?.namespace).toBeUndefined();
    expect(ns.status?.phase).toBe('Active');
    await core.createNode({ body: { metadata: { name: 'n1' } } });
    expect((await core.listNode()).items.map((n) => n.metadata?.name)).toEqual(['n1']);
    const leases = kc.makeApiClient(CoordinationV1Api);
    const lease = await leases.createNamespacedLease({
      namespace: 'kube-system',
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
    });
    const stale = { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } };
    await leases.replaceNamespacedLease({ namespace: 'kube-system', name: 'leader', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'c' } } });
    const err = await apiError(leases.replaceNamespacedLease({ namespace: 'kube-system', name: 'leader', body: stale }));
    expect(err.code).toBe(409);
  });

  it('serves a custom resource registered at runtime', async () => {
    const id = server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
    expect(id).toBe('example.com/v1/widgets');
    const res = await request(`${server.url}/apis/example.com/v1/namespaces/default/widgets`, {
      method: 'POST',
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } },
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ kind: 'Widget', apiVersion: 'example.com/v1', metadata: { name: 'w', generation: 1 } });
    const list = await request(`${server.url}/apis/example.com/v1/widgets`);
    expect(list.json.kind).toBe('WidgetList');
    // A custom resource's items keep their type, as kube-apiserver serves them; a built-in's do not.
    expect(list.json.items).toEqual([expect.objectContaining({ apiVersion: 'example.com/v1', kind: 'Widget' })]);
    expect(() => server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Gadget' })).toThrow(TypeError);
  });

  it('serves discovery documents', async () => {
    const api = await request(`${server.url}/api/v1`);
    expect(api.json.kind).toBe('APIResourceList');
    expect(api.json.resources.map((r: any) => r.name)).toContain('pods');
    const groups = await request(`${server.url}/apis`);
    expect(groups.json.groups.map((g: any) => g.name)).toEqual(expect.arrayContaining(['apps', 'coordination.k8s.io']));
  });
});

describe('direct storage methods', () => {
  it('have the REST semantics and throw StatusError', async () => {
    const created = await server.create<any>('v1/pods', { metadata: { name: 'a', namespace: 'default' } });
    expect(created.metadata.uid).toBeDefined();
    await expect(server.create('v1/pods', { metadata: { name: 'a', namespace: 'default' } })).rejects.toMatchObject({ code: 409, reason: 'AlreadyExists' });
    const stale = { ...created, metadata: { ...created.metadata, labels: { a: 'b' } } };
    await server.update('v1/pods', { ...created, metadata: { ...created.metadata, labels: { a: 'c' } } });
    const err = await server.update('v1/pods', stale).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(409);
    expect((err as StatusError).status.reason).toBe('Conflict');
    const patched = await server.patch<any>('v1/pods', 'default', 'a', { spec: { nodeName: 'n1' } });
    expect(patched.metadata.generation).toBe(2);
    const deleted = await server.delete<any>('v1/pods', 'default', 'a');
    expect(deleted.metadata.resourceVersion).toBe(server.resourceVersion());
    await expect(server.delete('v1/pods', 'default', 'a')).rejects.toMatchObject({ code: 404 });
  });

  it('hands out copies so tests cannot corrupt the storage', async () => {
    await server.create('v1/configmaps', { metadata: { name: 'c', namespace: 'default' }, data: { k: 'v' } });
    const got = server.get<any>('v1/configmaps', 'default', 'c');
    got.data.k = 'changed';
    expect(server.get<any>('v1/configmaps', 'default', 'c').data.k).toBe('v');
  });

  it('lists in key order, optionally by namespace', async () => {
    for (const [ns, name] of [['b', 'x'], ['a', 'y'], ['a', 'x'], ['ab', 'z']] as const) {
      await server.create('v1/configmaps', { metadata: { name, namespace: ns } });
    }
    expect(server.list<any>('v1/configmaps').map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['a/x', 'a/y', 'ab/z', 'b/x']);
    expect(server.list<any>('v1/configmaps', 'a').map((o) => o.metadata.name)).toEqual(['x', 'y']);
  });

  it('rejects unknown resources and bad options with TypeError', async () => {
    expect(() => server.get('v1/widgets', 'default', 'a')).toThrow(TypeError);
    await expect(startApiServer({ port: -1 })).rejects.toThrow(TypeError);
    await expect(startApiServer({ history: { maxEvents: 0 } })).rejects.toThrow(/history.maxEvents/);
    expect(() => server.faults.inject({ type: 'trickle', bytesPerChunk: 0, intervalMs: 1 })).toThrow(/bytesPerChunk/);
  });
});

describe('namespace deletion (the namespace controller, emulated)', () => {
  it('marks the namespace Terminating, then deletes its contents, then the namespace', async () => {
    await server.create('v1/namespaces', { metadata: { name: 'team-a' } });
    await server.create('v1/pods', { metadata: { name: 'p', namespace: 'team-a' } });
    await server.create('v1/configmaps', { metadata: { name: 'c', namespace: 'team-a' } });
    await server.create('v1/configmaps', { metadata: { name: 'held', namespace: 'team-a', finalizers: ['example.com/hold'] } });
    await server.create('v1/configmaps', { metadata: { name: 'keep', namespace: 'other' } });
    const rv = server.resourceVersion();
    const open = await Promise.all(
      ['/api/v1/namespaces', '/api/v1/pods', '/api/v1/configmaps'].map((path) => WireWatch.open(`${server.url}${path}?watch=true&resourceVersion=${rv}`)),
    );
    const [nsWatch, podWatch, cmWatch] = open as [WireWatch, WireWatch, WireWatch];
    try {
      const res = await request(`${server.url}/api/v1/namespaces/team-a`, { method: 'DELETE' });
      expect(res.status).toBe(200);
      expect(res.json.status.phase).toBe('Terminating');
      expect(res.json.metadata.deletionTimestamp).toEqual(expect.any(String));
      // A second delete while the controller works is a conflict, as kube-apiserver answers.
      const again = await request(`${server.url}/api/v1/namespaces/team-a`, { method: 'DELETE' });
      expect(again.status).toBe(409);
      expect(again.json.message).toContain('The system is ensuring all content is removed from this namespace.');

      await podWatch.waitForLines(1);
      await cmWatch.waitForLines(2);
      expect(podWatch.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['DELETED p']);
      expect(cmWatch.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['DELETED c', 'MODIFIED held']);
      // An object with a finalizer holds the namespace in Terminating until it goes.
      expect(server.get<any>('v1/namespaces', '', 'team-a')?.status.phase).toBe('Terminating');
      await server.patch('v1/configmaps', 'team-a', 'held', { metadata: { finalizers: null } });
      await nsWatch.waitForLines(2);
      expect(nsWatch.events.map((e) => `${e.type} ${e.object.status.phase}`)).toEqual(['MODIFIED Terminating', 'DELETED Terminating']);
      const rvOf = (e: { object: any } | undefined): number => Number(e?.object.metadata.resourceVersion);
      expect(rvOf(nsWatch.events[0])).toBeLessThan(rvOf(podWatch.events[0]));
      expect(rvOf(cmWatch.events[1])).toBeLessThan(rvOf(nsWatch.events[1]));
      expect(server.get('v1/namespaces', '', 'team-a')).toBeUndefined();
      expect(server.list('v1/configmaps').map((o: any) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['other/keep']);
    } finally {
      for (const w of open) w.close();
    }
  });

  it('does the same for server.delete, which returns the namespace marked Terminating while it still exists', async () => {
    await server.create('v1/namespaces', { metadata: { name: 'empty' } });
    await server.create('v1/namespaces', { metadata: { name: 'full' } });
    await server.create('v1/pods', { metadata: { name: 'p', namespace: 'full' } });
    const marked = await server.delete<any>('v1/namespaces', undefined, 'full');
    expect(marked.status.phase).toBe('Terminating');
    // The controller acts on a later tick, after the call returned.
    expect(server.get('v1/pods', 'full', 'p')).toBeDefined();
    await server.delete('v1/namespaces', undefined, 'empty');
    await waitFor(() => server.get('v1/namespaces', '', 'full') === undefined && server.get('v1/namespaces', '', 'empty') === undefined, 'both namespaces to be gone', 5_000);
    expect(server.list('v1/pods')).toEqual([]);
  });
});

describe('stored JSON', () => {
  it('is exactly the object after updates that keep some sections and change others', async () => {
    const server = await startApiServer();
    try {
      const created = await server.create<Record<string, any>>('v1/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'keep', namespace: 'default', labels: { a: '1' } },
        spec: { containers: [{ name: 'c', image: 'busybox', env: [{ name: 'X', value: 'quote " and \\u2028' }] }] },
      });
      await server.patch('v1/pods', 'default', 'keep', { status: { phase: 'Running' } });
      await server.patch('v1/pods', 'default', 'keep', { metadata: { labels: { a: '2', b: 'x' } } });
      const churn = server.churn({ resource: 'v1/pods', namespace: 'default', creates: 0, updates: 20, deletes: 0, perSecond: 10_000 });
      await churn.done;
      const viaHttp = (await (await fetch(`${server.url}/api/v1/namespaces/default/pods/keep`)).json()) as Record<string, any>;
      const direct = server.get('v1/pods', 'default', 'keep') as Record<string, any>;
      expect(viaHttp).toEqual(direct);
      expect(viaHttp.spec).toEqual(created.spec);
      expect(viaHttp.metadata.labels).toMatchObject({ a: '2', b: 'x' });
      expect(Number(viaHttp.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
      const listed = (await (await fetch(`${server.url}/api/v1/pods`)).json()) as { items: Record<string, any>[] };
      // kube-apiserver names a built-in resource's type on the list, not on each item.
      const { apiVersion: _apiVersion, kind: _kind, ...untyped } = direct;
      expect(listed.items.find((p) => p.metadata.name === 'keep')).toEqual(untyped);
    } finally {
      await server.close();
    }
  });
});
