import { describe, expect, it } from 'vitest';
import {
  DeletedFinalStateUnknown,
  deletionHandlingMetaNamespaceKey,
  metaNamespaceKey,
  splitMetaNamespaceKey,
  type KubeObject,
} from '../../src/store/index.js';

describe('metaNamespaceKey', () => {
  it('is "namespace/name" for a namespaced object', () => {
    expect(metaNamespaceKey({ metadata: { namespace: 'default', name: 'web' } })).toBe('default/web');
  });

  it('is "name" for a cluster-scoped object or an empty namespace', () => {
    expect(metaNamespaceKey({ metadata: { name: 'node-1' } })).toBe('node-1');
    expect(metaNamespaceKey({ metadata: { namespace: '', name: 'node-1' } })).toBe('node-1');
  });

  it('returns a string unchanged (explicit key)', () => {
    expect(metaNamespaceKey('any/thing')).toBe('any/thing');
  });

  it('rejects an object without metadata or name', () => {
    expect(() => metaNamespaceKey({} as KubeObject)).toThrow(new TypeError('object has no metadata'));
    expect(() => metaNamespaceKey(null as unknown as KubeObject)).toThrow(TypeError);
    expect(() => metaNamespaceKey({ metadata: { namespace: 'ns' } })).toThrow(new TypeError('object has no metadata.name'));
    expect(() => metaNamespaceKey({ metadata: { name: '' } })).toThrow(TypeError);
  });
});

describe('deletionHandlingMetaNamespaceKey', () => {
  it('keys a tombstone by its key, not by the object it carries', () => {
    const tomb = new DeletedFinalStateUnknown<KubeObject>('ns/old', { metadata: { namespace: 'ns', name: 'other' } });
    expect(deletionHandlingMetaNamespaceKey(tomb)).toBe('ns/old');
    expect(deletionHandlingMetaNamespaceKey(new DeletedFinalStateUnknown('gone', undefined))).toBe('gone');
  });

  it('keys anything else like metaNamespaceKey', () => {
    expect(deletionHandlingMetaNamespaceKey({ metadata: { namespace: 'a', name: 'b' } })).toBe('a/b');
    expect(() => deletionHandlingMetaNamespaceKey({ metadata: {} })).toThrow(TypeError);
  });
});

describe('splitMetaNamespaceKey', () => {
  it('splits one segment into an empty namespace and the name', () => {
    expect(splitMetaNamespaceKey('node-1')).toEqual({ namespace: '', name: 'node-1' });
    expect(splitMetaNamespaceKey('')).toEqual({ namespace: '', name: '' });
  });

  it('splits two segments into namespace and name', () => {
    expect(splitMetaNamespaceKey('default/web')).toEqual({ namespace: 'default', name: 'web' });
    expect(splitMetaNamespaceKey('/web')).toEqual({ namespace: '', name: 'web' });
  });

  it('rejects more than two segments', () => {
    expect(() => splitMetaNamespaceKey('a/b/c')).toThrow(new TypeError('unexpected key format: "a/b/c"'));
  });

  it('inverts metaNamespaceKey', () => {
    const obj = { metadata: { namespace: 'team', name: 'api' } };
    expect(splitMetaNamespaceKey(metaNamespaceKey(obj))).toEqual(obj.metadata);
  });
});
