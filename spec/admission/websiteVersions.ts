import { z } from 'zod';
import { customResource } from '../../src/index.js';

// A Website of three versions, as an operator's API grows: v1 has one image string, v2 (storage) splits it
// into repository and tag, v3 nests them and renames replicas to size.

const status = z.object({ readyReplicas: z.number().int().optional() });

/**
 * `nginx:1.25` → nginx, 1.25; `registry:5000/app` → registry:5000/app, '' (a colon before the last slash is
 * a port); `nginx:` → nginx:, '' (an empty tag would not come back).
 */
export function splitImage(image: string): { repository: string; tag: string } {
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') && colon < image.length - 1 ? { repository: image.slice(0, colon), tag: image.slice(colon + 1) } : { repository: image, tag: '' };
}

export function joinImage(repository: string, tag: string): string {
  return tag === '' ? repository : `${repository}:${tag}`;
}

export const Website = customResource({
  group: 'example.com',
  kind: 'Website',
  versions: {
    v1: { spec: z.object({ image: z.string(), replicas: z.number().int().default(1) }), status },
    v2: { spec: z.object({ repository: z.string(), tag: z.string(), replicas: z.number().int() }), status, storage: true },
    v3: { spec: z.object({ image: z.object({ repository: z.string(), tag: z.string() }), size: z.number().int() }), status },
  },
  conversion: {
    v1: {
      toStorage: ({ metadata, spec, status }) => ({ apiVersion: 'example.com/v2', kind: 'Website', metadata, spec: { ...splitImage(spec.image), replicas: spec.replicas }, ...(status ? { status } : {}) }),
      fromStorage: ({ metadata, spec, status }) => ({ apiVersion: 'example.com/v1', kind: 'Website', metadata, spec: { image: joinImage(spec.repository, spec.tag), replicas: spec.replicas }, ...(status ? { status } : {}) }),
    },
    v3: {
      toStorage: ({ metadata, spec, status }) => ({ apiVersion: 'example.com/v2', kind: 'Website', metadata, spec: { ...spec.image, replicas: spec.size }, ...(status ? { status } : {}) }),
      fromStorage: ({ metadata, spec, status }) => ({
        apiVersion: 'example.com/v3',
        kind: 'Website',
        metadata,
        spec: { image: { repository: spec.repository, tag: spec.tag }, size: spec.replicas },
        ...(status ? { status } : {}),
      }),
    },
  },
});

/** A ConversionReview request as kube-apiserver sends it. */
export function conversionReview(desiredAPIVersion: string, objects: readonly unknown[], uid = '705ab4f5-6393-11e8-b7cc-42010a800002'): object {
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid, desiredAPIVersion, objects } };
}
