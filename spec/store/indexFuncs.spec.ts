import { describe, expect, it } from 'vitest';
import { byControllerUid, byField, byLabel, byNamespace, byOwnerUid, createIndexer, namespaceIndex, type KubeObject } from '../../src/store/index.js';

function owned(refs: { uid: string; controller?: boolean }[]): KubeObject {
  return { metadata: { name: 'x', ownerReferences: refs.map((r) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `rs-${r.uid}`, ...r })) } };
}

describe('byNamespace (I-17)', () => {
  it('is registered under the name "namespace"', () => {
    expect(namespaceIndex).toBe('namespace');
  });

  it('gives the namespace, or "" for a cluster-scoped object', () => {
    expect(byNamespace({ metadata: { namespace: 'shop', name: 'a' } })).toEqual(['shop']);
    expect(byNamespace({ metadata: { name: 'node' } })).toEqual(['']);
    expect(byNamespace({})).toEqual(['']);
  });

  it('returns the same frozen array for the same namespace, so indexing allocates nothing', () => {
    const a = byNamespace({ metadata: { namespace: 'same', name: 'a' } });
    expect(byNamespace({ metadata: { namespace: 'same', name: 'b' } })).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
  });
});

describe('byLabel', () => {
  it('gives the label value, nothing when the label is absent', () => {
    const f = byLabel('app.kubernetes.io/name');
    expect(f({ metadata: { name: 'a', labels: { 'app.kubernetes.io/name': 'web' } } })).toEqual(['web']);
    expect(f({ metadata: { name: 'a', labels: { 'app.kubernetes.io/name': '' } } })).toEqual(['']);
    expect(f({ metadata: { name: 'a', labels: { other: 'x' } } })).toEqual([]);
    expect(f({ metadata: { name: 'a' } })).toEqual([]);
  });

  it('ignores properties inherited from Object.prototype', () => {
    expect(byLabel('constructor')({ metadata: { name: 'a', labels: {} } })).toEqual([]);
  });

  it('rejects an invalid label key up front', () => {
    expect(() => byLabel('Bad_')).toThrow(TypeError);
    expect(() => byLabel('a/b/c')).toThrow(/byLabel: invalid key "a\/b\/c"/);
    expect(() => byLabel(3 as never)).toThrow(new TypeError('byLabel: key must be a string, got 3'));
  });
});

describe('byOwnerUid', () => {
  it('gives every owner UID', () => {
    expect(byOwnerUid(owned([{ uid: 'u1' }, { uid: 'u2', controller: true }]))).toEqual(['u1', 'u2']);
    expect(byOwnerUid(owned([{ uid: 'u1' }]))).toEqual(['u1']);
  });

  it('gives nothing without owners and skips empty UIDs', () => {
    expect(byOwnerUid({ metadata: { name: 'a' } })).toEqual([]);
    expect(byOwnerUid(owned([]))).toEqual([]);
    expect(byOwnerUid(owned([{ uid: '' }]))).toEqual([]);
    expect(byOwnerUid(owned([{ uid: '' }, { uid: 'u2' }]))).toEqual(['u2']);
  });

  it('finds everything a given owner owns through the store', () => {
    const store = createIndexer({ indexers: { owner: byOwnerUid } });
    store.add({ metadata: { name: 'p1', ownerReferences: owned([{ uid: 'rs1' }]).metadata?.ownerReferences } });
    store.add({ metadata: { name: 'p2', ownerReferences: owned([{ uid: 'rs1' }, { uid: 'rs2' }]).metadata?.ownerReferences } });
    expect(store.indexKeys('owner', 'rs1')).toEqual(['p1', 'p2']);
    expect(store.indexKeys('owner', 'rs2')).toEqual(['p2']);
  });
});

describe('byControllerUid', () => {
  it('gives the UID of the controller owner only', () => {
    expect(byControllerUid(owned([{ uid: 'u1' }, { uid: 'u2', controller: true }]))).toEqual(['u2']);
  });

  it('gives nothing when no owner is the controller', () => {
    expect(byControllerUid(owned([{ uid: 'u1' }, { uid: 'u2', controller: false }]))).toEqual([]);
    expect(byControllerUid({ metadata: { name: 'a' } })).toEqual([]);
  });
});

describe('byField', () => {
  const obj = {
    metadata: { name: 'a', finalizers: ['f1', 'f2'] },
    spec: { nodeName: 'node-1', replicas: 2, paused: true, mixed: ['x', 1, null, { no: 1 }, false], empty: null, nested: { a: 1 } },
  };

  it('gives a string as is, numbers and booleans as text', () => {
    expect(byField('spec.nodeName')(obj)).toEqual(['node-1']);
    expect(byField('spec.replicas')(obj)).toEqual(['2']);
    expect(byField('spec.paused')(obj)).toEqual(['true']);
  });

  it('gives one value per scalar element of an array', () => {
    expect(byField('metadata.finalizers')(obj)).toEqual(['f1', 'f2']);
    expect(byField('spec.mixed')(obj)).toEqual(['x', '1', 'false']);
  });

  it('gives nothing for a missing path, null or an object', () => {
    expect(byField('spec.missing')(obj)).toEqual([]);
    expect(byField('spec.nodeName.deeper')(obj)).toEqual([]);
    expect(byField('spec.empty')(obj)).toEqual([]);
    expect(byField('spec.nested')(obj)).toEqual([]);
    expect(byField('a')(null)).toEqual([]);
    expect(byField('constructor')({})).toEqual([]);
  });

  it('reads array elements by index', () => {
    expect(byField('metadata.finalizers.1')(obj)).toEqual(['f2']);
  });

  it('indexes each array element in the store', () => {
    const store = createIndexer<typeof obj>({ keyFunc: (o) => o.metadata.name, indexers: { fin: byField('metadata.finalizers') } });
    store.add(obj);
    expect(store.listIndexFuncValues('fin').sort()).toEqual(['f1', 'f2']);
  });

  it('rejects an empty path or segment up front', () => {
    expect(() => byField('')).toThrow(TypeError);
    expect(() => byField('a..b')).toThrow(/byField: path "a..b" has an empty segment/);
    expect(() => byField(1 as never)).toThrow(TypeError);
  });
});
