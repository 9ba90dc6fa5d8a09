import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request, type WireResponse } from './wire.js';

// Server-side apply, managedFields, dryRun and the status subresource of the simulator, over raw HTTP.

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer({
    resources: [
      { group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', subresources: { status: {} } },
      { group: 'example.com', version: 'v1', plural: 'gadgets', kind: 'Gadget' },
    ],
  });
});
afterAll(async () => {
  await server.close();
});

let seq = 0;
const fresh = (prefix: string): string => `${prefix}-${++seq}`;
const cmUrl = (name: string, query = ''): string => `${server.url}/api/v1/namespaces/default/configmaps/${name}${query}`;
const APPLY = 'application/apply-patch+yaml';

function apply(url: string, manager: string, body: unknown, extra = ''): Promise<WireResponse> {
  return request(`${url}?fieldManager=${manager}${extra}`, { method: 'PATCH', contentType: APPLY, body });
}

const cm = (name: string, data: Record<string, string>, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels && { labels }) },
  data,
});

/** The fieldsV1 each manager holds, by `manager/operation`. */
function owners(obj: any): Record<string, unknown> {
  return Object.fromEntries((obj.metadata.managedFields ?? []).map((e: any) => [`${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`, e.fieldsV1]));
}

describe('server-side apply', () => {
  it('creates a missing object and records the applier as owner of exactly the fields it sent', async () => {
    const name = fresh('cm');
    const res = await apply(cmUrl(name), 'alice', cm(name, { a: '1' }, { app: 'x' }));
    expect(res.status).toBe(201); // an apply that creates answers Created, as kube-apiserver's patch handler does
    expect(res.json.data).toEqual({ a: '1' });
    expect(res.json.metadata.managedFields).toEqual([
      { manager: 'alice', operation: 'Apply', apiVersion: 'v1', time: expect.stringMatching(/Z$/), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } } },
    ]);
    expect(server.get<any>('v1/configmaps', 'default', name)?.metadata.managedFields).toHaveLength(1);
  });

  it('a second manager changing a field the first owns is 409 naming the manager and the field; force takes it over', async () => {
    const name = fresh('cm');
    await apply(cmUrl(name), 'alice', cm(name, { a: '1', b: '2' }));
    const refused = await apply(cmUrl(name), 'bob', cm(name, { a: 'changed' }));
    expect(refused.status).toBe(409);
    expect(refused.json.reason).toBe('Conflict');
    expect(refused.json.message).toBe('Apply failed with 1 conflict: conflict with "alice": .data.a');
    expect(refused.json.details.causes).toEqual([{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' }]);
    expect(server.get<any>('v1/configmaps', 'default', name)?.data.a).toBe('1');

    const forced = await apply(cmUrl(name), 'bob', cm(name, { a: 'changed' }), '&force=true');
    expect(forced.status).toBe(200);
    expect(forced.json.data).toEqual({ a: 'changed', b: '2' });
    expect(owners(forced.json)).toEqual({ 'alice/Apply': { 'f:data': { 'f:b': {} } }, 'bob/Apply': { 'f:data': { 'f:a': {} } } });
  });

  it('the same value applied by two managers is shared, not a conflict', async () => {
    const name = fresh('cm');
    await apply(cmUrl(name), 'alice', cm(name, { a: '1' }));
    const shared = await apply(cmUrl(name), 'bob', cm(name, { a: '1' }));
    expect(shared.status).toBe(200);
    expect(owners(shared.json)).toEqual({ 'alice/Apply': { 'f:data': { 'f:a': {} } }, 'bob/Apply': { 'f:data': { 'f:a': {} } } });
    // Alice stops sending it: Bob still owns it, so it stays.
    const dropped = await apply(cmUrl(name), 'alice', cm(name, { other: 'x' }));
    expect(dropped.json.data).toEqual({ a: '1', other: 'x' });
  });

  it('several conflicts are listed per manager, and an Update owner is named with its apiVersion', async () => {
    const name = fresh('cm');
    await request(`${server.url}/api/v1/namespaces/default/configmaps?fieldManager=kubectl-edit`, { method: 'POST', body: cm(name, { a: '1', b: '2' }) });
    const refused = await apply(cmUrl(name), 'bob', cm(name, { a: 'x', b: 'y' }));
    expect(refused.status).toBe(409);
    expect(refused.json.message).toBe('Apply failed with 2 conflicts: conflicts with "kubectl-edit" using v1:\n- .data.a\n- .data.b');
    expect(refused.json.details.causes.map((c: any) => c.field)).toEqual(['.data.a', '.data.b']);
  });

  it('fields removed from an applier’s configuration are removed unless someone else owns them', async () => {
    const name = fresh('cm');
    await apply(cmUrl(name), 'alice', cm(name, { a: '1', b: '2' }, { keep: 'y', drop: 'y' }));
    const next = await apply(cmUrl(name), 'alice', cm(name, { a: '1' }, { keep: 'y' }));
    expect(next.json.data).toEqual({ a: '1' });
    expect(next.json.metadata.labels).toEqual({ keep: 'y' });
    // Removing every label leaves no empty map behind.
    const bare = await apply(cmUrl(name), 'alice', cm(name, { a: '1' }));
    expect(bare.json.metadata.labels).toBeUndefined();
    // An empty map owns the map, not what was in it: `a` goes.
    const empty = await apply(cmUrl(name), 'alice', cm(name, {}));
    expect(empty.json.data).toEqual({});
    expect(owners(empty.json)).toEqual({ 'alice/Apply': { 'f:data': {} } });
  });

  it('an update takes ownership without a conflict; the applier then conflicts on that field', async () => {
    const name = fresh('cm');
    await apply(cmUrl(name), 'alice', cm(name, { a: '1', b: '2' }));
    const patched = await request(cmUrl(name, '?fieldManager=hand'), { method: 'PATCH', contentType: 'application/merge-patch+json', body: { data: { a: 'by-hand' } } });
    expect(patched.status).toBe(200);
    expect(owners(patched.json)).toEqual({ 'alice/Apply': { 'f:data': { 'f:b': {} } }, 'hand/Update': { 'f:data': { 'f:a': {} } } });
    const refused = await apply(cmUrl(name), 'alice', cm(name, { a: '1', b: '2' }));
    expect(refused.status).toBe(409);
    expect(refused.json.details.causes).toEqual([{ reason: 'FieldManagerConflict', message: 'conflict with "hand" using v1', field: '.data.a' }]);
  });

  it('applying the same configuration again writes nothing', async () => {
    const name = fresh('cm');
    const first = await apply(cmUrl(name), 'alice', cm(name, { a: '1' }));
    const again = await apply(cmUrl(name), 'alice', cm(name, { a: '1' }));
    expect(again.json.metadata.resourceVersion).toBe(first.json.metadata.resourceVersion);
    expect(again.json.metadata.managedFields).toEqual(first.json.metadata.managedFields);
  });

  it('refuses what kube-apiserver refuses: no field manager, force elsewhere, wrong apiVersion, no kind, managedFields in the body', async () => {
    const name = fresh('cm');
    const noManager = await request(cmUrl(name), { method: 'PATCH', contentType: APPLY, body: cm(name, {}) });
    expect(noManager.status).toBe(422);
    const forceOnMerge = await request(cmUrl(name, '?force=true'), { method: 'PATCH', contentType: 'application/merge-patch+json', body: {} });
    expect(forceOnMerge.status).toBe(422);
    expect(forceOnMerge.json.message).toMatch(/force: Forbidden/);
    const wrongVersion = await apply(cmUrl(name), 'alice', { ...cm(name, {}), apiVersion: 'v2' });
    expect(wrongVersion.status).toBe(400);
    expect(wrongVersion.json.message).toMatch(/Incorrect version specified in apply patch/);
    const { kind: _kind, ...noKind } = cm(name, {});
    expect((await apply(cmUrl(name), 'alice', noKind)).status).toBe(400);
    const withManaged = await apply(cmUrl(name), 'alice', { ...cm(name, {}), metadata: { name, managedFields: [] } });
    expect(withManaged.status).toBe(400);
    expect(server.get('v1/configmaps', 'default', name)).toBeUndefined();
  });
});

describe('managedFields of ordinary writes', () => {
  it('a create and a PUT record the writer as the Update owner of what it set or changed', async () => {
    const name = fresh('cm');
    const created = await request(`${server.url}/api/v1/namespaces/default/configmaps?fieldManager=creator`, { method: 'POST', body: cm(name, { a: '1' }) });
    expect(owners(created.json)).toEqual({ 'creator/Update': { 'f:data': { 'f:a': {} } } });
    const put = await request(cmUrl(name, '?fieldManager=editor'), { method: 'PUT', body: { ...created.json, data: { a: '1', b: '2' } } });
    expect(owners(put.json)).toEqual({ 'creator/Update': { 'f:data': { 'f:a': {} } }, 'editor/Update': { 'f:data': { 'f:b': {} } } });
    // managedFields in a body are the server's business: they are ignored.
    const tampered = await request(cmUrl(name, '?fieldManager=editor'), { method: 'PUT', body: { ...put.json, metadata: { ...put.json.metadata, managedFields: [] } } });
    expect(tampered.json.metadata.managedFields).toEqual(put.json.metadata.managedFields);
  });

  it('without fieldManager the writer is named after the User-Agent', async () => {
    const name = fresh('cm');
    const res = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'my-tool/1.2 (linux)' },
      body: JSON.stringify(cm(name, { a: '1' })),
    });
    expect(Object.keys(owners(await res.json()))).toEqual(['my-tool/Update']);
  });
});

