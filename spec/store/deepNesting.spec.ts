import type { V1ConfigMap } from '@kubernetes/client-node';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { jsonText } from '../../src/store/jsonText.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

/** kube-apiserver's limit on the nesting of an object's JSON. */
const SERVER_DEPTH = 10_000;

/** `{"a":{"a":…{"leaf":n}…}}` with `levels` objects in all. */
function nested(levels: number, leaf: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let at = root;
  for (let i = 1; i < levels; i++) {
    const next: Record<string, unknown> = {};
    at['a'] = next;
    at = next;
  }
  at['leaf'] = leaf;
  return root;
}

/** How deep a parsed value nests, walked without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    deepest = Math.max(deepest, d);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

/** A ConfigMap whose JSON nests `SERVER_DEPTH` levels: the object, `extra`, and the rest under it. */
function deepConfigMap(name: string, leaf: number): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { leaf: String(leaf) }, extra: nested(SERVER_DEPTH - 1, leaf) } as V1ConfigMap;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(): Promise<ApiServer> {
  const s = await startApiServer({ port: 0 });
  cleanups.push(() => s.close());
  return s;
}

describe('jsonText', () => {
  it('is JSON.stringify for ordinary values: key order, toJSON, undefined and functions left out, null in arrays', () => {
    const samples: object[] = [
      { b: 1, a: [1, 'x', null, undefined, () => 1], c: { d: new Date(0), e: undefined, f: Number.NaN }, g: '\u001b"\\' },
      [undefined, { toJSON: () => ({ z: [1] }) }, [], {}],
    ];
    for (const s of samples) expect(jsonText(s)).toBe(JSON.stringify(s));
  });

  it('is JSON.stringify for any JSON value, whichever of its two paths writes it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 4_600, max: 6_000 }), (value, depth) => {
        const holder = { value };
        expect(jsonText(holder)).toBe(JSON.stringify(holder));
        // The same value under a chain deeper than JSON.stringify can go: written by the walk, with the same text inside.
        const deep = nested(depth, 0);
        let at = deep;
        while (at['a'] !== undefined) at = at['a'] as Record<string, unknown>;
        at['value'] = value;
        const text = jsonText(deep);
        expect(text.slice(text.lastIndexOf('"leaf":0,"value":') + 17, text.length - depth)).toBe(JSON.stringify(value) ?? '');
      }),
      { numRuns: 60 },
    );
  });

  it(`writes objects nested ${SERVER_DEPTH} and 100,000 deep, where JSON.stringify throws a RangeError`, () => {
    const deep = nested(SERVER_DEPTH, 7);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(jsonText(deep)).toBe(`${'{"a":'.repeat(SERVER_DEPTH - 1)}{"leaf":7}${'}'.repeat(SERVER_DEPTH - 1)}`);
    const deeper = [nested(100_000, 1), [undefined]];
    expect(depthOf(JSON.parse(jsonText(deeper)))).toBe(100_001);
  });

  it('refuses a cycle with a TypeError, as JSON.stringify does', () => {
    const deep = nested(SERVER_DEPTH, 1);
    let at = deep;
    while (at['a'] !== undefined) at = at['a'] as Record<string, unknown>;
    at['back'] = deep;
    expect(() => jsonText(deep)).toThrow(TypeError);
  });
});

