import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { website, websiteCrd } from './crdFixtures.js';
import { request, WireWatch } from './wire.js';

// The simulator serves CustomResourceDefinitions as apiextensions-apiserver does: created by POST or
// server-side apply, named and Established, their resources served and listed in discovery.

let server: ApiServer;
beforeEach(async () => {
  server = await startApiServer();
});
afterEach(async () => {
  await server.close();
});

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const WEBSITES = '/apis/example.com/v1/namespaces/default/websites';
const APPLY = 'application/apply-patch+yaml';

async function established(name: string): Promise<any> {
  return waitFor(async () => {
    const res = await request(`${server.url}${CRDS}/${name}`);
    const ok = res.json.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True');
    return ok ? res.json : undefined;
  }, `${name} Established`);
}

describe('creating a CRD', () => {
  it('answers 404 for the resource before the CRD exists, and serves it once created by POST', async () => {
    expect((await request(`${server.url}${WEBSITES}`)).status).toBe(404);
    const created = await request(`${server.url}${CRDS}`, { method: 'POST', body: websiteCrd() });
    expect(created.status).toBe(201);
    expect(created.json.spec.names).toMatchObject({ singular: 'website', listKind: 'WebsiteList' });
    expect(created.json.spec.conversion).toEqual({ strategy: 'None' });
    const crd = await established('websites.example.com');
    expect(crd.status.acceptedNames).toEqual({ plural: 'websites', singular: 'website', shortNames: ['ws'], kind: 'Website', listKind: 'WebsiteList', categories: ['all'] });
    expect(crd.status.storedVersions).toEqual(['v1']);
    expect(crd.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['NamesAccepted', 'True', 'NoConflicts', 'no conflicts found'],
      ['Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted'],
    ]);
    const obj = await request(`${server.url}${WEBSITES}`, { method: 'POST', body: website('blog') });
    expect(obj.status).toBe(201);
    expect(obj.json).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'blog', namespace: 'default', generation: 1 } });
    const list = await request(`${server.url}${WEBSITES}`);
    expect(list.json.kind).toBe('WebsiteList');
    expect(list.json.items.map((o: any) => o.metadata.name)).toEqual(['blog']);
  });

  it('creates and updates a CRD by server-side apply, as kubectl apply --server-side sends it', async () => {
    const url = `${server.url}${CRDS}/websites.example.com?fieldManager=kubectl&force=true`;
    const applied = await request(url, { method: 'PATCH', contentType: APPLY, body: websiteCrd() });
    expect(applied.status).toBe(201);
    await established('websites.example.com');
    expect((await request(`${server.url}${WEBSITES}`)).status).toBe(200);
    const v2 = websiteCrd();
    v2.spec.versions[0].storage = false;
    v2.spec.versions.push({ ...v2.spec.versions[0], name: 'v2', storage: true });
    const reapplied = await request(url, { method: 'PATCH', contentType: APPLY, body: v2 });
    expect(reapplied.status).toBe(200);
    expect(reapplied.json.metadata.generation).toBe(2);
    await waitFor(async () => (await request(`${server.url}/apis/example.com/v2/namespaces/default/websites`)).status === 200, 'v2 served');
    const crd = await request(`${server.url}${CRDS}/websites.example.com`);
    expect(crd.json.status.storedVersions).toEqual(['v1', 'v2']);
    const group = await request(`${server.url}/apis/example.com`);
    expect(group.json).toMatchObject({ kind: 'APIGroup', name: 'example.com', preferredVersion: { groupVersion: 'example.com/v2', version: 'v2' } });
  });

  it('serves every version from one store, each object in the apiVersion it is read through', async () => {
    const crd = websiteCrd();
    crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v1beta1', storage: false });
    await request(`${server.url}${CRDS}`, { method: 'POST', body: crd });
    await established('websites.example.com');
    const beta = `${server.url}/apis/example.com/v1beta1/namespaces/default/websites`;
    const watch = await WireWatch.open(`${beta}?watch=true`);
    try {
      const created = await request(`${server.url}${WEBSITES}`, { method: 'POST', body: website('blog') });
      expect(created.json.apiVersion).toBe('example.com/v1');
      const read = await request(`${beta}/blog`);
      expect(read.json).toMatchObject({ apiVersion: 'example.com/v1beta1', kind: 'Website', metadata: { name: 'blog', uid: created.json.metadata.uid } });
      expect((await request(beta)).json).toMatchObject({ apiVersion: 'example.com/v1beta1', kind: 'WebsiteList', items: [{ apiVersion: 'example.com/v1beta1' }] });
      // Written back through v1beta1 as read through v1: accepted, stored in the storage version.
      const updated = await request(`${beta}/blog`, { method: 'PUT', body: { ...created.json, spec: { image: 'httpd', replicas: 1 } } });
      expect(updated.status).toBe(200);
      expect(updated.json.apiVersion).toBe('example.com/v1beta1');
      expect(server.get<any>('example.com/v1/websites', 'default', 'blog')).toMatchObject({ apiVersion: 'example.com/v1', spec: { image: 'httpd' } });
      expect(server.get<any>('example.com/v1beta1/websites', 'default', 'blog')?.apiVersion).toBe('example.com/v1beta1');
      await watch.waitForLines(2);
      expect(watch.events.map((e) => [e.type, e.object.apiVersion, e.object.spec.image])).toEqual([
        ['ADDED', 'example.com/v1beta1', 'nginx'],
        ['MODIFIED', 'example.com/v1beta1', 'httpd'],
      ]);
    } finally {
      watch.close();
    }
  });

  it('a metadata-only watch of a custom resource gets PartialObjectMetadata in meta.k8s.io/v1, not the CRD apiVersion', async () => {
    await request(`${server.url}${CRDS}`, { method: 'POST', body: websiteCrd() });
    await established('websites.example.com');
    const watch = await WireWatch.open(`${server.url}${WEBSITES}?watch=true`, { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' });
    try {
      await request(`${server.url}${WEBSITES}`, { method: 'POST', body: website('blog') });
      await watch.waitForLines(1);
      expect(watch.events.map((e) => [e.type, e.object.kind, e.object.apiVersion])).toEqual([['ADDED', 'PartialObjectMetadata', 'meta.k8s.io/v1']]);
    } finally {
      watch.close();
    }
  });

  it('lists the resource in discovery with its names, verbs and subresources', async () => {
    await request(`${server.url}${CRDS}`, { method: 'POST', body: websiteCrd() });
    await established('websites.example.com');
    const groups = await request(`${server.url}/apis`);
    expect(groups.json.groups).toContainEqual({ name: 'example.com', versions: [{ groupVersion: 'example.com/v1', version: 'v1' }], preferredVersion: { groupVersion: 'example.com/v1', version: 'v1' } });
    const resources = (await request(`${server.url}/apis/example.com/v1`)).json.resources;
    expect(resources).toEqual([
      { name: 'websites', singularName: 'website', namespaced: true, kind: 'Website', verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], shortNames: ['ws'], categories: ['all'] },
      { name: 'websites/status', singularName: '', namespaced: true, kind: 'Website', verbs: ['get', 'patch', 'update'] },
      { name: 'websites/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] },
    ]);
    const ext = (await request(`${server.url}/apis/apiextensions.k8s.io/v1`)).json.resources;
    expect(ext[0]).toMatchObject({ name: 'customresourcedefinitions', namespaced: false, kind: 'CustomResourceDefinition', shortNames: ['crd', 'crds'] });
  });

  it('serves a cluster-scoped CRD without namespaces', async () => {
    const crd = websiteCrd({ plural: 'sites', kind: 'Site' });
    crd.spec.scope = 'Cluster';
    crd.spec.names.shortNames = [];
    await request(`${server.url}${CRDS}`, { method: 'POST', body: crd });
    await established('sites.example.com');
    expect((await request(`${server.url}/apis/example.com/v1/namespaces/default/sites`)).status).toBe(404);
    const created = await request(`${server.url}/apis/example.com/v1/sites`, { method: 'POST', body: { apiVersion: 'example.com/v1', kind: 'Site', metadata: { name: 'one' } } });
    expect(created.status).toBe(201);
    expect(created.json.metadata.namespace).toBeUndefined();
  });

  it('refuses a second CRD whose plural another CRD of the group serves: NamesAccepted False, not Established, not served', async () => {
    await request(`${server.url}${CRDS}`, { method: 'POST', body: websiteCrd() });
    await established('websites.example.com');
    const clash = websiteCrd({ plural: 'pages', kind: 'Page' });
    clash.spec.names.shortNames = ['websites'];
    expect((await request(`${server.url}${CRDS}`, { method: 'POST', body: clash })).status).toBe(201);
    const crd = await waitFor(async () => {
      const res = await request(`${server.url}${CRDS}/pages.example.com`);
      return res.json.status?.conditions?.length === 2 ? res.json : undefined;
    }, 'conditions set');
    expect(crd.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['NamesAccepted', 'False', 'ShortNamesConflict', '"websites" is already in use'],
      ['Established', 'False', 'NotAccepted', 'not all names are accepted'],
    ]);
    expect((await request(`${server.url}/apis/example.com/v1/namespaces/default/pages`)).status).toBe(404);
  });

  it('tells a watcher of CRDs when the CRD is Established', async () => {
    const watch = await WireWatch.open(`${server.url}${CRDS}?watch=true`);
    try {
      await request(`${server.url}${CRDS}`, { method: 'POST', body: websiteCrd() });
      await waitFor(() => watch.events.some((e) => e.object.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True')), 'an Established event');
      expect(watch.events[0]).toMatchObject({ type: 'ADDED', object: { status: { conditions: [], acceptedNames: { plural: '', kind: '' } } } });
    } finally {
      watch.close();
    }
  });
});

describe('an invalid CRD', () => {
  it('is refused with 422 and kube-apiserver Status causes', async () => {
    const crd = websiteCrd();
    crd.metadata.name = 'sites.example.com';
    crd.spec.versions[0].storage = false;
    crd.spec.scope = 'Everywhere';
    const res = await request(`${server.url}${CRDS}`, { method: 'POST', body: crd });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422, details: { name: 'sites.example.com', group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' } });
    expect(res.json.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "sites.example.com": must be spec.names.plural+"."+spec.group', field: 'metadata.name' },
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: "Everywhere": supported values: "Cluster", "Namespaced"', field: 'spec.scope' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "0 storage versions": must have exactly one version marked as storage version', field: 'spec.versions' },
    ]);
    expect(res.json.message).toMatch(/^CustomResourceDefinition\.apiextensions\.k8s\.io "sites\.example\.com" is invalid: \[metadata\.name: /);
    expect(server.list('apiextensions.k8s.io/v1/customresourcedefinitions')).toEqual([]);
  });

  it('needs a group with a dot, lowercase names, versions and a schema', async () => {
    const crd = websiteCrd({ group: 'local' });
    crd.spec.names.plural = 'Websites';
    crd.metadata.name = 'websites.local';
    delete crd.spec.versions[0].schema;
    const res = await request(`${server.url}${CRDS}`, { method: 'POST', body: crd });
    expect(res.status).toBe(422);
    expect(res.json.details.causes.map((c: any) => c.field)).toEqual(['metadata.name', 'spec.group', 'spec.names.plural', 'spec.versions[0].schema.openAPIV3Schema']);
    expect(res.json.details.causes[1].message).toBe('Invalid value: "local": should be a domain with at least one dot');
    expect(res.json.details.causes[3].message).toBe('Required value: schemas are required');
    const none = websiteCrd();
    none.spec.versions = [];
    expect((await request(`${server.url}${CRDS}`, { method: 'POST', body: none })).json.details.causes).toEqual([{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.versions' }]);
  });

  it('cannot change its scope', async () => {
    await request(`${server.url}${CRDS}`, { method: 'POST', body: websiteCrd() });
    const crd = await established('websites.example.com');
    const res = await request(`${server.url}${CRDS}/websites.example.com`, { method: 'PUT', body: { ...crd, spec: { ...crd.spec, scope: 'Cluster' } } });
    expect(res.status).toBe(422);
    expect(res.json.details.causes).toEqual([{ reason: 'FieldValueInvalid', message: 'Invalid value: "Cluster": field is immutable', field: 'spec.scope' }]);
  });
});
