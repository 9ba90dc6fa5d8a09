import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { customResource, setErrorReporter } from '../../src/index.js';
import { CallbackError } from '../../src/core.js';
import { conversionWebhook, type ConversionWebhook } from '../../src/admission/conversion.js';
import { conversionReview, Website } from './websiteVersions.js';

const signal = new AbortController().signal;
const webhook = conversionWebhook(Website);
const meta = { name: 'home', namespace: 'web', uid: 'u-1', resourceVersion: '42', generation: 3, labels: { app: 'home' }, creationTimestamp: '2026-01-01T00:00:00Z' };
const v1 = { apiVersion: 'example.com/v1', kind: 'Website', metadata: meta, spec: { image: 'nginx:1.25', replicas: 2 }, status: { readyReplicas: 1 } };

interface ReviewBody {
  apiVersion: string;
  kind: string;
  response: { uid: string; convertedObjects: Record<string, unknown>[]; result: { status: string; message?: string } };
}
const bodyOf = (a: Awaited<ReturnType<ConversionWebhook['review']>>): ReviewBody => a.body as ReviewBody;

const reported: Error[] = [];
setErrorReporter((err) => reported.push(err));
afterEach(() => {
  reported.length = 0;
});

describe('conversionWebhook answers a ConversionReview', () => {
  it('serves /convert as a conversion webhook', () => {
    expect([webhook.type, webhook.path]).toEqual(['conversion', '/convert']);
    expect(conversionWebhook(Website, { path: '/convert-websites' }).path).toBe('/convert-websites');
  });

  it('converts a spoke to the hub, echoes the uid and keeps the metadata', async () => {
    const answer = await webhook.review(conversionReview('example.com/v2', [v1], 'the-uid'), signal);
    expect(answer.status).toBe(200);
    expect(answer.failure).toBeUndefined();
    expect(bodyOf(answer)).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'the-uid',
        result: { status: 'Success' },
        convertedObjects: [{ apiVersion: 'example.com/v2', kind: 'Website', metadata: meta, spec: { repository: 'nginx', tag: '1.25', replicas: 2 }, status: { readyReplicas: 1 } }],
      },
    });
  });

  it('converts spoke to spoke through the storage version, several objects in order', async () => {
    const other = { ...v1, metadata: { ...meta, name: 'blog', uid: 'u-2' }, spec: { image: 'registry:5000/blog', replicas: 4 } };
    const answer = await webhook.review(conversionReview('example.com/v3', [v1, other]), signal);
    const converted = bodyOf(answer).response.convertedObjects;
    expect(converted.map((o) => [o['apiVersion'], o['spec']])).toEqual([
      ['example.com/v3', { image: { repository: 'nginx', tag: '1.25' }, size: 2 }],
      ['example.com/v3', { image: { repository: 'registry:5000/blog', tag: '' }, size: 4 }],
    ]);
    expect(converted.map((o) => (o['metadata'] as { name: string }).name)).toEqual(['home', 'blog']);
  });

  it('sets apiVersion to the desired version even when a converter writes another', async () => {
    const Sloppy = customResource({
      group: 'sloppy.example.com',
      kind: 'Thing',
      versions: { v1: { spec: z.object({ a: z.string() }) }, v2: { spec: z.object({ a: z.string() }), storage: true } },
      conversion: {
        v1: {
          toStorage: (o) => ({ ...o, apiVersion: 'wrong/v9' as 'sloppy.example.com/v2' }),
          fromStorage: (o) => ({ ...o, apiVersion: 'sloppy.example.com/v1' }),
        },
      },
    });
    const answer = await conversionWebhook(Sloppy).review(conversionReview('sloppy.example.com/v2', [{ apiVersion: 'sloppy.example.com/v1', kind: 'Thing', metadata: { name: 'a' }, spec: { a: 'x' } }]), signal);
    expect(bodyOf(answer).response.convertedObjects[0]?.['apiVersion']).toBe('sloppy.example.com/v2');
  });

  it('gives an object already in the desired version back as it is', async () => {
    const answer = await webhook.review(conversionReview('example.com/v1', [v1]), signal);
    expect(bodyOf(answer).response.convertedObjects).toEqual([v1]);
  });

  it('does not let a converter that mutates its argument change what the next step or the check sees', async () => {
    const Mutating = customResource({
      group: 'mut.example.com',
      kind: 'Thing',
      versions: { v1: { spec: z.object({ a: z.string() }) }, v2: { spec: z.object({ a: z.string() }), storage: true } },
      conversion: {
        v1: {
          toStorage: (o) => {
            const labels = { ...o.metadata.labels, converted: 'true' };
            (o.metadata as { name?: string }).name = 'renamed';
            return { ...o, apiVersion: 'mut.example.com/v2', metadata: { ...o.metadata, name: 'a', labels } };
          },
          fromStorage: (o) => ({ ...o, apiVersion: 'mut.example.com/v1' }),
        },
      },
    });
    const input = { apiVersion: 'mut.example.com/v1', kind: 'Thing', metadata: { name: 'a' }, spec: { a: 'x' } };
    const answer = await conversionWebhook(Mutating).review(conversionReview('mut.example.com/v2', [input]), signal);
    expect(bodyOf(answer).response.convertedObjects[0]?.['metadata']).toEqual({ name: 'a', labels: { converted: 'true' } });
    expect(input.metadata.name).toBe('a');
  });
});

