import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { website, websiteCrd } from './crdFixtures.js';
import { request, WireWatch } from './wire.js';

// What a served CRD's objects get: the status and scale subresources, the Table form with the CRD's
// printer columns, and deletion with the CRD.

let server: ApiServer;
beforeEach(async () => {
  server = await startApiServer({ crds: [websiteCrd()] });
});
afterEach(async () => {
  await server.close();
});

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const WEBSITES = '/apis/example.com/v1/namespaces/default/websites';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

describe('the crds option', () => {
  it('installs each CRD Established at once, its resource served', async () => {
    const crd = server.get<any>('apiextensions.k8s.io/v1/customresourcedefinitions', '', 'websites.example.com');
    expect(crd?.status.conditions.find((c: any) => c.type === 'Established')).toMatchObject({ status: 'True', reason: 'InitialNamesAccepted' });
    expect((await request(`${server.url}${WEBSITES}`)).status).toBe(200);
    await server.create('example.com/v1/websites', website('direct'));
    expect(server.list('example.com/v1/websites')).toHaveLength(1);
  });

  it('is checked up front: a CRD the server would refuse is a TypeError naming it', async () => {
    const bad = websiteCrd({ group: 'local' });
    await expect(startApiServer({ crds: [bad] })).rejects.toThrow(
      new TypeError('startApiServer: crds[0] would be refused: CustomResourceDefinition.apiextensions.k8s.io "websites.local" is invalid: spec.group: Invalid value: "local": should be a domain with at least one dot'),
    );
    await expect(startApiServer({ crds: {} as never })).rejects.toThrow(/^startApiServer: crds must be an array/);
    await expect(startApiServer({ crds: [{ ...websiteCrd(), kind: 'Deployment' }] })).rejects.toThrow('startApiServer: crds[0] would be refused: kind must be CustomResourceDefinition, got "Deployment"');
  });
});

describe('the status subresource', () => {
  it('leaves the status to /status and counts generations for spec changes only', async () => {
    const created = await request(`${server.url}${WEBSITES}`, { method: 'POST', body: website('blog', { image: 'nginx', replicas: 1 }, { status: { readyReplicas: 9 } }) });
    expect(created.json.status).toBeUndefined();
    expect(created.json.metadata.generation).toBe(1);
    const status = await request(`${server.url}${WEBSITES}/blog/status`, { method: 'PUT', body: { ...created.json, spec: { image: 'ignored', replicas: 5 }, status: { readyReplicas: 1 } } });
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ spec: { image: 'nginx', replicas: 1 }, status: { readyReplicas: 1 }, metadata: { generation: 1 } });
    const labelled = await request(`${server.url}${WEBSITES}/blog`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { metadata: { labels: { a: 'b' } }, status: { readyReplicas: 7 } } });
    expect(labelled.json).toMatchObject({ status: { readyReplicas: 1 }, metadata: { generation: 1, labels: { a: 'b' } } });
    const spec = await request(`${server.url}${WEBSITES}/blog`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { replicas: 2 } } });
    expect(spec.json).toMatchObject({ spec: { replicas: 2 }, status: { readyReplicas: 1 }, metadata: { generation: 2 } });
  });
});

