import { describe, expectTypeOf, it } from 'vitest';
import { type } from 'arktype';
import { Type } from '@sinclair/typebox';
import { customResource, objectClient } from '../../src/index.js';
import { offlineKubeConfig } from '../helpers/offlineKubeConfig.js';

// Checked by `tsc`: an ArkType or TypeBox schema types the objects with no type argument (CR-4), and
// each @ts-expect-error must be an error.
const kc = offlineKubeConfig();

const ArkSite = customResource({
  group: 'example.com',
  version: 'v1',
  kind: 'ArkSite',
  spec: type({ image: 'string > 0', replicas: '0 <= number.integer <= 50 = 1', 'tier?': "'free' | 'pro'", 'owner?': 'string | null' }),
  status: type({ 'readyReplicas?': 'number.integer' }),
});

const BoxSite = customResource({
  group: 'example.com',
  version: 'v1',
  kind: 'BoxSite',
  spec: Type.Object({
    image: Type.String({ minLength: 1 }),
    replicas: Type.Optional(Type.Integer({ default: 1 })),
    tier: Type.Optional(Type.Union([Type.Literal('free'), Type.Literal('pro')])),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  }),
  status: Type.Object({ readyReplicas: Type.Optional(Type.Integer()) }),
});

describe('ArkType and TypeBox definitions type their objects', () => {
  it('reads ArkType’s output type: a field with a default is always there', () => {
    type ArkSite = typeof ArkSite.Type;
    expectTypeOf<ArkSite['apiVersion']>().toEqualTypeOf<'example.com/v1'>();
    expectTypeOf<ArkSite['spec']>().toEqualTypeOf<{ image: string; replicas: number; tier?: 'free' | 'pro'; owner?: string | null }>();
    expectTypeOf<ArkSite['status']>().toEqualTypeOf<{ readyReplicas?: number } | undefined>();
  });

  it('reads TypeBox’s static type', () => {
    type BoxSite = typeof BoxSite.Type;
    expectTypeOf<BoxSite['kind']>().toEqualTypeOf<'BoxSite'>();
    expectTypeOf<BoxSite['spec']>().toEqualTypeOf<{ image: string; replicas?: number; tier?: 'free' | 'pro'; labels?: { [key: string]: string } }>();
    expectTypeOf<BoxSite['status']>().toEqualTypeOf<{ readyReplicas?: number } | undefined>();
  });

  it('checks the fields of an apply configuration', () => {
    const arkSites = objectClient(kc, ArkSite, { namespace: 'default' });
    const boxSites = objectClient(kc, BoxSite, { namespace: 'default' });
    const mistakes = (): void => {
      // @ts-expect-error a misspelt field of an ArkType spec
      void arkSites.apply({ apiVersion: 'example.com/v1', kind: 'ArkSite', metadata: { name: 'a' }, spec: { imgae: 'nginx' } });
      // @ts-expect-error a value outside an ArkType literal union
      void arkSites.apply({ apiVersion: 'example.com/v1', kind: 'ArkSite', metadata: { name: 'a' }, spec: { tier: 'gold' } });
      // @ts-expect-error a misspelt field of a TypeBox spec
      void boxSites.apply({ apiVersion: 'example.com/v1', kind: 'BoxSite', metadata: { name: 'a' }, spec: { imgae: 'nginx' } });
      // @ts-expect-error a field of the wrong type in a TypeBox status
      void boxSites.applyStatus({ apiVersion: 'example.com/v1', kind: 'BoxSite', metadata: { name: 'a' }, status: { readyReplicas: '2' } });
      // A correct one compiles.
      void arkSites.apply({ apiVersion: 'example.com/v1', kind: 'ArkSite', metadata: { name: 'a' }, spec: { image: 'nginx', tier: 'pro' } });
    };
    expectTypeOf(mistakes).toBeFunction();
  });
});
