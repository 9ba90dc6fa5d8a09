/**
 * A resource kube-apiserver does not serve, named at once (CR-130…132): before its CRD exists the informer
 * reports that the server serves no such group/version, a misspelt plural gets the served name as a
 * suggestion once the group exists, and the informer of the right name syncs as soon as the CRD is
 * Established — against the real server's 404s and discovery, as the simulator tier checks against its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { customResource, jsonSchema } from '../../src/crd/index.js';
import { informer, type Informer } from '../../src/informer/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { ResourceNotServedError } from '../../src/errors/api/index.js';
import type { KubeObject } from '../../src/store/types.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';
import { startCluster, type Cluster } from './cluster.js';

const FAST = { reflector: { backoff: { initialMs: 5, maxMs: 200, jitter: 0 } } };
const Gizmo = customResource({ group: 'unserved.example.com', version: 'v1', kind: 'Gizmo', spec: jsonSchema<{ size?: number }>({ type: 'object', properties: { size: { type: 'integer' } } }) });

let cluster: Cluster;
const running = new Lifetimes();

beforeAll(async () => {
  cluster = await startCluster();
}, 120_000);
afterAll(async () => {
  await running.end();
  await cluster?.stop();
});

function watch(resource: { group: string; version: string; plural: string; namespaced: boolean }): { inf: Informer<KubeObject>; errors: Error[] } {
  const inf = running.track(informer(kubeSource(cluster.kubeConfig, resource), FAST));
  const errors: Error[] = [];
  inf.errors$.subscribe((e) => errors.push(e));
  inf.subscribe();
  return { inf, errors };
}

describe('a resource kube-apiserver does not serve', () => {
  it('is named, suggested once the group exists, and synced once its CRD is Established', async () => {
    const right = watch({ group: Gizmo.group, version: Gizmo.version, plural: Gizmo.plural, namespaced: true });
    await waitFor(() => right.errors.length >= 1, 'a failed list');
    expect(right.errors[0]).toBeInstanceOf(ResourceNotServedError);
    expect(right.errors[0]?.message).toContain('the API server serves no group unserved.example.com/v1: is the CRD installed?');

    await objectClient(cluster.kubeConfig, 'apiextensions.k8s.io/v1/customresourcedefinitions', { fieldManager: 'e2e' }).apply(Gizmo.crd() as never, { force: true });
    await right.inf.whenSynced({ timeout: 60_000 });

    const misspelt = watch({ group: Gizmo.group, version: Gizmo.version, plural: 'gizmo', namespaced: true });
    // The first answer may still come from discovery a moment old; what matters is that the suggestion comes.
    const suggestion = 'unserved.example.com/v1 serves no resource "gizmo": did you mean "gizmos"? is the CRD installed?';
    await waitFor(() => misspelt.errors.some((e) => e.message.includes(suggestion)), 'the suggestion', 30_000, { describe: () => misspelt.errors.map((e) => e.message).join(' | ') });
    expect(misspelt.errors.every((e) => e instanceof ResourceNotServedError)).toBe(true);
  }, 120_000);
});
