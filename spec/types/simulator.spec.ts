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

describe('startApiServer({ users, authorize })', () => {
  it('takes users with a token and a username, and a decision function', () => {
    expectTypeOf<{ token: 'a'; users: [{ token: 'b'; username: 'u'; groups: ['g'] }]; authorize: () => true }>().toMatchTypeOf<ApiServerOptions>();
    // @ts-expect-error a user needs a username
    const nameless: ApiServerOptions = { token: 'a', users: [{ token: 'b' }] };
    // @ts-expect-error groups are a list
    const group: ApiServerOptions = { token: 'a', users: [{ token: 'b', username: 'u', groups: 'admins' }] };
    // @ts-expect-error a decision is a boolean or { allowed }
    const yes: ApiServerOptions = { authorize: () => 'yes' };
    // @ts-expect-error a decision needs allowed
    const reasonOnly: ApiServerOptions = { authorize: () => ({ reason: 'r' }) };
    void nameless;
    void group;
    void yes;
    void reasonOnly;
  });
});
