import { describe, expectTypeOf, it } from 'vitest';
import type { Observable } from 'rxjs';
import type { V1ConfigMap, V1Deployment, V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import { informer, InformerFactory, kubeSource, type Informer, type InformerEvent, type KubeObject, type KubeSource, type PartialObjectMetadata } from '../../src/index.js';
import { offlineKubeConfig } from '../helpers/offlineKubeConfig.js';

// These lines are checked by `tsc` (the typecheck step of `npm test`): each @ts-expect-error must be an error.
interface Widget extends KubeObject {
  spec?: { size: number };
}

const kc = offlineKubeConfig();

describe('types tie a resource to its objects', () => {
  it('a built-in resource name gives the model type with no type argument', () => {
    expectTypeOf(kubeSource(kc, 'v1/pods')).toEqualTypeOf<KubeSource<V1Pod>>();
    expectTypeOf(kubeSource(kc, 'apps/v1/deployments')).toEqualTypeOf<KubeSource<V1Deployment>>();
    expectTypeOf(kubeSource(kc, 'coordination.k8s.io/v1/leases')).toEqualTypeOf<KubeSource<V1Lease>>();
    expectTypeOf(informer(kubeSource(kc, 'v1/nodes'))).toEqualTypeOf<Informer<V1Node>>();
  });

  it('a custom resource takes its type argument, and defaults to KubeObject', () => {
    expectTypeOf(kubeSource<Widget>(kc, 'example.com/v1/widgets')).toEqualTypeOf<KubeSource<Widget>>();
    expectTypeOf(kubeSource(kc, 'example.com/v1/widgets')).toEqualTypeOf<KubeSource<KubeObject>>();
    expectTypeOf(kubeSource<Widget>(kc, { group: 'example.com', version: 'v1', plural: 'widgets' })).toEqualTypeOf<KubeSource<Widget>>();
  });

  it('a mismatch between a resource and a type does not compile', () => {
    const factory = new InformerFactory(kc);
    // Never called: these lines are here for the compiler only.
    const mistakes = (): void => {
      // @ts-expect-error a deployments source is not a source of pods
      informer<V1Pod>(kubeSource(kc, 'apps/v1/deployments'));
      // @ts-expect-error a built-in resource's type comes from its name, not a type argument
      kubeSource<V1Deployment>(kc, 'v1/pods');
      // @ts-expect-error not a resource name: 'pods' needs its version
      kubeSource(kc, 'pods');
      // @ts-expect-error the factory ties the name to the type too
      factory.informerFor<V1Deployment>('v1/pods');
      // @ts-expect-error one way to ask for an informer: informerFor infers the type, no typed shortcut per resource
      factory.pods();
      // @ts-expect-error one name for waiting: the factory's whenSynced, as an informer's
      void factory.waitForCacheSync();
    };
    expectTypeOf(mistakes).toBeFunction();
    expectTypeOf(factory.informerFor('v1/configmaps')).toEqualTypeOf<Informer<V1ConfigMap>>();
    expectTypeOf(factory.informerFor<Widget>('example.com/v1/widgets')).toEqualTypeOf<Informer<Widget>>();
    expectTypeOf(factory.informerFor('apps/v1/deployments')).toEqualTypeOf<Informer<V1Deployment>>();
    expectTypeOf(factory.informerFor('v1/pods', { metadataOnly: true })).toEqualTypeOf<Informer<PartialObjectMetadata>>();
    expectTypeOf(kubeSource(kc, 'apps/v1/deployments', { metadataOnly: true })).toEqualTypeOf<KubeSource<PartialObjectMetadata>>();
  });

  it('an informer is an Observable of its events, and its store holds its type', () => {
    const pods = informer(kubeSource(kc, 'v1/pods'));
    expectTypeOf(pods).toMatchTypeOf<Observable<InformerEvent<V1Pod>>>();
    expectTypeOf(pods.store.getByKey('default/a')).toEqualTypeOf<V1Pod | undefined>();
    expectTypeOf(pods.status().synced).toEqualTypeOf<boolean>();
    const mistakes = (): void => {
      // @ts-expect-error sync state is read from status$ / status(); whenSynced() waits for it
      pods.synced$.subscribe();
      // @ts-expect-error the store is read-only to users
      pods.store.add({} as V1Pod);
      pods.addHandler({
        // @ts-expect-error a handler of pods gets pods
        add: (obj: V1Deployment) => void obj,
      });
    };
    expectTypeOf(mistakes).toBeFunction();
  });
});
