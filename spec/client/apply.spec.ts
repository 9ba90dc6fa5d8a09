import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConflicts, isApplyConflict } from '../../src/client/conflicts.js';
import { isConflict, isNotFound, KubeApiError } from '../../src/errors/api/index.js';
import { objectClient } from '../../src/client/objectClient.js';
import { SelectorParseError } from '../../src/store/index.js';
import type { KubeObject } from '../../src/store/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';

// The writing half of objectClient — server-side apply, the status subresource, list, dry run and field
// managers — against the simulator over 127.0.0.1.

interface Widget extends KubeObject {
  spec?: { size?: number; color?: string };
  status?: { phase?: string; observedGeneration?: number };
}

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer({ resources: [{ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', subresources: { status: {} } }] });
});
afterAll(async () => {
  await server.close();
});

let seq = 0;
const fresh = (prefix: string): string => `${prefix}-${++seq}`;
const cmConfig = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const managers = (obj: KubeObject): string[] =>
  ((obj.metadata as { managedFields?: { manager: string; operation: string; subresource?: string }[] }).managedFields ?? []).map(
    (e) => `${e.manager}/${e.operation}${e.subresource === undefined ? '' : `/${e.subresource}`}`,
  );

describe('apply', () => {
  it('creates, then updates, what its field manager owns; the client default manager is used unless a call names one', async () => {
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default', fieldManager: 'my-controller' });
    const name = fresh('cm');
    const created = await cms.apply(cmConfig(name, { a: '1' }));
    expect(created.data).toEqual({ a: '1' });
    expect(managers(created)).toEqual(['my-controller/Apply']);
    const other = await cms.apply(cmConfig(name, { b: '2' }), { fieldManager: 'helper' });
    expect(other.data).toEqual({ a: '1', b: '2' });
    expect(managers(other)).toEqual(['my-controller/Apply', 'helper/Apply']);
    // my-controller stops sending `a`: it goes, since nobody else owns it.
    const pruned = await cms.apply(cmConfig(name, { c: '3' }));
    expect(pruned.data).toEqual({ b: '2', c: '3' });
  });

  it('a conflict with another manager is a KubeApiError that isApplyConflict recognises, naming each manager and field; force takes over', async () => {
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const name = fresh('cm');
    await cms.create({ metadata: { name }, data: { a: '1' } }, { fieldManager: 'kubectl-create' });
    await cms.apply(cmConfig(name, { b: '2' }), { fieldManager: 'helm' });
    const err = await cms.apply(cmConfig(name, { a: 'mine', b: 'mine' }), { fieldManager: 'scaler' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(409);
    expect(isApplyConflict(err)).toBe(true);
    expect(isConflict(err)).toBe(true);
    expect(applyConflicts(err)).toEqual([
      { manager: 'kubectl-create', operation: 'Update', field: '.data.a', message: 'conflict with "kubectl-create" using v1' },
      { manager: 'helm', operation: 'Apply', field: '.data.b', message: 'conflict with "helm"' },
    ]);
    expect((err as Error).message).toMatch(/^apply v1\/configmaps default\/cm-\d+: 409 Conflict: Apply failed with 2 conflicts: conflicts with "helm":\n- \.data\.b\nconflicts with "kubectl-create" using v1:\n- \.data\.a$/);
    expect(server.get<V1ConfigMap>('v1/configmaps', 'default', name)?.data).toEqual({ a: '1', b: '2' });

    const forced = await cms.apply(cmConfig(name, { a: 'mine', b: 'mine' }), { fieldManager: 'scaler', force: true });
    expect(forced.data).toEqual({ a: 'mine', b: 'mine' });
    expect(managers(forced)).toEqual(['scaler/Apply']);
  });

  it('other errors are not apply conflicts, and applyConflicts of them is empty', async () => {
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const name = fresh('cm');
    const v1 = await cms.create({ metadata: { name } });
    await cms.patch(name, { data: { x: 'y' } });
    const stale = await cms.replace(v1).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    expect(isApplyConflict(stale)).toBe(false);
    expect(applyConflicts(stale)).toEqual([]);
    expect(applyConflicts(new Error('x'))).toEqual([]);
  });

  it('checks the configuration before sending anything', () => {
    const before = server.stats.requests;
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    expect(() => cms.apply({ apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'x' } })).toThrow(/config.apiVersion: expected "v1"/);
    expect(() => cms.apply({ apiVersion: 'v1', kind: '', metadata: { name: 'x' } })).toThrow(/config.kind/);
    expect(() => cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '' } })).toThrow(/config.metadata.name/);
    expect(() => cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'other' } })).toThrow(/metadata.namespace "other" is not the client's namespace "default"/);
    expect(() => cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', managedFields: [] } })).toThrow(/managedFields/);
    expect(() => cms.apply(cmConfig('x', {}), { force: 'yes' as never })).toThrow(/force: expected a boolean, got "yes"/);
    expect(() => cms.apply(cmConfig('x', {}), { fieldManager: '' })).toThrow(/fieldManager: expected 1 to 128 printable characters, got ""/);
    expect(() => cms.apply(cmConfig('x', {}), { fieldManager: 'x'.repeat(129) })).toThrow(/fieldManager/);
    expect(() => cms.apply(null as never)).toThrow(/config: apply expects an object/);
    expect(server.stats.requests).toBe(before);
  });
});

