import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { conversionWebhook } from '../../src/admission/conversion.js';
import { conversionReview, Website } from './websiteVersions.js';

// Converting up and back is the identity on what both versions hold, for every object: checked through the
// webhook's answers, as the API server would read them.

const webhook = conversionWebhook(Website);
const signal = new AbortController().signal;

const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const metadata = fc.record(
  {
    name: label,
    namespace: label,
    uid: fc.uuid(),
    resourceVersion: fc.integer({ min: 1 }).map(String),
    generation: fc.integer({ min: 1 }),
    labels: fc.dictionary(label, label, { maxKeys: 3 }),
    annotations: fc.dictionary(label, fc.string(), { maxKeys: 3 }),
    finalizers: fc.array(fc.constantFrom('example.com/cleanup', 'kubernetes'), { maxLength: 2 }),
  },
  { requiredKeys: ['name', 'uid'] },
);
const status = fc.option(fc.record({ readyReplicas: fc.integer({ min: 0, max: 50 }) }, { requiredKeys: [] }), { nil: undefined });
const replicas = fc.integer({ min: 0, max: 50 });
const image = fc.oneof(
  fc.string(),
  fc.tuple(fc.constantFrom('nginx', 'registry:5000/app', 'ghcr.io/a/b'), fc.constantFrom('', ':1.25', ':latest', ':')).map(([r, t]) => r + t),
);

const withStatus = <T extends object>(obj: T, s: object | undefined): T => (s === undefined ? obj : { ...obj, status: s });
const v1Object = fc
  .tuple(metadata, image, replicas, status)
  .map(([m, i, r, s]) => withStatus({ apiVersion: 'example.com/v1', kind: 'Website', metadata: m, spec: { image: i, replicas: r } }, s));
const v2Object = fc
  .tuple(metadata, fc.string(), fc.string(), replicas, status)
  .map(([m, repository, tag, r, s]) => withStatus({ apiVersion: 'example.com/v2', kind: 'Website', metadata: m, spec: { repository, tag, replicas: r } }, s));

async function convert(objects: readonly unknown[], desiredAPIVersion: string): Promise<Record<string, unknown>[]> {
  const answer = await webhook.review(conversionReview(desiredAPIVersion, objects), signal);
  const { response } = answer.body as { response: { result: { status: string; message?: string }; convertedObjects: Record<string, unknown>[] } };
  expect(response.result).toEqual({ status: 'Success' });
  expect(response.convertedObjects.map((o) => o['apiVersion'])).toEqual(objects.map(() => desiredAPIVersion));
  return response.convertedObjects;
}

/** What v1, v2 and v3 all hold under the same meaning: metadata, status, and the replica count. */
function shared(obj: Record<string, unknown>): object {
  const spec = obj['spec'] as { replicas?: number; size?: number };
  return { metadata: obj['metadata'], status: obj['status'], replicas: spec.replicas ?? spec.size };
}

describe('conversion up and back', () => {
  it('gives every v1 object back whole, through the storage version and through v3', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(v1Object, { minLength: 1, maxLength: 4 }), async (objects) => {
        expect(await convert(await convert(objects, 'example.com/v2'), 'example.com/v1')).toEqual(objects);
        expect(await convert(await convert(objects, 'example.com/v3'), 'example.com/v1')).toEqual(objects);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps what a v2 object shares with v1 and v3, and gives it back whole from v3', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(v2Object, { minLength: 1, maxLength: 4 }), async (objects) => {
        const viaV1 = await convert(await convert(objects, 'example.com/v1'), 'example.com/v2');
        expect(viaV1.map(shared)).toEqual(objects.map(shared));
        const asV3 = await convert(objects, 'example.com/v3');
        expect(asV3.map(shared)).toEqual(objects.map(shared));
        expect(await convert(asV3, 'example.com/v2')).toEqual(objects);
      }),
      { numRuns: 300 },
    );
  });
});
