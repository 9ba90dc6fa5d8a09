import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { customResource, jsonSchema, kubeSource, objectClient } from '../../src/index.js';
import { isCustomResource } from '../../src/core.js';
import { offlineKubeConfig } from '../helpers/offlineKubeConfig.js';
import { parseResourceRef } from '../../src/sources/resourceRef.js';

const spec = z.object({ image: z.string().min(1), replicas: z.number().int().min(0).max(50).default(1) });
const status = z.object({ readyReplicas: z.number().int().optional() });
const base = { group: 'example.com', version: 'v1', kind: 'Website', spec } as const;

describe('customResource names', () => {
  it.each([
    ['Website', 'websites'],
    ['Class', 'classes'],
    ['Box', 'boxes'],
    ['Match', 'matches'],
    ['Mesh', 'meshes'],
    ['Policy', 'policies'],
    ['Gateway', 'gateways'],
    ['Quiz', 'quizes'],
  ])('derives the plural of %s: %s, the singular and the list kind', (kind, plural) => {
    const def = customResource({ ...base, kind });
    expect([def.plural, def.singular, def.listKind]).toEqual([plural, kind.toLowerCase(), `${kind}List`]);
    expect(def.crd().metadata.name).toBe(`${plural}.example.com`);
  });

  it('takes plural, singular and list kind when given', () => {
    const def = customResource({ ...base, kind: 'Person', plural: 'people', singular: 'human', listKind: 'PersonCollection' });
    expect(def.crd().spec.names).toEqual({ kind: 'Person', listKind: 'PersonCollection', plural: 'people', singular: 'human' });
  });

  it.each([
    [{ group: 'example' }, /group must be a lower-case DNS subdomain with at least one dot.*"example"/],
    [{ group: 'Example.com' }, /group must be/],
    [{ kind: 'website' }, /kind must be UpperCamelCase.*"website"/],
    [{ kind: 'Web-site' }, /kind must be UpperCamelCase/],
    [{ version: 'V1' }, /version must be a DNS-1035 label.*"V1"/],
    [{ version: '1' }, /version must be a DNS-1035 label/],
    [{ plural: 'Websites' }, /plural must be a DNS-1035 label.*"Websites"/],
    [{ shortNames: ['ws', 'WS'] }, /shortNames\[1\] must be a DNS-1035 label/],
    [{ categories: 'all' }, /categories must be an array/],
    [{ scope: 'namespaced' }, /scope must be "Namespaced" or "Cluster", got "namespaced"/],
    [{ listKind: 'Website' }, /listKind must differ from kind/],
    [{ spec: undefined }, /spec is required/],
    [{ spec: 'object' }, /spec must be a schema/],
    [{ spec: z.string() }, /spec must be a schema of an object/],
    [{ specs: spec }, /unknown option "specs"/],
    [{ printerColumns: [{ name: 'Ready', type: 'int', jsonPath: '.status.readyReplicas' }] }, /printerColumns\[0\]\.type must be one of integer, number, string, boolean, date, got "int"/],
    [{ printerColumns: [{ name: 'Ready', type: 'integer', jsonPath: 'status.x' }] }, /printerColumns\[0\]\.jsonPath must be a JSONPath starting with '\.'/],
    [{ printerColumns: [{ name: 'A', type: 'integer', jsonPath: '.a', priority: -1 }] }, /priority must be a non-negative int32/],
    [{ subresources: { status: true } }, /subresources\.status needs a status schema/],
    [{ status, subresources: { scale: { specReplicasPath: '.spec.image', statusReplicasPath: '.status.readyReplicas' } } }, /specReplicasPath ".spec.image" must lead to an integer field of the schema, but it is of type string/],
    [{ status, subresources: { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.spec.replicas' } } }, /statusReplicasPath must be a path under \.status\./],
    [{ selectableFields: [{ jsonPath: '.spec.missing' }] }, /selectableFields\[0\]\.jsonPath ".spec.missing" must lead to a string, integer or boolean field/],
  ])('refuses %j up front, naming the option', (change, message) => {
    expect(() => customResource({ ...base, ...change } as never)).toThrow(message);
  });

  it('refuses a bare valibot schema, saying how to wrap it', () => {
    expect(() => customResource({ ...base, spec: v.object({ a: v.string() }) } as never)).toThrow(/spec is a valibot schema that cannot emit JSON Schema.*toStandardJsonSchema\(schema\) from @valibot\/to-json-schema/);
  });
});

describe('crd()', () => {
  const Website = customResource({
    ...base,
    scope: 'Namespaced',
    shortNames: ['ws'],
    categories: ['all'],
    status,
    printerColumns: [{ name: 'Ready', jsonPath: '.status.readyReplicas', type: 'integer', description: 'ready pods', priority: 0 }],
    subresources: { status: true, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas' } },
    selectableFields: [{ jsonPath: '.spec.image' }],
  });

  it('is the apiextensions.k8s.io/v1 CustomResourceDefinition, deep-frozen, the same object each time', () => {
    const crd = Website.crd();
    expect(crd).toBe(Website.crd());
    expect(Object.isFrozen(crd.spec.versions[0]?.schema.openAPIV3Schema)).toBe(true);
    expect(crd).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'websites.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Website', listKind: 'WebsiteList', plural: 'websites', singular: 'website', shortNames: ['ws'], categories: ['all'] },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  apiVersion: { type: 'string' },
                  kind: { type: 'string' },
                  metadata: { type: 'object' },
                  spec: { type: 'object', properties: { image: { type: 'string', minLength: 1 }, replicas: { type: 'integer', minimum: 0, maximum: 50, default: 1 } }, required: ['image'] },
                  status: { type: 'object', properties: { readyReplicas: { type: 'integer' } } },
                },
                required: ['spec'],
              },
            },
            subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas' } },
            additionalPrinterColumns: [{ name: 'Ready', jsonPath: '.status.readyReplicas', type: 'integer', description: 'ready pods', priority: 0 }],
            selectableFields: [{ jsonPath: '.spec.image' }],
          },
        ],
      },
    });
    expect(customResource({ ...base, scope: 'Cluster' }).crd().spec.scope).toBe('Cluster');
  });

  it('is a resource reference: namespaced from its scope', () => {
    expect(parseResourceRef(Website)).toMatchObject({ group: 'example.com', version: 'v1', plural: 'websites', namespaced: true, name: 'example.com/v1/websites' });
    const Cluster = customResource({ ...base, scope: 'Cluster' });
    expect(parseResourceRef(Cluster).namespaced).toBe(false);
    expect(() => kubeSource(offlineKubeConfig(), Cluster, { namespace: 'default' })).toThrow(/namespace: example\.com\/v1\/websites is cluster-scoped/);
    expect(kubeSource(offlineKubeConfig(), Website, { namespace: 'default' }).resource).toMatchObject({ namespaced: true, plural: 'websites' });
    expect(objectClient(offlineKubeConfig(), Website, { namespace: 'default' }).resource.name).toBe('example.com/v1/websites');
    expect(isCustomResource(Website)).toBe(true);
    expect(isCustomResource({ ...Website })).toBe(false);
    expect(() => Website.Type).toThrow(/Website\.Type is a type, for `typeof Website\.Type`/);
  });
});

