import { applyPatch, type Operation } from 'rfc6902';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { admission, customResource, setErrorReporter, type KubeObject } from '../../src/index.js';
import { deployment, responseOf, review } from './reviews.js';

const never = new AbortController().signal;

afterEach(() => setErrorReporter(undefined));

function capture(): Error[] {
  const seen: Error[] = [];
  setErrorReporter((err) => seen.push(err));
  return seen;
}

/** Applies the answer's patch to the object sent, as kube-apiserver does. */
function patched(sent: KubeObject, response: Record<string, any>): unknown {
  const copy = structuredClone(sent);
  if (response.patch === undefined) return copy;
  expect(response.patchType).toBe('JSONPatch');
  const ops = JSON.parse(Buffer.from(response.patch as string, 'base64').toString('utf8')) as Operation[];
  const results = applyPatch(copy, ops);
  expect(results.every((r) => r === null)).toBe(true);
  return copy;
}

const Website = customResource({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  spec: z.object({ image: z.string().optional(), replicas: z.number().int().default(1) }),
});

function website(spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'home', namespace: 'shop', uid: 'w-1' }, spec } as KubeObject;
}
const websiteParts = { kind: { group: 'example.com', version: 'v1', kind: 'Website' }, resource: { group: 'example.com', version: 'v1', resource: 'websites' } };

