// Not run on this branch, whose src/testing/crd/schema is a pass-through stand-in: once the schema module
// lands there, rename this file to crdAdmission.spec.ts (it passed against that module at its commits 712fe96 and e4b3952).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { website, websiteCrd } from './crdFixtures.js';
import { request } from './wire.js';

// Every write of a served custom resource goes through its version's schema (pruning, defaults,
// validation), and a refusal is kube-apiserver's 422 naming `<Kind>.<group>` and the field.

let server: ApiServer;
beforeEach(async () => {
  const crd = websiteCrd();
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  spec.required = ['image'];
  spec.properties.replicas = { type: 'integer', minimum: 0, maximum: 50, default: 1 };
  server = await startApiServer({ crds: [crd] });
});
afterEach(async () => {
  await server.close();
});

const WEBSITES = '/apis/example.com/v1/namespaces/default/websites';

describe('admission of custom objects', () => {
  it('prunes unknown fields and applies defaults on create', async () => {
    const res = await request(`${server.url}${WEBSITES}`, { method: 'POST', body: website('blog', { image: 'nginx', colour: 'red' }) });
    expect(res.status).toBe(201);
    expect(res.json.spec).toEqual({ image: 'nginx', replicas: 1 });
  });

  it('refuses an invalid object with 422 Invalid naming the kind, the group and the field', async () => {
    const res = await request(`${server.url}${WEBSITES}`, { method: 'POST', body: website('blog', { image: 'nginx', replicas: 99 }) });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'Invalid', details: { name: 'blog', group: 'example.com', kind: 'Website' } });
    expect(res.json.details.causes).toEqual([{ reason: 'FieldValueInvalid', message: 'Invalid value: 99: spec.replicas in body should be less than or equal to 50', field: 'spec.replicas' }]);
    expect(res.json.message).toBe('Website.example.com "blog" is invalid: spec.replicas: Invalid value: 99: spec.replicas in body should be less than or equal to 50');
    expect(server.list('example.com/v1/websites')).toEqual([]);
  });

  it('checks updates, patches, applies and /status writes the same way', async () => {
    await request(`${server.url}${WEBSITES}`, { method: 'POST', body: website('blog') });
    const patched = await request(`${server.url}${WEBSITES}/blog`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { image: null } } });
    expect(patched.status).toBe(422);
    expect(patched.json.details.causes[0]).toMatchObject({ reason: 'FieldValueRequired', field: 'spec.image' });
    const applied = await request(`${server.url}${WEBSITES}/blog?fieldManager=test&force=true`, { method: 'PATCH', contentType: 'application/apply-patch+yaml', body: website('blog', { image: 'nginx', replicas: -1 }) });
    expect(applied.status).toBe(422);
    const current = server.get<any>('example.com/v1/websites', 'default', 'blog');
    const status = await request(`${server.url}${WEBSITES}/blog/status`, { method: 'PUT', body: { ...current, status: { readyReplicas: 'many' } } });
    expect(status.status).toBe(422);
    expect(status.json.details.causes[0]).toMatchObject({ reason: 'FieldValueTypeInvalid', field: 'status.readyReplicas' });
    // The status validator's words: paths from status itself, as kube-apiserver writes them.
    expect(status.json.details.causes[0].message).toContain('readyReplicas in body must be of type integer');
    expect(status.json.details.causes[0].message).not.toContain('status.readyReplicas in body');
    const scaled = await request(`${server.url}${WEBSITES}/blog/scale`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { replicas: 51 } } });
    expect(scaled.status).toBe(422);
    expect(scaled.json.message).toMatch(/^Website\.example\.com "blog" is invalid: spec\.replicas/);
  });

  it('refuses a CRD whose schema is not structural, naming the schema field', async () => {
    const crd = websiteCrd({ plural: 'pages', kind: 'Page' });
    crd.spec.names.shortNames = [];
    delete crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.type;
    const res = await request(`${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, { method: 'POST', body: crd });
    expect(res.status).toBe(422);
    expect(res.json.details.causes).toContainEqual({ reason: 'FieldValueRequired', field: 'spec.versions[0].schema.openAPIV3Schema.properties[spec].type', message: 'Required value: must not be empty for specified object fields' });
  });
});
