import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';
import { waitFor } from '../helpers/waitFor.js';

let server: ApiServer;
const open: WireWatch[] = [];

beforeEach(async () => {
  server = await startApiServer();
});
afterEach(async () => {
  for (const w of open.splice(0)) w.close();
  await server.close();
});

const POM = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const POML = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
// What client-go's metadata client sends for a list.
const CLIENT_GO_LIST = `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,${POML},application/json`;
const NOT_ACCEPTABLE = 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';

const pod = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, namespace: 'default', labels, annotations: { note: name } },
  spec: { containers: [{ name: 'c', image: 'secret-image' }] },
});

function partialOf(obj: any, apiVersion = 'meta.k8s.io/v1') {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata };
}

async function watch(path: string, accept: string): Promise<WireWatch> {
  const w = await WireWatch.open(`${server.url}${path}`, { accept });
  open.push(w);
  return w;
}

describe('PartialObjectMetadata', () => {
  it('GET answers the object as PartialObjectMetadata carrying its whole metadata', async () => {
    await server.create('v1/pods', pod('a', { app: 'web' }));
    const full = server.get('v1/pods', 'default', 'a');
    const res = await request(`${server.url}/api/v1/namespaces/default/pods/a`, { accept: POM });
    expect(res.status).toBe(200);
    expect(res.json).toEqual(partialOf(full));
    expect(res.text).not.toContain('secret-image');
  });

  it('LIST answers a PartialObjectMetadataList with the list metadata of every page', async () => {
    for (const n of ['a', 'b', 'c']) await server.create('v1/pods', pod(n));
    const full = server.list('v1/pods');
    const first = await request(`${server.url}/api/v1/pods?limit=2`, { accept: CLIENT_GO_LIST });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: server.resourceVersion(), continue: expect.any(String), remainingItemCount: 1 },
      items: full.slice(0, 2).map((p) => partialOf(p)),
    });
    const rest = await request(`${server.url}/api/v1/pods?limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`, { accept: POML });
    expect(rest.json).toEqual({
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: server.resourceVersion() },
      items: [partialOf(full[2])],
    });
  });

  it('serves meta.k8s.io/v1beta1 when asked for it', async () => {
    await server.create('v1/pods', pod('a'));
    const res = await request(`${server.url}/api/v1/pods`, { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1' });
    expect(res.json.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect(res.json.items[0]).toEqual(partialOf(server.get('v1/pods', 'default', 'a'), 'meta.k8s.io/v1beta1'));
  });

  it('WATCH sends PartialObjectMetadata in every event and in bookmarks, and Status objects unconverted', async () => {
    await server.close();
    server = await startApiServer({ bookmarkIntervalMs: 20 });
    await server.create('v1/pods', pod('a', { app: 'web' }));
    const w = await watch(`/api/v1/pods?watch=true&allowWatchBookmarks=true&labelSelector=app%3Dweb`, POM);
    await w.waitForLines(1);
    await server.patch('v1/pods', 'default', 'a', { metadata: { annotations: { note: 'changed' } } });
    await server.create('v1/pods', pod('b', { app: 'web' }));
    await server.patch('v1/pods', 'default', 'b', { metadata: { labels: { app: 'other' } } });
    await server.delete('v1/pods', 'default', 'a');
    // A bookmark goes out once the resourceVersion moved past what the watcher was sent.
    await server.create('v1/configmaps', { metadata: { name: 'elsewhere', namespace: 'default' } });
    await waitFor(() => w.events.some((e) => e.type === 'BOOKMARK'), 'a bookmark', 5_000);
    const objectEvents = w.events.filter((e) => e.type !== 'BOOKMARK');
    expect(objectEvents.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED a', 'MODIFIED a', 'ADDED b', 'DELETED b', 'DELETED a']);
    for (const e of w.events) {
      expect(e.object.kind).toBe('PartialObjectMetadata');
      expect(e.object.apiVersion).toBe('meta.k8s.io/v1');
      expect(Object.keys(e.object)).toEqual(['kind', 'apiVersion', 'metadata']);
    }
    expect(objectEvents[1]?.object.metadata.annotations).toEqual({ note: 'changed' });
    // Leaving the selector: the previous metadata, stamped with the resourceVersion of the change.
    expect(objectEvents[3]?.object.metadata.labels).toEqual({ app: 'web' });
    const bookmark = w.events.find((e) => e.type === 'BOOKMARK');
    expect(bookmark?.object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: expect.any(String) } });

    server.compact();
    const expired = await watch(`/api/v1/pods?watch=true&resourceVersion=1`, POM);
    await expired.waitForLines(1);
    expect(expired.events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });

  it('a watch-list ends its initial events with an annotated PartialObjectMetadata bookmark', async () => {
    await server.create('v1/pods', pod('a'));
    const w = await watch('/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true', POM);
    await w.waitForLines(2);
    expect(w.events[0]).toEqual({ type: 'ADDED', object: partialOf(server.get('v1/pods', 'default', 'a')) });
    expect(w.events[1]).toEqual({
      type: 'BOOKMARK',
      object: {
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: server.resourceVersion(), annotations: { 'k8s.io/initial-events-end': 'true' } },
      },
    });
  });

  it('a watch asking for the list kind gets the objects unconverted, as kube-apiserver falls back per event', async () => {
    const w = await watch(`/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`, POML);
    await server.create('v1/pods', pod('a'));
    await w.waitForLines(1);
    expect(w.events[0]?.object.kind).toBe('Pod');
  });

  it('writes answer in the negotiated form too', async () => {
    const created = await request(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: pod('a'), accept: POM });
    expect(created.status).toBe(201);
    expect(created.json.kind).toBe('PartialObjectMetadata');
    const patched = await request(`${server.url}/api/v1/namespaces/default/pods/a`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { x: 'y' } } },
      accept: POM,
    });
    expect(patched.json).toEqual(partialOf(server.get('v1/pods', 'default', 'a')));
  });
});