describe('the scale subresource', () => {
  it('reads an autoscaling/v1 Scale from the replica paths and writes spec replicas through it', async () => {
    await request(`${server.url}${WEBSITES}`, { method: 'POST', body: website('blog', { image: 'nginx', replicas: 2 }) });
    server.get<any>('example.com/v1/websites', 'default', 'blog');
    const current = server.get<any>('example.com/v1/websites', 'default', 'blog');
    await server.update('example.com/v1/websites', { ...current, status: { readyReplicas: 1, selector: 'app=blog' } });
    const scale = await request(`${server.url}${WEBSITES}/blog/scale`);
    expect(scale.json).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'blog', namespace: 'default' }, spec: { replicas: 2 }, status: { replicas: 1, selector: 'app=blog' } });
    const put = await request(`${server.url}${WEBSITES}/blog/scale`, { method: 'PUT', body: { ...scale.json, spec: { replicas: 4 } } });
    expect(put.status).toBe(200);
    expect(put.json.spec.replicas).toBe(4);
    const patched = await request(`${server.url}${WEBSITES}/blog/scale`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { replicas: 6 } } });
    expect(patched.json.spec.replicas).toBe(6);
    expect(server.get<any>('example.com/v1/websites', 'default', 'blog')).toMatchObject({ spec: { image: 'nginx', replicas: 6 }, metadata: { generation: 3 } });
    const stale = await request(`${server.url}${WEBSITES}/blog/scale`, { method: 'PUT', body: { ...scale.json, spec: { replicas: 1 } } });
    expect(stale.status).toBe(409);
    const negative = await request(`${server.url}${WEBSITES}/blog/scale`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { replicas: -1 } } });
    expect(negative.status).toBe(422);
    expect(negative.json.details.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: 'Invalid value: -1: must be greater than or equal to 0' }]);
  });

  it('is 404 for a resource whose CRD declares no scale subresource', async () => {
    const crd = websiteCrd({ plural: 'pages', kind: 'Page' });
    crd.spec.names.shortNames = [];
    delete crd.spec.versions[0].subresources.scale;
    await using other = await startApiServer({ crds: [crd] });
    await other.create('example.com/v1/pages', { metadata: { name: 'p', namespace: 'default' }, spec: { replicas: 1 } });
    expect((await request(`${other.url}/apis/example.com/v1/namespaces/default/pages/p/scale`)).status).toBe(404);
    expect((await request(`${other.url}/apis/example.com/v1/namespaces/default/pages/p/status`)).status).toBe(200);
  });
});

describe('the Table form', () => {
  it('prints Name and the printer columns, evaluating their JSON paths', async () => {
    await server.create('example.com/v1/websites', website('blog', { image: 'nginx', replicas: 3 }, { status: { conditions: [{ type: 'Synced', status: 'False' }, { type: 'Ready', status: 'True' }] } }));
    await server.create('example.com/v1/websites', website('shop', { image: 'httpd' }));
    const table = await request(`${server.url}${WEBSITES}`, { accept: TABLE });
    expect(table.status).toBe(200);
    expect(table.json).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: expect.any(String) } });
    expect(table.json.columnDefinitions.map((c: any) => [c.name, c.type, c.format, c.priority])).toEqual([
      ['Name', 'string', 'name', 0],
      ['Replicas', 'integer', '', 0],
      ['Ready', 'string', '', 0],
      ['Image', 'string', '', 1],
    ]);
    expect(table.json.rows.map((r: any) => r.cells)).toEqual([
      ['blog', 3, 'True', 'nginx'],
      ['shop', null, null, 'httpd'],
    ]);
    expect(table.json.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'blog', namespace: 'default' } });
    const one = await request(`${server.url}${WEBSITES}/shop`, { accept: TABLE });
    expect(one.json.rows.map((r: any) => r.cells[0])).toEqual(['shop']);
  });

  it('prints each watch event as a one-row Table, the column definitions in the first', async () => {
    const watch = await WireWatch.open(`${server.url}${WEBSITES}?watch=true`, { accept: TABLE });
    try {
      await server.create('example.com/v1/websites', website('blog', { image: 'nginx', replicas: 3 }));
      const blog = server.get<any>('example.com/v1/websites', 'default', 'blog');
      await server.update('example.com/v1/websites', { ...blog, spec: { ...blog.spec, replicas: 4 } });
      await watch.waitForLines(2);
      expect(watch.events.map((e) => [e.type, e.object.kind, e.object.columnDefinitions.length, e.object.rows.map((r: any) => r.cells)])).toEqual([
        ['ADDED', 'Table', 4, [['blog', 3, null, 'nginx']]],
        ['MODIFIED', 'Table', 0, [['blog', 4, null, 'nginx']]],
      ]);
    } finally {
      watch.close();
    }
  });

  it('prints CRDs themselves with Name and Created At, as the built-in printer does', async () => {
    const table = await request(`${server.url}${CRDS}`, { accept: TABLE });
    expect(table.json.columnDefinitions.map((c: any) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Created At', 'date'],
    ]);
    const crd = server.get<any>('apiextensions.k8s.io/v1/customresourcedefinitions', '', 'websites.example.com');
    expect(table.json.rows.map((r: any) => r.cells)).toEqual([['websites.example.com', crd.metadata.creationTimestamp]]);
  });

  it('prints Name and Age when the CRD gives no columns', async () => {
    await using other = await startApiServer({ crds: [websiteCrd({ columns: undefined })] });
    await other.create('example.com/v1/websites', website('blog'));
    const table = await request(`${other.url}${WEBSITES}`, { accept: TABLE });
    expect(table.json.columnDefinitions.map((c: any) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Age', 'date'],
    ]);
    expect(table.json.rows[0].cells).toEqual(['blog', expect.stringMatching(/^\d+s$/)]);
  });

  it('takes effect when the CRD changes its columns', async () => {
    await server.create('example.com/v1/websites', website('blog'));
    const crd = server.get<any>('apiextensions.k8s.io/v1/customresourcedefinitions', '', 'websites.example.com');
    crd.spec.versions[0].additionalPrinterColumns = [{ name: 'Img', type: 'string', jsonPath: '.spec.image' }];
    await server.update('apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    const table = await request(`${server.url}${WEBSITES}`, { accept: TABLE });
    expect(table.json.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Img']);
    expect(table.json.rows[0].cells).toEqual(['blog', 'nginx']);
  });
});