describe('admission.mutating', () => {
  it('answers the JSON Patch from the object sent to the one returned, and applying it gives the wanted object', async () => {
    const hook = admission.mutating(Website, ({ object }) => ({ ...object, spec: { ...object.spec, image: object.spec.image || 'nginx' } }));
    const sent = website({ replicas: 2 });
    const response = responseOf(await hook.review(review({ ...websiteParts, uid: 'm-1', object: sent }), never));
    expect(response).toMatchObject({ uid: 'm-1', allowed: true, patchType: 'JSONPatch' });
    expect(patched(sent, response)).toEqual(website({ replicas: 2, image: 'nginx' }));
    expect(hook.path).toBe('/mutate-example-com-v1-website');
  });

  it('a handler that overruns under failurePolicy Ignore changes nothing and allows, with a warning (WH-145)', async () => {
    const reported = capture();
    const hook = admission.mutating('apps/v1/deployments', () => new Promise<never>(() => {}), { timeoutSeconds: 1, failurePolicy: 'Ignore' });
    const response = responseOf(await hook.review(review({ object: deployment('web', 1) }), never));
    expect(response).toMatchObject({ allowed: true, warnings: [expect.stringMatching(/the handler overran its deadline; allowed, as its failurePolicy is Ignore$/)] });
    expect(response.patch).toBeUndefined();
    expect(reported).toHaveLength(1);
  });

  it('has no patch when nothing changed', async () => {
    const hook = admission.mutating(Website, ({ object }) => object);
    const response = responseOf(await hook.review(review({ ...websiteParts, object: website({ image: 'a', replicas: 1 }) }), never));
    expect(response).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('a handler that changes the object it was given in place gets the same patch', async () => {
    const hook = admission.mutating('apps/v1/deployments', ({ object }) => {
      object.metadata = { ...object.metadata, labels: { team: 'web' } };
      return object;
    });
    const sent = deployment('web', 3);
    const response = responseOf(await hook.review(review({ object: sent }), never));
    expect(patched(sent, response)).toEqual({ ...sent, metadata: { ...sent.metadata, labels: { team: 'web' } } });
  });

  it('for any change of spec and labels, the patch applied to the object sent gives the wanted object (as JSON)', async () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), json, { maxKeys: 5 }), fc.dictionary(fc.string(), json, { maxKeys: 5 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }), async (before, after, labels) => {
        // A "__proto__" key is patched right (it is an ordinary key to kube-apiserver), but applying it in JavaScript sets a prototype.
        fc.pre(!JSON.stringify([before, after, labels]).includes('"__proto__"'));
        const sent = { ...deployment('web', 1), spec: before } as KubeObject;
        const wanted = { ...sent, metadata: { ...sent.metadata, labels }, spec: after };
        const hook = admission.mutating('apps/v1/deployments', () => wanted as never);
        const response = responseOf(await hook.review(review({ object: sent }), never));
        expect(patched(sent, response)).toEqual(JSON.parse(JSON.stringify(wanted)));
      }),
      { numRuns: 100 },
    );
  });

  it('for any change of lists past the edit-distance bound, the patch applied gives the wanted object', async () => {
    const item = fc.oneof(fc.integer(), fc.record({ n: fc.integer(), tags: fc.array(fc.string(), { maxLength: 3 }) }));
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 65, maxLength: 90 }), fc.array(item, { minLength: 65, maxLength: 90 }), fc.boolean(), async (before, after, sameLength) => {
        const wantedItems = sameLength ? before.map((x, i) => (i % 7 === 0 ? after[i % after.length] : x)) : after;
        const sent = { ...deployment('web', 1), spec: { items: before } } as KubeObject;
        const hook = admission.mutating('apps/v1/deployments', () => ({ ...sent, spec: { items: wantedItems } }) as never);
        const response = responseOf(await hook.review(review({ object: sent }), never));
        expect(patched(sent, response)).toEqual({ ...sent, spec: { items: wantedItems } });
      }),
      { numRuns: 50 },
    );
  });

  it('an object with a long list is diffed in bounded work: one changed item, an item added', async () => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ n: i }));
    const sent = { ...deployment('web', 1), spec: { items } } as KubeObject;
    const changeOne = admission.mutating('apps/v1/deployments', () => ({ ...sent, spec: { items: items.map((x, i) => (i === 5 ? { n: -1 } : x)) } }) as never);
    const one = responseOf(await changeOne.review(review({ object: sent }), never));
    const ops = JSON.parse(Buffer.from(one.patch as string, 'base64').toString('utf8')) as Operation[];
    expect(ops).toEqual([{ op: 'replace', path: '/spec/items/5/n', value: -1 }]);
    const append = admission.mutating('apps/v1/deployments', () => ({ ...sent, spec: { items: [...items, { n: 'new' }] } }) as never);
    const appended = responseOf(await append.review(review({ object: sent }), never));
    expect(patched(sent, appended)).toEqual({ ...sent, spec: { items: [...items, { n: 'new' }] } });
  });

  for (const [field, change] of [
    ['/metadata/name', (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, name: 'other' } })],
    ['/metadata/namespace', (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, namespace: 'kube-system' } })],
    ['/metadata/uid', (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, uid: undefined } })],
    ['/apiVersion', (o: KubeObject) => ({ ...o, apiVersion: 'apps/v1beta1' })],
    ['/kind', (o: KubeObject) => ({ ...o, kind: 'StatefulSet' })],
  ] as const) {
    it(`refuses a patch that changes ${field}: denied with 500, reported, counted as forbiddenPatch`, async () => {
      const reported = capture();
      const hook = admission.mutating('apps/v1/deployments', ({ object }) => change(object as KubeObject) as never);
      const answer = await hook.review(review(), never);
      const response = responseOf(answer);
      expect(response).toMatchObject({ allowed: false, status: { code: 500 } });
      expect(response.status.message).toContain(field);
      expect(response.patch).toBeUndefined();
      expect(answer.failure).toBe('forbiddenPatch');
      expect(reported).toHaveLength(1);
    });
  }

  it('a replaced metadata that keeps the fixed fields is fine', async () => {
    const hook = admission.mutating('apps/v1/deployments', ({ object }) => ({ ...object, metadata: { name: 'web', namespace: 'shop', uid: 'uid-web', labels: { a: 'b' } } }));
    const answer = await hook.review(review(), never);
    expect(responseOf(answer).allowed).toBe(true);
  });

  it('a verdict is answered as such: deny without a patch, allow with warnings and no patch', async () => {
    const denying = admission.mutating('apps/v1/deployments', () => admission.deny('no', { code: 422 }));
    expect(responseOf(await denying.review(review(), never))).toMatchObject({ allowed: false, status: { code: 422, reason: 'Invalid', message: 'no' } });
    const warning = admission.mutating('apps/v1/deployments', () => admission.allow({ warnings: ['w'] }));
    expect(responseOf(await warning.review(review(), never))).toEqual({ uid: expect.any(String), allowed: true, warnings: ['w'] });
  });

  it('on DELETE the object is undefined and the stored one is oldObject; a verdict is answered, a change refused', async () => {
    const seen: unknown[] = [];
    const allowing = admission.mutating('apps/v1/deployments', (ctx) => {
      seen.push([ctx.operation, ctx.object, ctx.oldObject?.metadata?.name]);
      return admission.allow();
    }, { operations: ['DELETE'] });
    expect(responseOf(await allowing.review(review({ operation: 'DELETE' }), never))).toEqual({ uid: expect.any(String), allowed: true });
    expect(seen).toEqual([['DELETE', undefined, 'web']]);
    capture();
    const changing = admission.mutating('apps/v1/deployments', ({ oldObject }) => ({ ...oldObject, spec: {} }) as never, { operations: ['DELETE'] });
    const answer = await changing.review(review({ operation: 'DELETE' }), never);
    expect(responseOf(answer)).toMatchObject({ allowed: false, status: { code: 500 } });
    expect(answer.failure).toBe('forbiddenPatch');
  });

  it('on DELETE an oldObject changed in place and returned is refused as a change, reported', async () => {
    const reported = capture();
    const inPlace = admission.mutating('apps/v1/deployments', ({ oldObject }) => {
      const o = oldObject as unknown as { spec: Record<string, unknown> };
      o.spec['replicas'] = 0;
      return oldObject as never;
    }, { operations: ['DELETE'] });
    const answer = await inPlace.review(review({ operation: 'DELETE' }), never);
    expect(responseOf(answer)).toMatchObject({ allowed: false, status: { code: 500 } });
    expect(answer.failure).toBe('forbiddenPatch');
    expect(reported).toHaveLength(1);
  });

  it('the patch is against the object as sent, even when the handler changes ctx.request in place', async () => {
    const sent = deployment('web', 3);
    const hook = admission.mutating('apps/v1/deployments', ({ object, request }) => {
      (request.object as unknown as { spec: Record<string, unknown> }).spec['replicas'] = 9;
      return { ...object, spec: { ...object.spec, replicas: 9 } } as never;
    });
    const response = responseOf(await hook.review(review({ object: sent }), never));
    expect(patched(sent, response)).toEqual({ ...sent, spec: { ...(sent as unknown as { spec: object }).spec, replicas: 9 } });
  });

  it('a handler that returns nothing, or something that is not JSON, is a failure', async () => {
    capture();
    const nothing = admission.mutating('apps/v1/deployments', (() => undefined) as never);
    expect((await nothing.review(review(), never)).failure).toBe('threw');
    const cyclic = admission.mutating('apps/v1/deployments', ({ object }) => {
      (object as Record<string, unknown>).self = object;
      return object;
    });
    const answer = await cyclic.review(review(), never);
    expect(answer.failure).toBe('threw');
    expect(responseOf(answer).allowed).toBe(false);
  });
});
