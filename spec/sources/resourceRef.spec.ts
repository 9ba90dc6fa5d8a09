import { describe, expect, it } from 'vitest';
import { parseResourceRef, resourcePath } from '../../src/sources/resourceRef.js';

describe('parseResourceRef / resourcePath', () => {
  it('builds core, grouped and custom resource paths, namespaced or not', () => {
    expect(resourcePath(parseResourceRef('v1/pods'))).toBe('/api/v1/pods');
    expect(resourcePath(parseResourceRef('v1/pods'), 'kube-system')).toBe('/api/v1/namespaces/kube-system/pods');
    expect(resourcePath(parseResourceRef('apps/v1/deployments'), 'a')).toBe('/apis/apps/v1/namespaces/a/deployments');
    expect(resourcePath(parseResourceRef('example.com/v1/widgets'))).toBe('/apis/example.com/v1/widgets');
    expect(resourcePath(parseResourceRef({ version: 'v1', plural: 'nodes', namespaced: false }))).toBe('/api/v1/nodes');
    expect(resourcePath(parseResourceRef({ group: 'core', version: 'v1', plural: 'configmaps' }), 'x')).toBe('/api/v1/namespaces/x/configmaps');
    expect(parseResourceRef('apps/v1/deployments').name).toBe('apps/v1/deployments');
  });

  it('rejects malformed references with a TypeError naming them', () => {
    for (const bad of ['pods', 'a/b/c/d', 'v1/', '/pods', 'v1/po ds', 'apps/v1/../x']) {
      expect(() => parseResourceRef(bad), bad).toThrow(TypeError);
    }
    expect(() => parseResourceRef({ version: '', plural: 'pods' })).toThrow(/version/);
  });
});