describe('deleting the CRD', () => {
  it('deletes its objects (watchers see DELETED and then the end), then the resource is no longer served', async () => {
    await server.create('example.com/v1/websites', website('a'));
    await server.create('example.com/v1/websites', website('b'));
    const watch = await WireWatch.open(`${server.url}/apis/example.com/v1/websites?watch=true&resourceVersion=${server.stats.resourceVersion}`);
    try {
      const res = await request(`${server.url}${CRDS}/websites.example.com`, { method: 'DELETE' });
      expect(res.status).toBe(200);
      expect(res.json.metadata.finalizers).toEqual(['customresourcecleanup.apiextensions.k8s.io']);
      expect(res.json.status.conditions).toContainEqual(expect.objectContaining({ type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending' }));
      await waitFor(() => watch.events.length >= 2, 'two DELETED events', 10_000);
      expect(watch.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['DELETED', 'a'],
        ['DELETED', 'b'],
      ]);
      // The resource is no longer served: its watches end cleanly, after their DELETED events.
      expect(await watch.waitForEnd()).toBe('end');
      await waitFor(async () => (await request(`${server.url}${CRDS}/websites.example.com`)).status === 404, 'the CRD gone');
      expect((await request(`${server.url}${WEBSITES}`)).status).toBe(404);
      expect((await request(`${server.url}/apis/example.com/v1`)).status).toBe(404);
    } finally {
      watch.close();
    }
  });

  it('waits for objects with finalizers, refusing creates meanwhile', async () => {
    await server.create('example.com/v1/websites', { ...website('held'), metadata: { name: 'held', namespace: 'default', finalizers: ['example.com/cleanup'] } });
    await request(`${server.url}${CRDS}/websites.example.com`, { method: 'DELETE' });
    await waitFor(() => server.get<any>('example.com/v1/websites', 'default', 'held')?.metadata.deletionTimestamp, 'held marked for deletion');
    const refused = await request(`${server.url}${WEBSITES}`, { method: 'POST', body: website('late') });
    expect(refused.status).toBe(405);
    expect(refused.json.message).toBe('create not allowed while custom resource definition is terminating');
    const crd = server.get<any>('apiextensions.k8s.io/v1/customresourcedefinitions', '', 'websites.example.com');
    expect(crd.status.conditions).toContainEqual(expect.objectContaining({ type: 'Terminating', reason: 'InstanceDeletionInProgress' }));
    const held = server.get<any>('example.com/v1/websites', 'default', 'held');
    await server.update('example.com/v1/websites', { ...held, metadata: { ...held.metadata, finalizers: [] } });
    await waitFor(() => server.get('apiextensions.k8s.io/v1/customresourcedefinitions', '', 'websites.example.com') === undefined, 'the CRD gone');
  });

  it('can be created again afterwards, empty', async () => {
    await server.create('example.com/v1/websites', website('a'));
    await server.delete('apiextensions.k8s.io/v1/customresourcedefinitions', '', 'websites.example.com');
    await waitFor(() => server.get('apiextensions.k8s.io/v1/customresourcedefinitions', '', 'websites.example.com') === undefined, 'the CRD gone');
    await server.create('apiextensions.k8s.io/v1/customresourcedefinitions', websiteCrd());
    expect((await request(`${server.url}${WEBSITES}`)).json.items).toEqual([]);
  });
});
