import { describe, expectTypeOf, it } from 'vitest';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import { admission, customResource, type AdmissionVerdict, type MutatingWebhook, type ValidatingWebhook, type Webhook } from '../../src/index.js';

// These lines are checked by `tsc`: each @ts-expect-error must be an error.
const Website = customResource({ group: 'example.com', version: 'v1', kind: 'Website', spec: z.object({ image: z.string(), replicas: z.number() }) });
type Website = typeof Website.Type;

describe('admission handlers are typed for their resource', () => {
  it('a built-in name or a definition gives the object type, and the webhook is a Webhook', () => {
    const pods = admission.validating('v1/pods', ({ object }) => {
      expectTypeOf(object).toEqualTypeOf<V1Pod>();
      return admission.allow();
    });
    expectTypeOf(pods).toEqualTypeOf<ValidatingWebhook<V1Pod>>();
    expectTypeOf(pods).toExtend<Webhook>();
    const websites = admission.mutating(Website, ({ object }) => ({ ...object, spec: { ...object.spec, image: object.spec.image || 'nginx' } }));
    expectTypeOf(websites).toEqualTypeOf<MutatingWebhook<Website>>();
    expectTypeOf(admission.deny('no')).toEqualTypeOf<AdmissionVerdict>();
  });

  it('with the default operations object is always there; with DELETE it must be checked', () => {
    admission.validating(Website, ({ operation, object, oldObject }) => {
      expectTypeOf(operation).toEqualTypeOf<'CREATE' | 'UPDATE'>();
      expectTypeOf(object).toEqualTypeOf<Website>();
      expectTypeOf(oldObject).toEqualTypeOf<Website | undefined>();
      return admission.allow();
    });
    admission.validating(
      'apps/v1/deployments',
      (ctx) => {
        expectTypeOf(ctx.object).toEqualTypeOf<V1Deployment | undefined>();
        if (ctx.operation === 'DELETE') expectTypeOf(ctx.oldObject).toEqualTypeOf<V1Deployment>();
        return admission.allow();
      },
      { operations: ['UPDATE', 'DELETE'] },
    );
    admission.validating('v1/pods', ({ operation }) => {
      expectTypeOf(operation).toEqualTypeOf<'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'>();
      return admission.allow();
    }, { operations: ['*'] });
  });

  it('a definition with converters takes webhooks too, typed by the version viewed', () => {
    const Shop = customResource({
      group: 'example.com',
      kind: 'Shop',
      versions: { v1: { spec: z.object({ owner: z.string() }) }, v2: { spec: z.object({ owners: z.array(z.string()) }), storage: true } },
      conversion: {
        v1: {
          toStorage: ({ metadata, spec }) => ({ apiVersion: 'example.com/v2', kind: 'Shop', metadata, spec: { owners: [spec.owner] } }),
          fromStorage: ({ metadata, spec }) => ({ apiVersion: 'example.com/v1', kind: 'Shop', metadata, spec: { owner: spec.owners[0] ?? '' } }),
        },
      },
    });
    admission.validating(Shop, ({ object }) => {
      expectTypeOf(object.spec.owners).toEqualTypeOf<string[]>();
      return admission.allow();
    });
    admission.mutating(Shop.forVersion('v1'), ({ object }) => {
      expectTypeOf(object.spec.owner).toEqualTypeOf<string>();
      return object;
    });
    expectTypeOf(admission.conversion(Shop)).toExtend<Webhook>();
  });

  it('mistakes do not compile', () => {
    // Never called: these lines are here for the compiler only.
    const mistakes = (): void => {
      // @ts-expect-error a misspelt field of the object
      admission.validating(Website, ({ object }) => (object.spec.replica > 1 ? admission.deny('x') : admission.allow()));
      // @ts-expect-error a misspelt field of the context
      admission.validating(Website, ({ usrInfo }) => (usrInfo ? admission.allow() : admission.allow()));
      // @ts-expect-error a validating handler returns a verdict, not a boolean
      admission.validating(Website, () => true);
      // @ts-expect-error a mutating handler returns the resource's type or a verdict
      admission.mutating(Website, ({ object }) => ({ ...object, spec: { image: 1 } }));
      // @ts-expect-error a mutating handler on deployments cannot return a pod
      admission.mutating('apps/v1/deployments', (): V1Pod => ({ apiVersion: 'v1', kind: 'Pod' }));
      // @ts-expect-error a plain object is not a verdict
      admission.validating('v1/pods', () => ({ allowed: true }));
      // @ts-expect-error with DELETE among the operations, object may be undefined
      admission.validating(Website, ({ object }) => (object.spec.replicas > 1 ? admission.allow() : admission.allow()), { operations: ['DELETE', 'UPDATE'] });
      // @ts-expect-error not a resource admission knows
      admission.validating('pods', () => admission.allow());
      // @ts-expect-error an unknown operation
      admission.validating('v1/pods', () => admission.allow(), { operations: ['PATCH'] });
      // @ts-expect-error timeoutSeconds is a number
      admission.validating('v1/pods', () => admission.allow(), { timeoutSeconds: '5' });
      // @ts-expect-error deny's code is a number
      admission.deny('no', { code: '403' });
      // @ts-expect-error reinvocationPolicy is for mutating webhooks only
      admission.validating('v1/pods', () => admission.allow(), { reinvocationPolicy: 'IfNeeded' });
      // @ts-expect-error a conversion webhook converts at least one definition
      admission.conversion({ path: '/x' });
      // @ts-expect-error nor none at all
      admission.conversion();
    };
    expectTypeOf(mistakes).toBeFunction();
  });
});