describe('content negotiation', () => {
  it('an object conversion of a list, or a list conversion of an object, is 406 NotAcceptable', async () => {
    await server.create('v1/pods', pod('a'));
    const list = await request(`${server.url}/api/v1/pods`, { accept: POM });
    expect(list.status).toBe(406);
    expect(list.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)',
      reason: 'NotAcceptable',
      code: 406,
    });
    const one = await request(`${server.url}/api/v1/namespaces/default/pods/a`, { accept: POML });
    expect(one.status).toBe(406);
    expect(one.json.message).toBe('you requested PartialObjectMetadataList, but the requested object is not a list (*core.Pod)');
    const lease = await request(`${server.url}/apis/coordination.k8s.io/v1/leases`, { accept: POM });
    expect(lease.json.message).toContain('(*coordination.LeaseList)');
  });

  it('an Accept nothing can satisfy is 406 before the request is performed', async () => {
    for (const accept of ['text/plain', 'application/json;as=PartialObjectMetadata', 'application/json;as=Foo;g=meta.k8s.io;v=v1', 'application/yaml;stream=watch']) {
      const res = await request(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: pod('never'), accept });
      expect(res.status, accept).toBe(406);
      expect(res.json, accept).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: NOT_ACCEPTABLE, reason: 'NotAcceptable', code: 406 });
    }
    expect(server.get('v1/pods', 'default', 'never')).toBeUndefined();
    const w = await request(`${server.url}/api/v1/pods?watch=true`, { accept: 'text/html' });
    expect(w.status).toBe(406);
    expect(w.json.message).toBe(NOT_ACCEPTABLE);
    // YAML has no streaming form: a watch negotiated to it is refused, naming the streaming types.
    const yaml = await request(`${server.url}/api/v1/pods?watch=true`, { accept: 'application/yaml' });
    expect(yaml.status).toBe(406);
    expect(yaml.json.message).toBe('only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch');
    expect((await request(`${server.url}/api/v1/pods?watch=true&timeoutSeconds=1`, { accept: 'application/json;stream=watch' })).status).toBe(200);
  });

  it('falls through to the next clause, honours q, and treats wildcards, YAML, protobuf and Table as JSON objects', async () => {
    await server.create('v1/pods', pod('a'));
    const url = `${server.url}/api/v1/pods`;
    expect((await request(url, { accept: `text/plain,${POML}` })).json.kind).toBe('PartialObjectMetadataList');
    expect((await request(url, { accept: `${POML};q=0.5,application/json` })).json.kind).toBe('PodList');
    expect((await request(url, { accept: `application/json;q=0.5,${POML}` })).json.kind).toBe('PartialObjectMetadataList');
    for (const accept of ['*/*', 'application/*', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/json;as=Table;g=meta.k8s.io;v=v1', '']) {
      const res = await request(url, { accept });
      expect(res.status, accept).toBe(200);
      expect(res.json.kind, accept).toBe('PodList');
    }
  });

  it('custom resources have no protobuf encoding', async () => {
    server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget' });
    const url = `${server.url}/apis/example.com/v1/widgets`;
    expect((await request(url, { accept: 'application/vnd.kubernetes.protobuf' })).status).toBe(406);
    const res = await request(url, { accept: POM });
    expect(res.json.message).toBe('you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)');
  });

  it('errors stay Status objects whatever was asked', async () => {
    const res = await request(`${server.url}/api/v1/namespaces/default/pods/missing`, { accept: POM });
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'NotFound' });
  });
});