describe('conversionWebhook refuses', () => {
  it.each([
    ['no JSON', undefined],
    ['an array', []],
    ['an AdmissionReview', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'x' } }],
    ['a v1beta1 ConversionReview', { apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'ConversionReview', request: { uid: 'x', desiredAPIVersion: 'example.com/v2', objects: [] } }],
    ['no request', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }],
    ['no uid', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { desiredAPIVersion: 'example.com/v2', objects: [] } }],
    ['no desiredAPIVersion', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'x', objects: [] } }],
    ['objects that are not an array', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'x', desiredAPIVersion: 'example.com/v2', objects: {} } }],
  ])('a body that is not a ConversionReview (%s) with 400', async (_, body) => {
    const answer = await webhook.review(body, signal);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest', message: expect.any(String) });
  });

  it('a body of many keys with a message that does not list them', async () => {
    const body = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`key${i}`, i]));
    const answer = await webhook.review({ ...body, kind: { nested: body } }, signal);
    expect(answer.status).toBe(400);
    const { message } = answer.body as { message: string };
    expect(message).toBe('expected kind ConversionReview of apiVersion apiextensions.k8s.io/v1 (the CRD asks for conversionReviewVersions [\'v1\']), got a value of type object of none');
  });

  it('an empty objects array with Success and no objects', async () => {
    expect(bodyOf(await webhook.review(conversionReview('example.com/v2', []), signal)).response).toEqual({ uid: '705ab4f5-6393-11e8-b7cc-42010a800002', convertedObjects: [], result: { status: 'Success' } });
  });

  it.each([
    ['a kind it has no converters for', { ...v1, kind: 'Blog' }, 'example.com/v2', /objects\[0\] \(web\/home\): this webhook has no converters for kind "Blog" of "example.com\/v1"; it converts Website of example.com/],
    ['a group it has no converters for', { ...v1, apiVersion: 'other.io/v1' }, 'example.com/v2', /no converters for kind "Website" of "other.io\/v1"/],
    ['a version the definition lacks', { ...v1, apiVersion: 'example.com/v9' }, 'example.com/v2', /Website has no version "v9" \(its versions: v1, v2, v3\)/],
    ['a desired version the definition lacks', v1, 'example.com/v9', /desiredAPIVersion "example.com\/v9" is not a version of Website/],
    ['a desired version of another group', v1, 'other.io/v2', /desiredAPIVersion "other.io\/v2" is not a version of Website/],
    ['an object without apiVersion', { kind: 'Website', spec: {} }, 'example.com/v2', /objects\[0\]: expected an object with an apiVersion and a kind/],
    ['a name with control characters, escaped', { ...v1, kind: 'Blog', metadata: { name: 'a\u001b]0;x\u0007' } }, 'example.com/v2', /objects\[0\] \(a\\x1b\]0;x\\x07\)/],
  ])('%s with Failure naming it', async (_, obj, desired, message) => {
    const answer = await webhook.review(conversionReview(desired, [v1, obj]), signal);
    expect(answer.status).toBe(200);
    const { response } = bodyOf(answer);
    expect(response.result.status).toBe('Failure');
    expect(response.result.message?.replace('objects[1]', 'objects[0]')).toMatch(message);
    expect(response.convertedObjects).toEqual([]);
    expect(answer.failure).toBeUndefined();
  });

  it('a converter that throws: Failure with its message, reported, and failure "threw" on the answer', async () => {
    const Throwing = customResource({
      group: 'throw.example.com',
      kind: 'Thing',
      versions: { v1: { spec: z.object({ a: z.string() }) }, v2: { spec: z.object({ a: z.string() }), storage: true } },
      conversion: {
        v1: {
          toStorage: () => {
            throw new RangeError('no way to say\u001b[2J that');
          },
          fromStorage: (o) => ({ ...o, apiVersion: 'throw.example.com/v1' }),
        },
      },
    });
    const answer = await conversionWebhook(Throwing).review(conversionReview('throw.example.com/v2', [{ apiVersion: 'throw.example.com/v1', kind: 'Thing', metadata: { name: 'a', namespace: 'n' }, spec: { a: 'x' } }]), signal);
    expect(answer.failure).toBe('threw');
    expect(bodyOf(answer).response.result).toEqual({ status: 'Failure', message: 'objects[0] (n/a): Thing v1 toStorage threw: RangeError: no way to say\\x1b[2J that' });
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(CallbackError);
    expect(reported[0]?.message).toContain('Thing v1 toStorage threw converting (n/a)');
  });

  const changing = (change: (metadata: Record<string, unknown>) => unknown) =>
    customResource({
      group: 'meta.example.com',
      kind: 'Thing',
      versions: { v1: { spec: z.object({ a: z.string() }) }, v2: { spec: z.object({ a: z.string() }), storage: true } },
      conversion: {
        v1: {
          toStorage: (o) => ({ ...o, apiVersion: 'meta.example.com/v2', metadata: change({ ...o.metadata }) as typeof o.metadata }),
          fromStorage: (o) => ({ ...o, apiVersion: 'meta.example.com/v1' }),
        },
      },
    });
  const thing = { apiVersion: 'meta.example.com/v1', kind: 'Thing', metadata: { name: 'a', namespace: 'n', uid: 'u', resourceVersion: '7', labels: { a: 'b' } }, spec: { a: 'x' } };

  it.each([
    ['name', (m: Record<string, unknown>) => ({ ...m, name: 'b' }), /changed metadata.name; a converter may change labels and annotations only/],
    ['namespace', (m: Record<string, unknown>) => ({ ...m, namespace: 'm' }), /changed metadata.namespace/],
    ['uid', (m: Record<string, unknown>) => ({ ...m, uid: 'v' }), /changed metadata.uid/],
    ['resourceVersion', (m: Record<string, unknown>) => ({ ...m, resourceVersion: '8' }), /changed metadata.resourceVersion/],
    ['a field it adds', (m: Record<string, unknown>) => ({ ...m, finalizers: ['x'] }), /changed metadata.finalizers/],
    ['the whole metadata', () => undefined, /dropped metadata/],
    ['a label value that is not one', (m: Record<string, unknown>) => ({ ...m, labels: { a: 'not a label' } }), /metadata.labels\["a"\] that is not a valid label value/],
    ['a label key that is not a qualified name', (m: Record<string, unknown>) => ({ ...m, labels: { 'a b': 'c' } }), /metadata.labels with a key that is not a qualified name/],
    ['an annotation that is not a string', (m: Record<string, unknown>) => ({ ...m, annotations: { a: 1 } }), /metadata.annotations\["a"\] that is not a valid string/],
  ])('a converter that changes %s: Failure naming it, reported', async (_, change, message) => {
    const answer = await conversionWebhook(changing(change)).review(conversionReview('meta.example.com/v2', [thing]), signal);
    expect(bodyOf(answer).response.result.status).toBe('Failure');
    expect(bodyOf(answer).response.result.message).toMatch(message);
    expect(bodyOf(answer).response.result.message).toMatch(/^objects\[0\] \(n\/a\): Thing v1 toStorage /);
    expect(reported).toHaveLength(1);
  });

  it('lets a converter change labels and annotations', async () => {
    const answer = await conversionWebhook(changing((m) => ({ ...m, labels: { a: 'c', 'example.com/v': 'v1' }, annotations: { note: 'any text at all' } }))).review(
      conversionReview('meta.example.com/v2', [thing]),
      signal,
    );
    expect(bodyOf(answer).response.result.status).toBe('Success');
    expect(bodyOf(answer).response.convertedObjects[0]?.['metadata']).toEqual({ ...thing.metadata, labels: { a: 'c', 'example.com/v': 'v1' }, annotations: { note: 'any text at all' } });
  });

  it('passes through the labels and annotations it was given, as the API server stored them (annotation keys of any case)', async () => {
    const stored = { ...thing, metadata: { ...thing.metadata, annotations: { 'Example.COM/Owner': 'team-a', 'Upper/Key': 'x' } } };
    const answer = await conversionWebhook(changing((m) => ({ ...m, labels: { ...(m['labels'] as object), added: 'yes' } }))).review(conversionReview('meta.example.com/v2', [stored]), signal);
    expect(bodyOf(answer).response.result).toEqual({ status: 'Success' });
    expect(bodyOf(answer).response.convertedObjects[0]?.['metadata']).toMatchObject({ annotations: { 'Example.COM/Owner': 'team-a', 'Upper/Key': 'x' }, labels: { a: 'b', added: 'yes' } });
    expect(reported).toHaveLength(0);
  });

  it('checks an annotation key it adds lower-cased, as kube-apiserver does, and still refuses one that is no qualified name', async () => {
    const added = await conversionWebhook(changing((m) => ({ ...m, annotations: { 'Example.COM/Converted-From': 'v1' } }))).review(conversionReview('meta.example.com/v2', [thing]), signal);
    expect(bodyOf(added).response.result).toEqual({ status: 'Success' });
    const bad = await conversionWebhook(changing((m) => ({ ...m, annotations: { 'Example.COM/a b': 'v1' } }))).review(conversionReview('meta.example.com/v2', [thing]), signal);
    expect(bodyOf(bad).response.result.message).toMatch(/metadata.annotations with a key that is not a qualified name/);
  });

  it.each([
    ['a Promise', () => Promise.resolve({}), /returned a Promise; converters are synchronous/],
    ['a string', () => 'x', /returned "x", not an object/],
    ['a BigInt', (o: Record<string, unknown>) => ({ ...o, spec: { a: 1n } }), /returned an object that is not JSON/],
    ['another kind', (o: Record<string, unknown>) => ({ ...o, kind: 'Other' }), /changed kind to "Other"/],
  ])('a converter that returns %s: Failure naming it', async (_, convert, message) => {
    const Odd = customResource({
      group: 'odd.example.com',
      kind: 'Thing',
      versions: { v1: { spec: z.object({ a: z.string() }) }, v2: { spec: z.object({ a: z.string() }), storage: true } },
      conversion: { v1: { toStorage: convert as never, fromStorage: convert as never } },
    });
    const answer = await conversionWebhook(Odd).review(conversionReview('odd.example.com/v2', [{ apiVersion: 'odd.example.com/v1', kind: 'Thing', metadata: { name: 'a' }, spec: { a: 'x' } }]), signal);
    expect(bodyOf(answer).response.result.message).toMatch(message);
  });

  it('drops what JSON drops (an undefined field), as the API server will read it', async () => {
    const answer = await conversionWebhook(changing((m) => ({ ...m, labels: undefined }))).review(conversionReview('meta.example.com/v2', [thing]), signal);
    expect(bodyOf(answer).response.convertedObjects[0]?.['metadata']).toEqual({ name: 'a', namespace: 'n', uid: 'u', resourceVersion: '7' });
  });

  it('a body no JSON parser gives (a function inside) with 500, reported, never a rejection', async () => {
    const answer = await webhook.review(conversionReview('example.com/v2', [{ ...v1, spec: { image: 'nginx', replicas: 1, hook: () => 1 } }]), signal);
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError' });
    expect(reported).toHaveLength(1);
  });

  it('a request already aborted: Failure', async () => {
    const controller = new AbortController();
    controller.abort();
    const answer = await webhook.review(conversionReview('example.com/v2', [v1]), controller.signal);
    expect(bodyOf(answer).response.result).toEqual({ status: 'Failure', message: 'objects[0] (web/home): the request was aborted before objects[0] was converted' });
  });

  it.each([
    ['no definition', [], /at least one definition/],
    ['a definition without conversion', [customResource({ group: 'example.com', version: 'v1', kind: 'Plain', spec: z.object({}) })], /definitions\[0\] \(Plain\) has no conversion option/],
    ['something else', [Website, 42], /definitions\[1\] must be a definition made by customResource\(\) with a conversion option, got 42/],
    ['a kind twice', [Website, customResource({ group: 'example.com', kind: 'Website', versions: { a1: { spec: z.object({}), storage: true }, a2: { spec: z.object({}) } }, conversion: { a2: { toStorage: (o) => ({ ...o, apiVersion: 'example.com/a1' }), fromStorage: (o) => ({ ...o, apiVersion: 'example.com/a2' }) } } })], /definitions\[1\] is a second definition of Website in example.com/],
    ['an unknown option', [Website, { paht: '/x' }], /unknown option "paht"/],
    ['a path without a slash', [Website, { path: 'convert' }], /path must start with '\/'.*"convert"/],
    ['a path with a query', [Website, { path: '/convert?x=1' }], /path segment "convert\?x=1" must be a DNS subdomain/],
    ['a path segment kube-apiserver refuses', [Website, { path: '/convert_websites' }], /path segment "convert_websites" must be a DNS subdomain/],
  ])('at construction: %s, with a TypeError', (_, args, message) => {
    expect(() => (conversionWebhook as (...a: unknown[]) => unknown)(...args)).toThrow(TypeError);
    expect(() => (conversionWebhook as (...a: unknown[]) => unknown)(...args)).toThrow(message);
  });

  it('takes two views of one definition as one', async () => {
    const both = conversionWebhook(Website, Website.forVersion('v1'));
    expect(bodyOf(await both.review(conversionReview('example.com/v2', [v1]), signal)).response.result.status).toBe('Success');
  });
});
