import { describe, expectTypeOf, it } from 'vitest';
import type { EventsV1Event, V1ConfigMap, V1Deployment, V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import { objectClient, type ApplyConfiguration, type KubeObject, type ObjectClient } from '../../src/index.js';
import { offlineKubeConfig } from '../helpers/offlineKubeConfig.js';

// These lines are checked by `tsc` (the typecheck step of `npm test`): each @ts-expect-error must be an error.
interface Widget extends KubeObject {
  spec?: { size: number; color?: string };
  status?: { ready: boolean };
}

const kc = offlineKubeConfig();

describe('objectClient ties a resource to its objects, as kubeSource does', () => {
  it('a built-in resource name gives the model type with no type argument', () => {
    expectTypeOf(objectClient(kc, 'v1/configmaps')).toEqualTypeOf<ObjectClient<V1ConfigMap>>();
    expectTypeOf(objectClient(kc, 'v1/pods', { namespace: 'default' })).toEqualTypeOf<ObjectClient<V1Pod>>();
    expectTypeOf(objectClient(kc, 'apps/v1/deployments')).toEqualTypeOf<ObjectClient<V1Deployment>>();
    expectTypeOf(objectClient(kc, 'coordination.k8s.io/v1/leases')).toEqualTypeOf<ObjectClient<V1Lease>>();
    expectTypeOf(objectClient(kc, 'v1/nodes')).toEqualTypeOf<ObjectClient<V1Node>>();
    expectTypeOf(objectClient(kc, 'events.k8s.io/v1/events')).toEqualTypeOf<ObjectClient<EventsV1Event>>();
    expectTypeOf(objectClient(kc, 'v1/configmaps').get).returns.resolves.toEqualTypeOf<V1ConfigMap>();
    expectTypeOf(objectClient(kc, 'v1/configmaps').list).returns.resolves.toHaveProperty('items').toEqualTypeOf<V1ConfigMap[]>();
    expectTypeOf(objectClient(kc, 'apps/v1/deployments').getStatus).returns.resolves.toEqualTypeOf<V1Deployment>();
  });

  it('a custom resource takes its type argument, and defaults to KubeObject', () => {
    expectTypeOf(objectClient<Widget>(kc, 'example.com/v1/widgets')).toEqualTypeOf<ObjectClient<Widget>>();
    expectTypeOf(objectClient(kc, 'example.com/v1/widgets')).toEqualTypeOf<ObjectClient<KubeObject>>();
    expectTypeOf(objectClient<Widget>(kc, { group: 'example.com', version: 'v1', plural: 'widgets' })).toEqualTypeOf<ObjectClient<Widget>>();
  });

  it('a mismatch between a resource and a type, or a wrong field, does not compile', () => {
    // Never called: these lines are here for the compiler only.
    const mistakes = (): void => {
      // @ts-expect-error a built-in resource's type comes from its name, not a type argument
      objectClient<V1Deployment>(kc, 'v1/pods');
      // @ts-expect-error not a resource name: 'configmaps' needs its version
      objectClient(kc, 'configmaps');
      // @ts-expect-error a client of configmaps writes configmaps
      objectClient(kc, 'v1/configmaps').create({ metadata: { name: 'x' }, spec: { replicas: 1 } });
      // @ts-expect-error a deployments client is not a pods client
      const pods: ObjectClient<V1Pod> = objectClient(kc, 'apps/v1/deployments');
      void pods;
      // @ts-expect-error replicas is a number
      objectClient(kc, 'apps/v1/deployments').apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { replicas: 'three' } });
      // @ts-expect-error an apply configuration names its object
      objectClient(kc, 'v1/configmaps').apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: {} });
      // @ts-expect-error and says its kind
      objectClient(kc, 'v1/configmaps').apply({ apiVersion: 'v1', metadata: { name: 'x' } });
      // @ts-expect-error a typed custom resource checks its fields too
      objectClient<Widget>(kc, 'example.com/v1/widgets').applyStatus({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, status: { ready: 'yes' } });
    };
    expectTypeOf(mistakes).toBeFunction();
  });

  it('an apply configuration is partial at every depth', () => {
    const scale: ApplyConfiguration<V1Deployment> = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { a: 'b' } }, spec: { replicas: 3 } };
    const containers: ApplyConfiguration<V1Deployment> = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx' }] } } },
    };
    // A custom resource without a type takes any field.
    const untyped: ApplyConfiguration<KubeObject> = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', finalizers: ['x'] }, spec: { anything: true } };
    expectTypeOf(objectClient(kc, 'apps/v1/deployments').apply).parameter(0).toEqualTypeOf<ApplyConfiguration<V1Deployment>>();
    expectTypeOf(objectClient(kc, 'apps/v1/deployments').apply).returns.resolves.toEqualTypeOf<V1Deployment>();
    expectTypeOf(scale).toExtend<ApplyConfiguration<V1Deployment>>();
    expectTypeOf([containers, untyped]).toBeArray();
  });
});