describe('validate()', () => {
  const Website = customResource({ ...base, status });
  const ok = { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'home' }, spec: { image: 'nginx' } };

  it('answers the value as the schema reads it, defaults applied', () => {
    expect(Website.validate(ok)).toEqual({ value: { ...ok, spec: { image: 'nginx', replicas: 1 } } });
  });

  it('names every field at fault as kube-apiserver does', () => {
    const result = Website.validate({ apiVersion: 'example.com/v2', kind: 'Site', metadata: { name: 3, labels: { a: 1 } }, spec: { image: '', replicas: 51 }, status: { readyReplicas: 1.5 } });
    expect(result.issues?.map((i) => i.path)).toEqual(['apiVersion', 'kind', 'metadata.name', 'metadata.labels[a]', 'spec.image', 'spec.replicas', 'status.readyReplicas']);
    expect(Website.validate({ ...ok, spec: undefined }).issues).toEqual([{ path: 'spec', message: 'Required value' }]);
    expect(Website.validate('x').issues).toEqual([{ path: '', message: 'expected an object, got string' }]);
  });

  it('writes array indices in brackets', () => {
    const Lists = customResource({ ...base, spec: z.object({ ports: z.array(z.object({ port: z.number().int() })) }) });
    expect(Lists.validate({ ...ok, spec: { ports: [{ port: 1 }, { port: 'x' }] } }).issues?.map((i) => i.path)).toEqual(['spec.ports[1].port']);
  });

  it('uses valibot\'s own validator through toStandardJsonSchema', () => {
    const V = customResource({ ...base, spec: toStandardJsonSchema(v.object({ size: v.pipe(v.number(), v.minValue(1)) })) });
    expect(V.validate({ ...ok, spec: { size: 0 } }).issues?.map((i) => i.path)).toEqual(['spec.size']);
    expect(V.validate({ ...ok, spec: { size: 2 } })).toEqual({ value: { ...ok, spec: { size: 2 } } });
  });

  it('validates a plain JSON Schema by its types, bounds and required fields', () => {
    const J = customResource({ ...base, spec: jsonSchema<{ size: number }>({ type: 'object', properties: { size: { type: 'integer', minimum: 1 } }, required: ['size'] }) });
    expect(J.validate({ ...ok, spec: { size: 0 } }).issues).toEqual([{ path: 'spec.size', message: 'below the minimum 1' }]);
    expect(J.validate({ ...ok, spec: {} }).issues).toEqual([{ path: 'spec', message: 'misses the required field size' }]);
  });

  it('escapes and bounds what the library echoes of the object', () => {
    const E = customResource({ ...base, spec: z.object({ m: z.record(z.string(), z.number()), s: z.string().refine(() => false, { message: 'bad\u001b]0;x\u0007' + 'y'.repeat(5000) }) }) });
    const issues = E.validate({ ...ok, spec: { m: { '\u001b[31mred': 'x' }, s: '' } }).issues ?? [];
    expect(issues.map((i) => i.path)).toEqual(['spec.m.\\x1b[31mred', 'spec.s']);
    expect(issues[1]?.message.startsWith('bad\\x1b]0;x\\x07yyy')).toBe(true);
    expect(issues[1]?.message.length).toBeLessThan(1100);
  });

  it('refuses a schema that validates asynchronously, saying why', () => {
    const A = customResource({ ...base, spec: z.object({ a: z.string().refine(async () => true) }) });
    expect(() => A.validate({ ...ok, spec: { a: 'x' } })).toThrow(/spec schema validates asynchronously.*CEL rule/);
  });
});

