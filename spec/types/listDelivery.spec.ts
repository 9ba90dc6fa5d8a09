import { describe, expectTypeOf, it } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import { informer, kubeSource } from '../../src/index.js';
import { reflect, type ListOptions, type ReflectorEvent } from '../../src/core.js';

// Checked by `tsc` (the typecheck step of `npm test`): each @ts-expect-error must be an error. The calls sit in
// functions that are never run, since they would reach for a cluster.

describe('how lists are delivered is the informer’s choice, and page events say what they carry', () => {
  it('the informer picks page-by-page delivery and managedFields dropping itself; its reflector options cannot override them', () => {
    const calls = (kc: KubeConfig): void => {
      const pods = kubeSource(kc, 'v1/pods');
      // @ts-expect-error the informer always applies a list page by page
      informer(pods, { reflector: { listDelivery: 'whole' } });
      // @ts-expect-error stripManagedFields decides it
      informer(pods, { reflector: { stripManagedFields: false } });
      informer(pods, { reflector: { pageSize: 100 }, stripManagedFields: false });
    };
    expectTypeOf(calls).toBeFunction();
  });

  it('reflect() takes the options, and a page and an end are told apart by type', () => {
    const calls = (kc: KubeConfig): void => {
      reflect(kubeSource(kc, 'v1/pods'), { listDelivery: 'pages', stripManagedFields: true });
      // @ts-expect-error listDelivery is 'whole' or 'pages'
      reflect(kubeSource(kc, 'v1/pods'), { listDelivery: 'page' });
    };
    expectTypeOf(calls).toBeFunction();
    expectTypeOf<Extract<ReflectorEvent<unknown>, { type: 'ReplacePage' }>>().toEqualTypeOf<{ readonly type: 'ReplacePage'; readonly items: readonly unknown[]; readonly first: boolean }>();
    expectTypeOf<Extract<ReflectorEvent<unknown>, { type: 'ReplaceEnd' }>>().toEqualTypeOf<{ readonly type: 'ReplaceEnd'; readonly resourceVersion: string }>();
    expectTypeOf<ListOptions['stripManagedFields']>().toEqualTypeOf<boolean | undefined>();
  });
});