describe('dry run and field managers on every write', () => {
  it('a dry-run client writes nothing with any verb; a call can turn it off', async () => {
    const dry = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default', dryRun: true });
    const wet = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const name = fresh('cm');
    const rv = server.resourceVersion();
    const created = await dry.create({ metadata: { name }, data: { a: '1' } });
    expect(created.data).toEqual({ a: '1' });
    await dry.apply(cmConfig(name, { a: '1' }));
    expect(server.get('v1/configmaps', 'default', name)).toBeUndefined();
    expect(server.resourceVersion()).toBe(rv);

    const real = await dry.create({ metadata: { name }, data: { a: '1' } }, { dryRun: false });
    const at = server.resourceVersion();
    expect((await dry.replace({ ...real, data: { a: '2' } })).data).toEqual({ a: '2' });
    expect((await dry.patch(name, { data: { a: '3' } })).data).toEqual({ a: '3' });
    await dry.delete(name);
    expect((await wet.get(name)).data).toEqual({ a: '1' });
    expect(server.resourceVersion()).toBe(at);
    await wet.delete(name, { dryRun: true });
    expect((await wet.get(name)).data).toEqual({ a: '1' });
  });

  it('create, replace and patch record their field manager: the client default, or the call’s', async () => {
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const name = fresh('cm');
    const created = await cms.create({ metadata: { name }, data: { a: '1' } });
    expect(managers(created)).toEqual(['rxkube/Update']);
    const patched = await cms.patch(name, { data: { b: '2' } }, { fieldManager: 'labeller' });
    expect(managers(patched)).toEqual(['rxkube/Update', 'labeller/Update']);
    const replaced = await cms.replace({ ...patched, data: { a: '1', b: '2', c: '3' } }, { fieldManager: 'editor' });
    expect(managers(replaced)).toEqual(['rxkube/Update', 'labeller/Update', 'editor/Update']);
  });

  it('rejects bad write options up front', () => {
    expect(() => objectClient(server.kubeConfig(), 'v1/configmaps', { fieldManager: 'a\nb' })).toThrow(/fieldManager: expected 1 to 128 printable characters/);
    expect(() => objectClient(server.kubeConfig(), 'v1/configmaps', { dryRun: 'yes' as never })).toThrow(/dryRun: expected a boolean, got "yes"/);
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    expect(() => cms.create({ metadata: { name: 'x' } }, { dryRun: 1 as never })).toThrow(/dryRun/);
    expect(() => cms.delete('x', { dryRun: 'All' as never })).toThrow(/dryRun/);
  });
});

