import { afterEach, describe, expect, it } from 'vitest';
import { AuthenticationV1Api, AuthorizationV1Api } from '@kubernetes/client-node';
import { startApiServer, type AccessAttributes, type ApiServer } from '../../../src/testing/index.js';

let server: ApiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function post(s: ApiServer, path: string, body: unknown, token = 'admin'): Promise<{ code: number; body: Record<string, any> }> {
  const res = await fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { code: res.status, body: (await res.json()) as Record<string, any> };
}

const TR = '/apis/authentication.k8s.io/v1/tokenreviews';
const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const review = (token: string, audiences?: string[]) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(audiences ? { audiences } : {}) } });
const sar = (spec: object) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec });

describe('TokenReview', () => {
  it('answers who a token is, with the API audiences or those asked, and an empty user for an unknown token', async () => {
    server = await startApiServer({ token: 'admin', users: [{ token: 'prom', username: 'system:serviceaccount:monitoring:prometheus', groups: ['system:serviceaccounts'], uid: 'u-1' }] });
    const known = await post(server, TR, review('prom'));
    expect(known.code).toBe(201);
    expect(known.body).toMatchObject({ kind: 'TokenReview', apiVersion: 'authentication.k8s.io/v1' });
    expect(known.body['status']).toEqual({
      authenticated: true,
      user: { username: 'system:serviceaccount:monitoring:prometheus', uid: 'u-1', groups: ['system:serviceaccounts', 'system:authenticated'] },
      audiences: ['https://kubernetes.default.svc.cluster.local'],
    });
    expect((await post(server, TR, review('prom', ['metrics']))).body['status'].audiences).toEqual(['metrics']);
    expect((await post(server, TR, review('admin'))).body['status'].user).toEqual({ username: 'system:admin', groups: ['system:masters', 'system:authenticated'] });
    expect((await post(server, TR, review('nobody'))).body['status']).toEqual({ user: {} });
  });

  it('lets a user of the users option make requests, and refuses a token nobody has with 401', async () => {
    server = await startApiServer({ token: 'admin', users: [{ token: 'prom', username: 'p' }] });
    expect((await fetch(`${server.url}/api/v1/namespaces/default/pods`, { headers: { authorization: 'Bearer prom' } })).status).toBe(200);
    expect((await post(server, TR, review('prom'), 'nobody')).code).toBe(401);
    // A user's token cannot become the admin's.
    expect(() => server?.acceptToken('prom')).toThrow(/a user's of the users option/);
    server.revokeToken('admin');
    expect((await post(server, TR, review('admin'), 'prom')).body['status']).toEqual({ user: {} });
  });

  it('refuses a review without a token (400) and a body of another kind (400)', async () => {
    server = await startApiServer({ token: 'admin' });
    const empty = await post(server, TR, review(''));
    expect(empty.code).toBe(400);
    expect(empty.body['message']).toBe('token is required for TokenReview in authentication');
    const other = await post(server, TR, { kind: 'Pod', apiVersion: 'v1' });
    expect(other.code).toBe(400);
    expect(other.body['message']).toBe('the API version in the data (v1) does not match the expected API version (authentication.k8s.io/v1)');
    // Without kind and apiVersion the body is taken as the URL's kind, as kube-apiserver defaults them.
    expect((await post(server, TR, { spec: { token: 'admin' } })).body['status'].authenticated).toBe(true);
    expect((await fetch(`${server.url}${TR}`, { headers: { authorization: 'Bearer admin' } })).status).toBe(405);
  });

  it('checks the users option up front', async () => {
    await expect(startApiServer({ users: [{ token: 'a', username: 'x' }] })).rejects.toThrow(/users needs the token option/);
    await expect(startApiServer({ token: 't', users: [{ token: 't', username: 'x' }] })).rejects.toThrow(/users\[0\]\.token/);
    await expect(startApiServer({ token: 't', users: [{ token: 'u', username: '' }] })).rejects.toThrow(/users\[0\]\.username/);
    // @ts-expect-error a user needs a username
    await expect(startApiServer({ token: 't', users: [{ token: 'u' }] })).rejects.toThrow(TypeError);
  });
});

describe('SubjectAccessReview', () => {
  it('asks the authorize option and answers allowed, denied and reason as kube-apiserver shapes them', async () => {
    const seen: AccessAttributes[] = [];
    server = await startApiServer({
      token: 'admin',
      authorize: (a) => {
        seen.push(a);
        if (a.nonResourceAttributes?.path === '/metrics' && a.nonResourceAttributes.verb === 'get') return a.user === 'reader';
        return a.resourceAttributes?.resource === 'secrets' ? { allowed: false, denied: true, reason: 'no secrets' } : { allowed: true, reason: 'ok' };
      },
    });
    const metrics = (user: string) => post(server as ApiServer, SAR, sar({ user, groups: ['g'], nonResourceAttributes: { path: '/metrics', verb: 'get' } }));
    const allowed = await metrics('reader');
    expect(allowed.code).toBe(201);
    expect(allowed.body['status']).toEqual({ allowed: true });
    expect((await metrics('other')).body['status']).toEqual({ allowed: false });
    expect((await post(server, SAR, sar({ user: 'x', resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'ns' } }))).body['status']).toEqual({ allowed: false, denied: true, reason: 'no secrets' });
    expect((await post(server, SAR, sar({ user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } }))).body['status']).toEqual({ allowed: true, reason: 'ok' });
    expect(seen[0]).toEqual({ user: 'reader', groups: ['g'], nonResourceAttributes: { path: '/metrics', verb: 'get' } });
    expect(seen[2]?.resourceAttributes).toEqual({ verb: 'get', resource: 'secrets', namespace: 'ns' });
  });

  it('allows system:masters and nobody else without an authorize option; an authorizer that throws is an evaluationError', async () => {
    server = await startApiServer();
    const attrs = { nonResourceAttributes: { path: '/metrics', verb: 'get' } };
    expect((await post(server, SAR, sar({ user: 'a', groups: ['system:masters'], ...attrs }))).body['status']).toEqual({ allowed: true });
    expect((await post(server, SAR, sar({ user: 'a', ...attrs }))).body['status']).toEqual({ allowed: false });
    await server.close();
    server = await startApiServer({
      authorize: () => {
        throw new Error('broken\u0007');
      },
    });
    expect((await post(server, SAR, sar({ user: 'a', ...attrs }))).body['status']).toEqual({ allowed: false, evaluationError: 'broken\\x07' });
  });

  it('refuses a malformed spec with 422 in kube-apiserver words', async () => {
    server = await startApiServer();
    const none = await post(server, SAR, sar({ user: 'a' }));
    expect(none.code).toBe(422);
    expect(none.body['message']).toBe('SubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified');
    const both = await post(server, SAR, sar({ resourceAttributes: {}, nonResourceAttributes: {} }));
    expect(both.code).toBe(422);
    expect(both.body['details'].causes.map((c: { field: string }) => c.field)).toEqual(['spec.nonResourceAttributes', 'spec.user']);
    expect((await post(server, SAR, 'not an object')).code).toBe(400);
  });
});

describe('client-node against the reviews', () => {
  it('creates a TokenReview and a SubjectAccessReview through the generated clients', async () => {
    server = await startApiServer({ token: 'admin', users: [{ token: 'prom', username: 'prometheus' }], authorize: (a) => a.user === 'prometheus' });
    const kc = server.kubeConfig();
    const tr = await kc.makeApiClient(AuthenticationV1Api).createTokenReview({ body: { spec: { token: 'prom' } } });
    expect(tr.status?.authenticated).toBe(true);
    expect(tr.status?.user?.username).toBe('prometheus');
    const sar = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({ body: { spec: { user: 'prometheus', nonResourceAttributes: { path: '/metrics', verb: 'get' } } } });
    expect(sar.status?.allowed).toBe(true);
  });
});