describe(`an object nested ${SERVER_DEPTH} deep, as kube-apiserver accepts`, () => {
  it('is cached by an informer through add, update and delete, deep-frozen, with nothing reported', async () => {
    const s = await server();
    await s.create('v1/configmaps', deepConfigMap('deep', 1));
    const errors: Error[] = [];
    const cms = informer(kubeSource(s.kubeConfig(), 'v1/configmaps'), { onError: (e) => errors.push(e) });
    const seen: string[] = [];
    cms.addHandler({ add: () => void seen.push('add'), update: () => void seen.push('update'), delete: () => void seen.push('delete') });
    const sub = cms.subscribe();
    cleanups.push(() => sub.unsubscribe());
    await cms.whenSynced({ timeout: 10_000 });
    const cached = cms.store.getByKey('default/deep') as unknown as Record<string, unknown>;
    expect(depthOf(cached)).toBe(SERVER_DEPTH);
    let leaf = cached['extra'] as Record<string, unknown>;
    while (leaf['a'] !== undefined) leaf = leaf['a'] as Record<string, unknown>;
    expect(Object.isFrozen(leaf)).toBe(true);

    const current = s.get<V1ConfigMap>('v1/configmaps', 'default', 'deep') as V1ConfigMap;
    await s.update('v1/configmaps', { ...deepConfigMap('deep', 2), metadata: current.metadata });
    await waitFor(() => cms.store.getByKey('default/deep')?.data?.['leaf'] === '2', 'the deep update to reach the cache');
    await s.delete('v1/configmaps', 'default', 'deep');
    await waitFor(() => cms.store.getByKey('default/deep') === undefined, 'the delete to reach the cache');
    expect(seen).toEqual(['add', 'update', 'delete']);
    expect(errors).toEqual([]);
  });

  it('leaves a label-selected view as a delete, whole or as metadata only, though its managedFields nest as deep', async () => {
    const s = await server();
    const cms = objectClient(s.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const deep = deepConfigMap('leaving', 1);
    await cms.create({ ...deep, metadata: { ...deep.metadata, labels: { app: 'deep' } } });
    const whole = informer(kubeSource(s.kubeConfig(), 'v1/configmaps', { labelSelector: 'app=deep' }), { onError: () => {} });
    const meta = informer(kubeSource(s.kubeConfig(), 'v1/configmaps', { labelSelector: 'app=deep', metadataOnly: true }), { onError: () => {} });
    const deletes: string[] = [];
    whole.addHandler({ delete: () => void deletes.push('whole') });
    meta.addHandler({ delete: () => void deletes.push('metadata') });
    const subs = [whole.subscribe(), meta.subscribe()];
    cleanups.push(() => subs.forEach((sub) => sub.unsubscribe()));
    await whole.whenSynced({ timeout: 10_000 });
    await meta.whenSynced({ timeout: 10_000 });
    expect([whole.store.listKeys(), meta.store.listKeys()]).toEqual([['default/leaving'], ['default/leaving']]);
    await cms.patch('leaving', { metadata: { labels: { app: 'other' } } }, { type: 'merge' });
    await waitFor(() => deletes.length === 2, 'both views to see it leave');
    expect(deletes.sort()).toEqual(['metadata', 'whole']);
  });

  it('is written, patched and applied by objectClient, which serialises what it sends without recursion', async () => {
    const s = await server();
    const cms = objectClient(s.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const created = await cms.create(deepConfigMap('written', 3));
    // managedFields (fieldsV1 mirrors the object's maps) nests deeper than the object itself.
    expect(depthOf((created as { extra?: unknown }).extra)).toBe(SERVER_DEPTH - 1);
    expect(depthOf(s.get<{ extra?: unknown }>('v1/configmaps', 'default', 'written')?.extra)).toBe(SERVER_DEPTH - 1);

    // A merge patch and a server-side apply of it: the simulator merges without recursion too.
    const patched = await cms.patch('written', { data: { patched: 'yes' }, extra: nested(SERVER_DEPTH - 1, 4) }, { type: 'merge' });
    expect([patched.data?.['patched'], depthOf((patched as { extra?: unknown }).extra)]).toEqual(['yes', SERVER_DEPTH - 1]);
    const applied = await cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'written' }, data: { leaf: '5' }, extra: nested(SERVER_DEPTH - 1, 5) } as never, { fieldManager: 'deep', force: true });
    expect([applied.data?.['leaf'], depthOf((applied as { extra?: unknown }).extra)]).toEqual(['5', SERVER_DEPTH - 1]);
  });
});
