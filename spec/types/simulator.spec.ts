import { describe, expectTypeOf, it } from 'vitest';
import type { ApiServerOptions } from '../../src/testing/index.js';

// What the simulator's crds option accepts at compile time.

describe('startApiServer({ crds })', () => {
  it('takes CRD objects, nothing else', () => {
    expectTypeOf<{ crds: [{ apiVersion: 'apiextensions.k8s.io/v1'; kind: 'CustomResourceDefinition' }] }>().toMatchTypeOf<ApiServerOptions>();
    // @ts-expect-error a file name is not a CRD: read the file first (or use `rxkube simulator --crd`)
    const path: ApiServerOptions = { crds: 'website.yaml' };
    // @ts-expect-error a list of names is not a list of CRDs
    const names: ApiServerOptions = { crds: ['websites.example.com'] };
    void path;
    void names;
  });
});