describe('the status subresource', () => {
  const widgets = () => objectClient<Widget>(server.kubeConfig(), 'example.com/v1/widgets', { namespace: 'default', fieldManager: 'widget-controller' });
  const widget = (name: string, spec: Widget['spec'], status?: Widget['status']): Widget => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name },
    spec,
    ...(status !== undefined && { status }),
  });

  it('reads, replaces, patches and applies status without touching the spec or the generation', async () => {
    const w = widgets();
    const name = fresh('w');
    const created = await w.create(widget(name, { size: 1 }, { phase: 'ignored on create' }));
    expect(created.status).toBeUndefined();
    const generation = created.metadata?.generation;

    const replaced = await w.replaceStatus({ ...created, spec: { size: 99 }, status: { phase: 'Pending' } });
    expect(replaced.status).toEqual({ phase: 'Pending' });
    expect(replaced.spec).toEqual({ size: 1 });
    expect(replaced.metadata?.generation).toBe(generation);
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));

    const patched = await w.patchStatus(name, { status: { observedGeneration: 1 } });
    expect(patched.status).toEqual({ phase: 'Pending', observedGeneration: 1 });

    const applied = await w.applyStatus({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, status: { phase: 'Ready' } }, { force: true });
    expect(applied.status?.phase).toBe('Ready');
    expect(managers(applied)).toContain('widget-controller/Apply/status');
    expect((await w.getStatus(name)).status?.phase).toBe('Ready');

    // A write to the object itself leaves the status alone.
    const respec = await w.patch(name, { spec: { size: 2 }, status: { phase: 'Broken' } });
    expect(respec.spec).toEqual({ size: 2 });
    expect(respec.status?.phase).toBe('Ready');
    expect(respec.metadata?.generation).toBe((generation ?? 0) + 1);
  });

  it('a stale resourceVersion in replaceStatus is a conflict, and a missing object is a 404', async () => {
    const w = widgets();
    const name = fresh('w');
    const created = await w.create(widget(name, { size: 1 }));
    await w.patchStatus(name, { status: { phase: 'A' } });
    const stale = await w.replaceStatus({ ...created, status: { phase: 'B' } }).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    await expect(w.getStatus('missing')).rejects.toSatisfy(isNotFound);
    await expect(w.applyStatus({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'missing' }, status: {} })).rejects.toSatisfy(isNotFound);
  });

  it('resources without a status subresource answer 404 to status calls', async () => {
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const name = fresh('cm');
    await cms.create({ metadata: { name } });
    await expect(cms.getStatus(name)).rejects.toSatisfy(isNotFound);
  });
});

describe('list', () => {
  it('lists page by page with label and field selectors, in one namespace or all', async () => {
    const ns = fresh('list');
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: ns });
    for (let i = 0; i < 7; i++) await cms.create({ metadata: { name: `c${i}`, labels: { parity: i % 2 === 0 ? 'even' : 'odd' } } });
    const before = server.stats.requests;
    const all = await cms.list({ pageSize: 2 });
    expect(all.items.map((c) => c.metadata?.name)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
    expect(all.paginated).toBe(true);
    expect(server.stats.requests - before).toBe(4);
    expect(all.resourceVersion).toMatch(/^\d+$/);
    const even = await cms.list({ labelSelector: 'parity=even', fieldSelector: 'metadata.name!=c0' });
    expect(even.items.map((c) => c.metadata?.name)).toEqual(['c2', 'c4', 'c6']);
    const everywhere = await objectClient(server.kubeConfig(), 'v1/configmaps').list({ labelSelector: 'parity=odd' });
    expect(everywhere.items.filter((c) => c.metadata?.namespace === ns)).toHaveLength(3);
  });

  it('checks selectors before any request, as kubeSource does', () => {
    const before = server.stats.requests;
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    expect(() => cms.list({ labelSelector: 'a in (b' })).toThrow(SelectorParseError);
    expect(() => cms.list({ fieldSelector: 'a==b==c' })).toThrow(SelectorParseError);
    expect(() => cms.list({ labelSelector: 7 as never })).toThrow(/labelSelector: expected a string/);
    expect(() => cms.list({ pageSize: -1 })).toThrow(/pageSize/);
    expect(server.stats.requests).toBe(before);
  });

  it('a field the server cannot select on is its 400, and an abort ends the list', async () => {
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const err = await cms.list({ fieldSelector: 'data.a=1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(400);
    const reason = new Error('stop');
    await expect(cms.list({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });
});
