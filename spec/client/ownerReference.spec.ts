import type { V1ConfigMap, V1Deployment, V1Namespace, V1OwnerReference } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { objectClient, ownerReference, type KubeObject } from '../../src/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});

describe('ownerReference', () => {
  it('builds the reference from an object read from the server, with controller and blockOwnerDeletion when asked (CR-120)', async () => {
    const cms = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const owner = await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
    expect(ownerReference(owner)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid });
    const ref = ownerReference(owner, { controller: true, blockOwnerDeletion: true });
    expect(ref).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid, controller: true, blockOwnerDeletion: true });
    const child = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'child', namespace: 'default' } };
    const applied = await cms.apply({ ...child, metadata: { ...child.metadata, ownerReferences: [ownerReference(owner, { controller: true, for: child })] } });
    expect(applied.metadata?.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid, controller: true }]);
  });

  it('names what an owner lacks: an object built by hand has no uid', () => {
    expect(() => ownerReference({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })).toThrow(/the owner has no metadata\.uid \(only an object read from the server has a uid\)/);
    expect(() => ownerReference({ metadata: { name: 'x', uid: 'u' } })).toThrow(/the owner has no apiVersion, kind \(an object built by hand, or read by a client that drops them, may lack them: set them\)/);
    expect(() => ownerReference({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { uid: 'u' } })).toThrow(/the owner has no metadata\.name/);
    expect(() => ownerReference(null as never)).toThrow(TypeError);
    expect(() => ownerReference({ apiVersion: 'v1', kind: 'K', metadata: { name: 'x', uid: 'u' } }, { controller: 'yes' as never })).toThrow(/option "controller" must be a boolean, got/);
  });

  const website = { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'blog', namespace: 'team-a', uid: 'uid-1' } };
  const cluster = { apiVersion: 'example.com/v1', kind: 'Platform', metadata: { name: 'main', uid: 'uid-2' } };

  it('refuses what the garbage collector would not honour: another namespace, or a cluster-scoped dependent of a namespaced owner (CR-121)', () => {
    expect(() => ownerReference(website, { for: { metadata: { namespace: 'team-b' } } })).toThrow(
      'ownerReference: Website "blog" lives in namespace "team-a" and cannot own an object in namespace "team-b": owner references never cross namespaces',
    );
    expect(() => ownerReference(website, { for: { metadata: {} } })).toThrow(/lives in namespace "team-a" and cannot own a cluster-scoped object \(if the object is namespaced, set its metadata\.namespace\)/);
    expect(ownerReference(website, { for: { metadata: { namespace: 'team-a' } } }).uid).toBe('uid-1');
    // A cluster-scoped owner may own objects of any namespace, and cluster-scoped ones.
    expect(ownerReference(cluster, { for: { metadata: { namespace: 'team-b' } } }).uid).toBe('uid-2');
    expect(ownerReference(cluster, { for: {} }).uid).toBe('uid-2');
  });

  it('refuses a second controller, as controller-runtime does, and accepts its own reference again (CR-122)', () => {
    const held = { metadata: { namespace: 'team-a', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Other', name: 'x\u001b[31m', uid: 'uid-9', controller: true }] } };
    expect(() => ownerReference(website, { controller: true, for: held })).toThrow('ownerReference: the object is already controlled by Other "x\\x1b[31m"; an object has at most one controller');
    // Not a controller reference: any number of owners may sit beside the controller.
    expect(ownerReference(website, { for: held }).controller).toBeUndefined();
    const own = { metadata: { namespace: 'team-a', ownerReferences: [ownerReference(website, { controller: true })] } };
    expect(ownerReference(website, { controller: true, for: own }).controller).toBe(true);
  });

  it('escapes and bounds what it quotes of the objects', () => {
    const hostile = { ...website, metadata: { ...website.metadata, name: `\u001b]0;x\u0007${'n'.repeat(1000)}`, namespace: 'a\u001bb' } };
    let message = '';
    try {
      ownerReference(hostile, { for: { metadata: { namespace: 'c' } } });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect(message.length).toBeLessThan(600);
  });

  it('types: takes any object, gives a V1OwnerReference, and the options are checked', () => {
    expectTypeOf(ownerReference).returns.toExtend<V1OwnerReference>();
    expectTypeOf(ownerReference).toBeCallableWith({} as V1Deployment, { controller: true });
    expectTypeOf(ownerReference).parameter(0).toEqualTypeOf<KubeObject>();
    const mistakes = (ns: V1Namespace, cm: V1ConfigMap): void => {
      // @ts-expect-error controller is a boolean
      ownerReference(ns, { controller: 'true' });
      // @ts-expect-error for is the dependent object, not its name
      ownerReference(ns, { for: 'child' });
      // @ts-expect-error an unknown option
      ownerReference(ns, { namespace: 'x' });
      // @ts-expect-error the owner is an object
      ownerReference('owner');
      ownerReference(ns, { for: cm, controller: true });
    };
    void mistakes;
  });
});
