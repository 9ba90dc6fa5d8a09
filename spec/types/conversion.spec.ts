import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { customResource, type CustomResource, type CustomResourceDefinition } from '../../src/index.js';
import { conversionWebhook, type ConversionWebhook } from '../../src/admission/conversion.js';
import type { Webhook } from '../../src/admission/types.js';

// Checked by `tsc`: each @ts-expect-error must be an error.
const versions = {
  v1: { spec: z.object({ image: z.string() }) },
  v2: { spec: z.object({ repository: z.string(), tag: z.string() }), storage: true },
} as const;

const Website = customResource({
  group: 'example.com',
  kind: 'Website',
  versions,
  conversion: {
    v1: {
      toStorage: (o) => {
        expectTypeOf(o.apiVersion).toEqualTypeOf<'example.com/v1'>();
        expectTypeOf(o.spec).toEqualTypeOf<{ image: string }>();
        return { apiVersion: 'example.com/v2', kind: 'Website', metadata: o.metadata, spec: { repository: o.spec.image, tag: '' } };
      },
      fromStorage: (o) => {
        expectTypeOf(o.spec).toEqualTypeOf<{ repository: string; tag: string }>();
        return { apiVersion: 'example.com/v1', kind: 'Website', metadata: o.metadata, spec: { image: o.spec.repository } };
      },
    },
  },
});

describe('conversion is typed by the versions', () => {
  it('types each converter from the version schemas', () => {
    expectTypeOf<(typeof Website.Type)['apiVersion']>().toEqualTypeOf<'example.com/v2'>();
    expectTypeOf(Website.hasConversion).toEqualTypeOf<true>();
    expectTypeOf(Website.forVersion('v1').hasConversion).toEqualTypeOf<true>();
  });

  it('does not compile with a missing version, an extra key, the storage version, or a converter of the wrong type', () => {
    const v1 = {
      toStorage: (o: { metadata: object }) => ({ apiVersion: 'example.com/v2' as const, kind: 'Website' as const, metadata: o.metadata, spec: { repository: '', tag: '' } }),
      fromStorage: (o: { metadata: object }) => ({ apiVersion: 'example.com/v1' as const, kind: 'Website' as const, metadata: o.metadata, spec: { image: '' } }),
    };
    const mistakes = (): void => {
      // @ts-expect-error v1 has no converters
      customResource({ group: 'example.com', kind: 'Website', versions, conversion: {} });
      // @ts-expect-error no version v3
      customResource({ group: 'example.com', kind: 'Website', versions, conversion: { v1, v3: v1 } });
      // @ts-expect-error v2 is the storage version
      customResource({ group: 'example.com', kind: 'Website', versions, conversion: { v1, v2: v1 } });
      // @ts-expect-error toStorage returns an object of the storage version, not its argument
      customResource({ group: 'example.com', kind: 'Website', versions, conversion: { v1: { toStorage: (o) => o, fromStorage: v1.fromStorage } } });
      // @ts-expect-error fromStorage is missing
      customResource({ group: 'example.com', kind: 'Website', versions, conversion: { v1: { toStorage: v1.toStorage } } });
    };
    expectTypeOf(mistakes).toBeFunction();
  });

  it('types crd() options', () => {
    expectTypeOf(Website.crd({ conversionWebhook: { url: 'https://h/convert' } })).toEqualTypeOf<CustomResourceDefinition>();
    expectTypeOf(Website.crd({ conversionWebhook: { service: { namespace: 'a', name: 'b', port: 9443 } } })).toEqualTypeOf<CustomResourceDefinition>();
    const Plain = customResource({ group: 'example.com', kind: 'Website', versions });
    const Single = customResource({ group: 'example.com', version: 'v1', kind: 'Single', spec: z.object({}) });
    expectTypeOf(Plain.hasConversion).toEqualTypeOf<false>();
    expectTypeOf(Plain.crd()).toEqualTypeOf<CustomResourceDefinition>();
    expectTypeOf(Single.crd()).toEqualTypeOf<CustomResourceDefinition>();
    // Every definition is still a CustomResource, whatever its crd() takes.
    const all: readonly CustomResource[] = [Website, Plain, Single, Website.forVersion('v1')];
    expectTypeOf(all[0]!.crd).parameters.toEqualTypeOf<[options?: Parameters<typeof Website.crd>[0]]>();
    const mistakes = (): void => {
      // @ts-expect-error a definition with converters needs its conversion webhook
      Website.crd();
      // @ts-expect-error in every version's view
      Website.forVersion('v1').crd();
      // @ts-expect-error a definition without converters has no conversion webhook
      Plain.crd({ conversionWebhook: { url: 'https://h/convert' } });
      // @ts-expect-error nor one of a single version
      Single.crd({ conversionWebhook: { url: 'https://h/convert' } });
      // @ts-expect-error a service or a url, not both
      Website.crd({ conversionWebhook: { url: 'https://h/convert', service: { namespace: 'a', name: 'b' } } });
      // @ts-expect-error a service needs a name
      Website.crd({ conversionWebhook: { service: { namespace: 'a' } } });
    };
    expectTypeOf(mistakes).toBeFunction();
  });

  it('makes a conversion webhook of definitions, with options last', () => {
    expectTypeOf(conversionWebhook(Website)).toEqualTypeOf<ConversionWebhook>();
    expectTypeOf(conversionWebhook(Website, Website.forVersion('v1'), { path: '/convert-websites' })).toExtend<Webhook>();
    const mistakes = (): void => {
      // @ts-expect-error options come last
      conversionWebhook({ path: '/x' }, Website);
      // @ts-expect-error options alone: no definition to convert
      conversionWebhook({ path: '/x' });
      // @ts-expect-error no definition at all
      conversionWebhook();
      // @ts-expect-error not a definition
      conversionWebhook('example.com/v1/websites');
      // @ts-expect-error a definition without converters
      conversionWebhook(Website, customResource({ group: 'example.com', version: 'v1', kind: 'Single', spec: z.object({}) }));
    };
    expectTypeOf(mistakes).toBeFunction();
  });
});
