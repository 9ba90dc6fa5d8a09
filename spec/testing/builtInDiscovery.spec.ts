import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveWatched } from '../../src/cli/watchResource.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request } from './wire.js';

// The simulator's discovery names its built-in resources as kube-apiserver 1.34 does, so kubectl's short
// names and `kubectl get all` find them. Expected values read from a real kube-apiserver v1.34.4's
// discovery (the e2e tier's binary): [shortNames, categories].
const REAL: Readonly<Record<string, readonly [readonly string[], readonly string[]]>> = {
  '/api/v1 pods': [['po'], ['all']],
  '/api/v1 services': [['svc'], ['all']],
  '/api/v1 configmaps': [['cm'], []],
  '/api/v1 secrets': [[], []],
  '/api/v1 namespaces': [['ns'], []],
  '/api/v1 nodes': [['no'], []],
  '/api/v1 events': [['ev'], []],
  '/apis/apps/v1 deployments': [['deploy'], ['all']],
  '/apis/apps/v1 replicasets': [['rs'], ['all']],
  '/apis/coordination.k8s.io/v1 leases': [[], []],
  '/apis/events.k8s.io/v1 events': [['ev'], []],
  '/apis/apiextensions.k8s.io/v1 customresourcedefinitions': [['crd', 'crds'], ['api-extensions']],
};

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});

describe('discovery of the built-in resources', () => {
  it('lists kube-apiserver’s short names and categories for every built-in resource the simulator serves', async () => {
    const seen: Record<string, readonly [readonly string[], readonly string[]]> = {};
    for (const path of ['/api/v1', '/apis/apps/v1', '/apis/coordination.k8s.io/v1', '/apis/events.k8s.io/v1', '/apis/apiextensions.k8s.io/v1']) {
      const res = await request(`${server.url}${path}`);
      expect(res.status).toBe(200);
      for (const r of res.json.resources as { name: string; shortNames?: string[]; categories?: string[] }[]) {
        if (!r.name.includes('/')) seen[`${path} ${r.name}`] = [r.shortNames ?? [], r.categories ?? []];
      }
    }
    expect(seen).toEqual(REAL);
  });

  it('keeps a custom resource’s own names beside them', async () => {
    server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget' });
    const res = await request(`${server.url}/apis/example.com/v1`);
    expect(res.json.resources).toEqual([expect.not.objectContaining({ shortNames: expect.anything() })]);
  });

  it.each([
    ['deploy.apps', 'apps/v1/deployments'],
    ['rs.apps', 'apps/v1/replicasets'],
    ['ev.events.k8s.io', 'events.k8s.io/v1/events'],
    ['crd.apiextensions.k8s.io', 'apiextensions.k8s.io/v1/customresourcedefinitions'],
  ])('rxkube watch resolves %s, which it does not know offline, through the simulator’s discovery', async (name, ref) => {
    const resolved = await resolveWatched(server.kubeConfig(), name);
    expect([resolved.ref, resolved.builtIn]).toEqual([ref, true]);
  });
});
