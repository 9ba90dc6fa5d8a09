import { describe, expectTypeOf, it } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import { informer, kubeSource } from '../../src/index.js';
import { type CachedLookup, reflect, type WatchOptions } from '../../src/core.js';

// Checked by `tsc` (the typecheck step of `npm test`): each @ts-expect-error must be an error. The calls sit in
// functions that are never run, since they would reach for a cluster.

describe('the cached hint (PF-50) is not an informer option, and is a lookup by namespace and name', () => {
  it('an informer’s reflector options cannot set it', () => {
    const calls = (kc: KubeConfig): void => {
      const pods = kubeSource(kc, 'v1/pods');
      // @ts-expect-error the informer decides it (it does not hand one yet, PF-50)
      informer(pods, { reflector: { cached: () => undefined } });
    };
    expectTypeOf(calls).toBeFunction();
  });

  it('reflect() and a watch take a function of namespace and name, and nothing else', () => {
    const calls = (kc: KubeConfig, held: Map<string, object>): void => {
      const lookup: CachedLookup = (namespace, name) => held.get(namespace === undefined ? name : `${namespace}/${name}`);
      reflect(kubeSource(kc, 'v1/pods'), { cached: lookup });
      // @ts-expect-error a lookup, not the cache itself
      reflect(kubeSource(kc, 'v1/pods'), { cached: held });
      // @ts-expect-error the key is asked for as namespace and name, not as a number
      reflect(kubeSource(kc, 'v1/pods'), { cached: (index: number) => held.get(String(index)) });
    };
    expectTypeOf(calls).toBeFunction();
    expectTypeOf<WatchOptions['cached']>().toEqualTypeOf<CachedLookup | undefined>();
    expectTypeOf<Parameters<CachedLookup>>().toEqualTypeOf<[namespace: string | undefined, name: string]>();
  });
});
