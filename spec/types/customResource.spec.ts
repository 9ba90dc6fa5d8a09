import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { conditions as zodConditions } from 'rxkube/zod';
import { customResource, setCondition, type Condition, type ObjectOf, informer, InformerFactory, jsonSchema, kubeSource, objectClient, type Informer, type KubeSource, type ObjectClient } from '../../src/index.js';
import type { ObjectMeta } from '../../src/store/types.js';
import { offlineKubeConfig } from '../helpers/offlineKubeConfig.js';

// Checked by `tsc`: each @ts-expect-error must be an error.
const kc = offlineKubeConfig();

const Website = customResource({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  spec: z.object({ image: z.string().min(1), replicas: z.number().int().default(1) }),
  status: z.object({ readyReplicas: z.number().int().optional() }),
});
type Website = typeof Website.Type;

describe('a definition types its objects', () => {
  it('has literal apiVersion and kind, metadata, the spec of the output type and an optional status', () => {
    expectTypeOf<Website['apiVersion']>().toEqualTypeOf<'example.com/v1'>();
    expectTypeOf<Website['kind']>().toEqualTypeOf<'Website'>();
    expectTypeOf<Website['metadata']>().toEqualTypeOf<ObjectMeta>();
    // Output type: a field with a default is always there on objects read from the server.
    expectTypeOf<Website['spec']>().toEqualTypeOf<{ image: string; replicas: number }>();
    expectTypeOf<Website['status']>().toEqualTypeOf<{ readyReplicas?: number | undefined } | undefined>();
  });

  it('has no status when the definition has none', () => {
    const Plain = customResource({ group: 'example.com', version: 'v1', kind: 'Plain', spec: z.object({ a: z.string() }) });
    type Plain = typeof Plain.Type;
    expectTypeOf<keyof Plain>().toEqualTypeOf<'apiVersion' | 'kind' | 'metadata' | 'spec'>();
  });

  it('reads valibot through toStandardJsonSchema, plain JSON Schema with a static type, and jsonSchema<T>()', () => {
    const V = customResource({ group: 'example.com', version: 'v2', kind: 'Thing', spec: toStandardJsonSchema(v.object({ size: v.optional(v.number(), 3) })) });
    expectTypeOf<(typeof V.Type)['spec']>().toEqualTypeOf<{ size: number }>();
    expectTypeOf<(typeof V.Type)['apiVersion']>().toEqualTypeOf<'example.com/v2'>();
    const J = customResource({ group: 'example.com', version: 'v1', kind: 'Json', spec: jsonSchema<{ a: string }>({ type: 'object' }) });
    expectTypeOf<(typeof J.Type)['spec']>().toEqualTypeOf<{ a: string }>();
    const schema = { type: 'object', properties: {} } as { type: 'object'; properties: object; static: { b: number } };
    const T = customResource({ group: 'example.com', version: 'v1', kind: 'Box', spec: schema });
    expectTypeOf<(typeof T.Type)['spec']>().toEqualTypeOf<{ b: number }>();
  });

  it('refuses a bare valibot schema, which cannot emit JSON Schema', () => {
    const mistakes = (): void => {
      // @ts-expect-error wrap it with toStandardJsonSchema first
      customResource({ group: 'example.com', version: 'v1', kind: 'Bare', spec: v.object({ a: v.string() }) });
      // @ts-expect-error in a version of several too
      customResource({ group: 'example.com', kind: 'Bare', versions: { v1: { spec: v.object({ a: v.string() }), storage: true } } });
    };
    expectTypeOf(mistakes).toBeFunction();
  });

  it('gives sources, clients and informers the type with no type argument', () => {
    expectTypeOf(kubeSource(kc, Website)).toEqualTypeOf<KubeSource<Website>>();
    expectTypeOf(informer(kubeSource(kc, Website))).toEqualTypeOf<Informer<Website>>();
    expectTypeOf(objectClient(kc, Website)).toEqualTypeOf<ObjectClient<Website>>();
    expectTypeOf(new InformerFactory(kc).informerFor(Website)).toEqualTypeOf<Informer<Website>>();
    expectTypeOf<ObjectOf<typeof Website>>().toEqualTypeOf<Website>();
  });

  it('checks every field of an apply configuration', () => {
    const client = objectClient(kc, Website, { namespace: 'default' });
    const mistakes = (): void => {
      // @ts-expect-error a misspelt field of the spec
      void client.apply({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'a' }, spec: { imgae: 'nginx' } });
      // @ts-expect-error a field of the wrong type
      void client.apply({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'a' }, spec: { replicas: '3' } });
      // @ts-expect-error a field the status does not have
      void client.applyStatus({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'a' }, status: { ready: 1 } });
    };
    expectTypeOf(mistakes).toBeFunction();
  });

  it('types every version of a multi-version definition, the storage version by default', () => {
    const Multi = customResource({
      group: 'example.com',
      kind: 'Site',
      versions: {
        v1: { spec: z.object({ host: z.string() }), served: true },
        v2: { spec: z.object({ hosts: z.array(z.string()) }), storage: true },
      },
    });
    expectTypeOf<(typeof Multi.Type)['spec']>().toEqualTypeOf<{ hosts: string[] }>();
    expectTypeOf<(typeof Multi.Type)['apiVersion']>().toEqualTypeOf<'example.com/v2'>();
    const v1 = Multi.forVersion('v1');
    expectTypeOf<(typeof v1.Type)['spec']>().toEqualTypeOf<{ host: string }>();
    expectTypeOf(kubeSource(kc, v1)).toEqualTypeOf<KubeSource<typeof v1.Type>>();
    const mistakes = (): void => {
      // @ts-expect-error no such version
      Multi.forVersion('v3');
    };
    expectTypeOf(mistakes).toBeFunction();
  });

  it('takes conditions from rxkube/zod into the type, and setCondition reads and writes them', () => {
    const Site = customResource({ group: 'example.com', version: 'v1', kind: 'Site', spec: z.object({}), status: z.object({ conditions: zodConditions().optional() }) });
    type Site = typeof Site.Type;
    expectTypeOf<NonNullable<NonNullable<Site['status']>['conditions']>[number]['status']>().toEqualTypeOf<'True' | 'False' | 'Unknown'>();
    const write = (site: Site): void => {
      const next = setCondition(site.status?.conditions, { type: 'Ready', status: 'True', reason: 'Available' });
      void objectClient(kc, Site).applyStatus({ apiVersion: 'example.com/v1', kind: 'Site', metadata: { name: 'a' }, status: { conditions: next } });
      // @ts-expect-error a condition's status is True, False or Unknown
      setCondition(site.status?.conditions, { type: 'Ready', status: 'Yes', reason: 'Available' });
    };
    expectTypeOf(write).toBeFunction();
    expectTypeOf(setCondition([], { type: 'Ready', status: 'True', reason: 'A' })).toEqualTypeOf<Condition[]>();
  });
});
