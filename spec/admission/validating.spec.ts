import { afterEach, describe, expect, it, vi } from 'vitest';
import type { V1Deployment } from '@kubernetes/client-node';
import { admission, setErrorReporter, type AdmissionRequest, type KubeObject } from '../../src/index.js';
import { AdmissionWebhookError } from '../../src/core.js';
import { deployment, deploymentKind, responseOf, review } from './reviews.js';

const never = new AbortController().signal;

function capture(): Error[] {
  const seen: Error[] = [];
  setErrorReporter((err) => seen.push(err));
  return seen;
}

afterEach(() => {
  setErrorReporter(undefined);
  vi.useRealTimers();
});

const atMostTen = admission.validating('apps/v1/deployments', ({ object, userInfo }) =>
  (object.spec?.replicas ?? 1) > 10 && !userInfo.groups?.includes('admins')
    ? admission.deny('spec.replicas: at most 10 for non-admins', { field: 'spec.replicas' })
    : admission.allow({ warnings: ['checked'] }),
);

describe('admission.validating', () => {
  it('allows, echoing the request uid and the warnings', async () => {
    const answer = await atMostTen.review(review({ uid: 'u-1' }), never);
    expect(answer.status).toBe(200);
    expect(answer.failure).toBeUndefined();
    expect(responseOf(answer)).toEqual({ uid: 'u-1', allowed: true, warnings: ['checked'] });
  });

  it('denies with the message, the field as a cause, code 403 and reason Forbidden', async () => {
    const answer = await atMostTen.review(review({ uid: 'u-2', object: deployment('web', 11) }), never);
    expect(responseOf(answer)).toEqual({
      uid: 'u-2',
      allowed: false,
      status: {
        status: 'Failure',
        code: 403,
        reason: 'Forbidden',
        message: 'spec.replicas: at most 10 for non-admins',
        details: { causes: [{ field: 'spec.replicas', message: 'spec.replicas: at most 10 for non-admins', reason: 'FieldValueInvalid' }] },
      },
    });
    expect(answer.failure).toBeUndefined();
  });

  it('gives the handler the request typed: operation, both objects, user, dry run, names, uid', async () => {
    const seen: unknown[] = [];
    const hook = admission.validating(
      'apps/v1/deployments',
      (ctx) => {
        seen.push({ ...ctx, signal: ctx.signal instanceof AbortSignal, request: typeof ctx.request });
        return admission.allow();
      },
      { operations: ['UPDATE'] },
    );
    await hook.review(review({ uid: 'u-3', operation: 'UPDATE', object: deployment('web', 4), dryRun: true, userInfo: { username: 'bob', groups: ['admins'] } }), never);
    expect(seen).toEqual([
      {
        operation: 'UPDATE',
        object: deployment('web', 4),
        oldObject: deployment('web', 3),
        userInfo: { username: 'bob', groups: ['admins'] },
        dryRun: true,
        namespace: 'shop',
        name: 'web',
        uid: 'u-3',
        kind: deploymentKind,
        resource: { group: 'apps', version: 'v1', resource: 'deployments' },
        options: { apiVersion: 'meta.k8s.io/v1', kind: 'UpdateOptions' },
        request: 'object',
        signal: true,
      },
    ]);
  });

  it('a handler that throws denies with code 500 naming the webhook, and is reported without the object', async () => {
    const reported = capture();
    const hook = admission.validating('apps/v1/deployments', () => {
      throw new Error('database \u001b[31mdown');
    });
    const answer = await hook.review(review({ uid: 'u-4', object: deployment('secret-name', 1) }), never);
    const response = responseOf(answer);
    expect(response).toMatchObject({ uid: 'u-4', allowed: false, status: { code: 500, reason: 'InternalError' } });
    expect(response.status.message).toBe('the handler failed: Error: database \\x1b[31mdown');
    expect(answer.failure).toBe('threw');
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(AdmissionWebhookError);
    expect(reported[0]).toMatchObject({ webhook: 'vdeployment.apps.k8s.io', failure: 'threw' });
    expect(reported[0]?.message).not.toContain('\u001b');
    expect(reported[0]?.message).not.toContain('nginx');
  });

  it('a handler that rejects denies the same way', async () => {
    const reported = capture();
    const hook = admission.validating('apps/v1/deployments', async () => Promise.reject(new TypeError('no')));
    const answer = await hook.review(review(), never);
    expect(responseOf(answer)).toMatchObject({ allowed: false, status: { code: 500, message: 'the handler failed: TypeError: no' } });
    expect(answer.failure).toBe('threw');
    expect(reported).toHaveLength(1);
  });

  it('a handler that returns something other than a verdict is a failure, not an allow', async () => {
    capture();
    const hook = admission.validating('apps/v1/deployments', (() => ({ allowed: true })) as never);
    const answer = await hook.review(review(), never);
    expect(responseOf(answer)).toMatchObject({ allowed: false, status: { code: 500 } });
    expect(answer.failure).toBe('threw');
  });

  it('a handler that overruns its deadline denies before the API server gives up, and its signal aborts', async () => {
    vi.useFakeTimers();
    const reported = capture();
    let signal: AbortSignal | undefined;
    const hook = admission.validating('apps/v1/deployments', (ctx) => {
      signal = ctx.signal;
      return new Promise(() => {});
    }, { timeoutSeconds: 4 });
    const pending = hook.review(review({ uid: 'u-5' }), never);
    await vi.advanceTimersByTimeAsync(3_000 - 1);
    expect(signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const answer = await pending;
    expect(signal?.aborted).toBe(true);
    expect(responseOf(answer)).toMatchObject({ uid: 'u-5', allowed: false, status: { code: 500, message: 'the handler overran its deadline' } });
    expect(answer.failure).toBe('timeout');
    expect(reported.map((e) => (e as AdmissionWebhookError).failure)).toEqual(['timeout']);
  });

  it('a handler that overruns under failurePolicy Ignore is allowed with a warning, as kube-apiserver would pass over a call that timed out', async () => {
    vi.useFakeTimers();
    const reported = capture();
    const hook = admission.validating('apps/v1/deployments', () => new Promise(() => {}), { timeoutSeconds: 4, failurePolicy: 'Ignore' });
    const pending = hook.review(review({ uid: 'u-6' }), never);
    await vi.advanceTimersByTimeAsync(3_000);
    const answer = await pending;
    expect(responseOf(answer)).toEqual({
      uid: 'u-6',
      allowed: true,
      warnings: ['admission webhook vdeployment.apps.k8s.io: the handler overran its deadline; allowed, as its failurePolicy is Ignore'],
    });
    expect(answer.failure).toBe('timeout');
    expect(reported.map((e) => (e as AdmissionWebhookError).failure)).toEqual(['timeout']);
    // A handler that throws still denies: it answered, and controller-runtime answers its error as a denial too.
    const throwing = admission.validating('apps/v1/deployments', () => Promise.reject(new Error('no')), { failurePolicy: 'Ignore' });
    expect(responseOf(await throwing.review(review(), never))).toMatchObject({ allowed: false, status: { code: 500 } });
  });

  it('when the client leaves, the handler signal aborts and nothing is reported', async () => {
    const reported = capture();
    const client = new AbortController();
    let signal: AbortSignal | undefined;
    const hook = admission.validating('apps/v1/deployments', (ctx) => {
      signal = ctx.signal;
      client.abort();
      return new Promise(() => {});
    });
    const answer = await hook.review(review(), client.signal);
    expect(signal?.aborted).toBe(true);
    expect(responseOf(answer).allowed).toBe(false);
    expect(answer.failure).toBeUndefined();
    expect(reported).toEqual([]);
  });

  it("when the server's own answer deadline aborts the signal (a TimeoutError), it is an overrun: reported and counted", async () => {
    const reported = capture();
    const server = new AbortController();
    const hook = admission.validating('apps/v1/deployments', () => {
      server.abort(new DOMException('no answer within 10000 ms', 'TimeoutError'));
      return new Promise(() => {});
    });
    const answer = await hook.review(review(), server.signal);
    expect(answer.failure).toBe('timeout');
    expect(responseOf(answer)).toMatchObject({ allowed: false, status: { code: 500, message: 'the handler overran its deadline' } });
    expect(reported.map((e) => (e as AdmissionWebhookError).failure)).toEqual(['timeout']);
  });

  it('bounds and escapes warnings as kube-apiserver carries them', async () => {
    const hook = admission.validating('apps/v1/deployments', () => admission.allow({ warnings: [...Array.from({ length: 40 }, (_, i) => `w${i}`), 'x'.repeat(1000), '\u001b]0;t\u0007'] }));
    const warnings = responseOf(await hook.review(review(), never)).warnings as string[];
    expect(warnings).toHaveLength(32);
    const long = admission.allow({ warnings: ['x'.repeat(1000), 'a\u001bb'] }).warnings;
    expect(long[0]).toHaveLength(256);
    expect(long[1]).toBe('a\\x1bb');
  });
});

describe('a body that is not an AdmissionReview gets 400', () => {
  const cases: [string, unknown][] = [
    ['not JSON', undefined],
    ['an array', []],
    ['wrong apiVersion', { ...(review() as object), apiVersion: 'admission.k8s.io/v1beta1' }],
    ['wrong kind', { ...(review() as object), kind: 'ConversionReview' }],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }],
    ['no uid', review({ uid: '' })],
    ['an unknown operation', JSON.parse(JSON.stringify(review()).replace('"CREATE"', '"PATCH"'))],
    ['CREATE without object', review({ object: null })],
    ['UPDATE without oldObject', review({ operation: 'UPDATE', oldObject: null })],
    ['a kind.group that is not a string', review({ kind: { group: { toString: 1 }, version: 'v1', kind: 'Deployment' } as never })],
    ['no resource', JSON.parse(JSON.stringify(review()).replace(/"resource":\{[^}]*\}/, '"resource":"deployments"'))],
    ['a userInfo.username that is not a string', review({ userInfo: { username: ['alice'] } as never })],
    ['userInfo.groups that is a string, not a list', review({ userInfo: { username: 'alice', groups: 'admins-x' } as never })],
    ['userInfo.groups holding a non-string', review({ userInfo: { username: 'alice', groups: [['admins']] } as never })],
    ['userInfo.extra that is not lists of strings', review({ userInfo: { username: 'alice', extra: { scopes: 'all' } } as never })],
  ];
  for (const [label, body] of cases) {
    it(label, async () => {
      const answer = await atMostTen.review(body, never);
      expect(answer.status).toBe(400);
      expect(answer.failure).toBe('badRequest');
      expect(answer.body).toMatch(/^not an admission\.k8s\.io\/v1 AdmissionReview: /);
    });
  }

  it('a body whose reading throws is a 400 too: review never rejects', async () => {
    const hostile = new Proxy({}, { get: () => { throw new Error('boom'); } });
    const answer = await atMostTen.review(hostile, never);
    expect(answer).toEqual({ status: 400, body: 'not an admission.k8s.io/v1 AdmissionReview: the body is not plain JSON', failure: 'badRequest' });
  });

  it('reviewRequest takes a typed request, as review does once the body is read', async () => {
    const request = (review({ uid: 'typed', object: deployment('web', 12) }) as { request: AdmissionRequest<V1Deployment> }).request;
    const answer = await atMostTen.reviewRequest(request, never);
    expect(responseOf(answer)).toMatchObject({ uid: 'typed', allowed: false, status: { code: 403 } });
    const broken = await atMostTen.reviewRequest({ ...request, kind: undefined } as never, never);
    expect(broken).toMatchObject({ status: 400, failure: 'badRequest' });
  });

  it("a step of rxkube's own that fails (copying a too-deep object) is reported as internal, not as the handler's failure", async () => {
    const reported = capture();
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 200_000; i += 1) deep = { d: deep };
    const sent = { ...deployment('web', 1), spec: deep } as KubeObject;
    const handler = vi.fn((ctx: { object: unknown }) => ctx.object as never);
    const hook = admission.mutating('apps/v1/deployments', handler);
    const body = review() as { request: Record<string, unknown> };
    const answer = await hook.review({ ...body, request: { ...body.request, object: sent } }, never);
    expect(handler).not.toHaveBeenCalled();
    expect(answer.failure).toBe('internal');
    expect(responseOf(answer)).toMatchObject({ allowed: false, status: { code: 500, message: expect.stringMatching(/^rxkube failed copying the object for the handler: RangeError/) } });
    expect(reported.map((e) => [e.name, (e as AdmissionWebhookError).failure])).toEqual([['AdmissionWebhookError', 'internal']]);
    expect(reported[0]?.message).not.toMatch(/the handler failed/);
  });

  it('a review for another kind is denied with 400 in the review, not handed to the handler', async () => {
    const handler = vi.fn(() => admission.allow());
    const hook = admission.validating('apps/v1/deployments', handler);
    const answer = await hook.review(review({ kind: { group: '', version: 'v1', kind: 'Pod' } }), never);
    expect(responseOf(answer)).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(answer.failure).toBe('badRequest');
    expect(handler).not.toHaveBeenCalled();
  });
});