describe('several versions', () => {
  const Site = customResource({
    group: 'example.com',
    kind: 'Site',
    versions: {
      v1alpha1: { spec: z.object({ host: z.string() }), served: false, deprecated: true, deprecationWarning: 'use v1' },
      v1: { spec: z.object({ hosts: z.array(z.string()) }), status: z.object({ ok: z.boolean().optional() }), storage: true, subresources: { status: true } },
    },
  });

  it('lists every version in the CRD with its own schema, one of them stored', () => {
    const versions = Site.crd().spec.versions;
    expect(versions.map((v) => [v.name, v.served, v.storage, v.deprecated, v.deprecationWarning])).toEqual([
      ['v1alpha1', false, false, true, 'use v1'],
      ['v1', true, true, undefined, undefined],
    ]);
    expect(Object.keys((versions[0]?.schema.openAPIV3Schema.properties as Record<string, Record<string, Record<string, unknown>>>)['spec']?.['properties'] ?? {})).toEqual(['host']);
    expect(versions[1]?.subresources).toEqual({ status: {} });
  });

  it('reads as its storage version, and each version has a view of its own', () => {
    expect([Site.version, Site.apiVersion, Site.versions]).toEqual(['v1', 'example.com/v1', ['v1alpha1', 'v1']]);
    const old = Site.forVersion('v1alpha1');
    expect([old.version, old.apiVersion, old.crd()]).toEqual(['v1alpha1', 'example.com/v1alpha1', Site.crd()]);
    expect(old.validate({ apiVersion: 'example.com/v1alpha1', kind: 'Site', spec: { host: 'a' } })).toEqual({ value: { apiVersion: 'example.com/v1alpha1', kind: 'Site', spec: { host: 'a' } } });
    expect(Site.validate({ apiVersion: 'example.com/v1alpha1', kind: 'Site', spec: { host: 'a' } }).issues?.map((i) => i.path)).toEqual(['apiVersion', 'spec.hosts']);
    expect(() => Site.forVersion('v2' as never)).toThrow(/no version "v2"; the versions are v1alpha1, v1/);
  });

  it('needs exactly one storage version', () => {
    expect(() => customResource({ group: 'example.com', kind: 'Site', versions: { v1: { spec }, v2: { spec } } })).toThrow(/exactly one version must say storage: true, got none/);
    expect(() => customResource({ group: 'example.com', kind: 'Site', versions: { v1: { spec, storage: true }, v2: { spec, storage: true } } })).toThrow(/exactly one version must say storage: true, got v1, v2/);
    expect(() => customResource({ group: 'example.com', kind: 'Site', versions: { v1: { spec, storage: true, deprecationWarning: 'x' } } })).toThrow(/versions\.v1: deprecationWarning must be .* on a version with deprecated: true/);
    expect(() => customResource({ group: 'example.com', kind: 'Site', versions: { V1: { spec, storage: true } } })).toThrow(/versions key "V1" must be a DNS-1035 label/);
  });
});