describe('dryRun', () => {
  it('answers what would be stored and stores nothing, for create, update, patch, apply and delete', async () => {
    const name = fresh('cm');
    const rv = server.resourceVersion();
    const created = await request(`${server.url}/api/v1/namespaces/default/configmaps?dryRun=All`, { method: 'POST', body: cm(name, { a: '1' }) });
    expect(created.status).toBe(201);
    expect(created.json.metadata.uid).toBeTruthy();
    expect(created.json.metadata.resourceVersion).toBeUndefined();
    expect(server.get('v1/configmaps', 'default', name)).toBeUndefined();
    const applied = await apply(cmUrl(name), 'alice', cm(name, { a: '1' }), '&dryRun=All');
    expect(applied.json.data).toEqual({ a: '1' });
    expect(server.get('v1/configmaps', 'default', name)).toBeUndefined();
    expect(server.resourceVersion()).toBe(rv);

    const real = await apply(cmUrl(name), 'alice', cm(name, { a: '1' }));
    const at = server.resourceVersion();
    const put = await request(cmUrl(name, '?dryRun=All'), { method: 'PUT', body: { ...real.json, data: { a: '2' } } });
    expect(put.json.data).toEqual({ a: '2' });
    expect(put.json.metadata.resourceVersion).toBe(real.json.metadata.resourceVersion);
    const patched = await request(cmUrl(name, '?dryRun=All'), { method: 'PATCH', contentType: 'application/merge-patch+json', body: { data: { a: '3' } } });
    expect(patched.json.data).toEqual({ a: '3' });
    const deleted = await request(cmUrl(name, '?dryRun=All'), { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(server.get<any>('v1/configmaps', 'default', name)?.data).toEqual({ a: '1' });
    expect(server.resourceVersion()).toBe(at);
  });

  it('a dry run still fails as the write would: conflicts, missing objects, bad values', async () => {
    const name = fresh('cm');
    await apply(cmUrl(name), 'alice', cm(name, { a: '1' }));
    expect((await apply(cmUrl(name), 'bob', cm(name, { a: '2' }), '&dryRun=All')).status).toBe(409);
    expect((await request(cmUrl('missing', '?dryRun=All'), { method: 'DELETE' })).status).toBe(404);
    const bad = await request(cmUrl(name, '?dryRun=Some'), { method: 'DELETE' });
    expect(bad.status).toBe(422);
    expect(bad.json.message).toMatch(/dryRun: Unsupported value: "Some"/);
  });
});

describe('the status subresource', () => {
  const widgetUrl = (name: string, sub = ''): string => `${server.url}/apis/example.com/v1/namespaces/default/widgets/${name}${sub}`;
  const widget = (name: string, size: number, phase?: string) => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name },
    spec: { size },
    ...(phase !== undefined && { status: { phase } }),
  });

  it('a create and writes to the main resource leave the status alone', async () => {
    const name = fresh('w');
    const created = await request(`${server.url}/apis/example.com/v1/namespaces/default/widgets`, { method: 'POST', body: widget(name, 1, 'Ready') });
    expect(created.json.status).toBeUndefined();
    await request(widgetUrl(name, '/status'), { method: 'PATCH', contentType: 'application/merge-patch+json', body: { status: { phase: 'Ready' } } });
    const put = await request(widgetUrl(name), { method: 'PUT', body: { ...widget(name, 2, 'Broken'), metadata: { name, resourceVersion: server.get<any>('example.com/v1/widgets', 'default', name)?.metadata.resourceVersion } } });
    expect(put.json.spec.size).toBe(2);
    expect(put.json.status).toEqual({ phase: 'Ready' });
    const patched = await request(widgetUrl(name), { method: 'PATCH', contentType: 'application/merge-patch+json', body: { status: { phase: 'Broken' } } });
    expect(patched.json.status).toEqual({ phase: 'Ready' });
    // The size was set by the create and the PUT (an Update owner), so taking it needs force.
    const applied = await apply(widgetUrl(name), 'alice', widget(name, 3, 'Broken'), '&force=true');
    expect(applied.json.spec.size).toBe(3);
    expect(applied.json.status).toEqual({ phase: 'Ready' });
  });

  it('writes to /status change only the status, bump the resourceVersion but not the generation', async () => {
    const name = fresh('w');
    const created = await request(`${server.url}/apis/example.com/v1/namespaces/default/widgets`, { method: 'POST', body: widget(name, 1) });
    const res = await request(widgetUrl(name, '/status'), {
      method: 'PUT',
      body: { ...widget(name, 99, 'Ready'), metadata: { name, labels: { ignored: 'yes' }, resourceVersion: created.json.metadata.resourceVersion } },
    });
    expect(res.status).toBe(200);
    expect(res.json.status).toEqual({ phase: 'Ready' });
    expect(res.json.spec.size).toBe(1);
    expect(res.json.metadata.labels).toBeUndefined();
    expect(res.json.metadata.generation).toBe(created.json.metadata.generation);
    expect(Number(res.json.metadata.resourceVersion)).toBeGreaterThan(Number(created.json.metadata.resourceVersion));
    expect((await request(widgetUrl(name, '/status'))).json.status).toEqual({ phase: 'Ready' });
  });

  it('status writes are owned through the subresource, and apply to /status conflicts like any apply', async () => {
    const name = fresh('w');
    await apply(widgetUrl(name), 'spec-owner', widget(name, 1));
    const first = await apply(widgetUrl(name, '/status'), 'status-writer', { ...widget(name, 1, 'Ready'), spec: undefined });
    expect(first.status).toBe(200);
    expect(owners(first.json)).toEqual({
      'spec-owner/Apply': { 'f:spec': { 'f:size': {} } },
      'status-writer/Apply/status': { 'f:status': { 'f:phase': {} } },
    });
    const other = await apply(widgetUrl(name, '/status'), 'another', { ...widget(name, 1, 'Failed'), spec: undefined });
    expect(other.status).toBe(409);
    expect(other.json.details.causes).toEqual([{ reason: 'FieldManagerConflict', message: 'conflict with "status-writer"', field: '.status.phase' }]);
    const merged = await request(widgetUrl(name, '/status?fieldManager=kubelet'), { method: 'PATCH', contentType: 'application/merge-patch+json', body: { status: { ready: true } } });
    expect(owners(merged.json)['kubelet/Update/status']).toEqual({ 'f:status': { 'f:ready': {} } });
  });

  it('a resource without a status subresource has no /status, and its status is an ordinary field', async () => {
    const name = fresh('g');
    const url = `${server.url}/apis/example.com/v1/namespaces/default/gadgets`;
    const created = await request(url, { method: 'POST', body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name }, status: { phase: 'Kept' } } });
    expect(created.json.status).toEqual({ phase: 'Kept' });
    expect((await request(`${url}/${name}/status`)).status).toBe(404);
    expect((await request(cmUrl('any', '/status'))).status).toBe(404);
  });

  it('built-ins with a status subresource protect it too, and discovery lists /status only for them', async () => {
    const name = fresh('pod');
    const created = await request(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: { metadata: { name }, status: { phase: 'Running' } } });
    expect(created.json.status.phase).toBe('Pending');
    const put = await request(`${server.url}/api/v1/namespaces/default/pods/${name}/status`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { status: { phase: 'Running' } } });
    expect(put.json.status.phase).toBe('Running');
    const core = (await request(`${server.url}/api/v1`)).json.resources.map((r: any) => r.name);
    expect(core).toContain('pods/status');
    expect(core).not.toContain('configmaps/status');
    const apps = (await request(`${server.url}/apis/apps/v1`)).json.resources.map((r: any) => r.name);
    expect(apps).toContain('deployments/status');
  });
});
