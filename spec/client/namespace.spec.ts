import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound, objectClient, type KubeObject } from '../../src/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';

let server: ApiServer;
const websites = { group: 'example.com', version: 'v1', plural: 'websites', namespaced: true } as const;
beforeAll(async () => {
  server = await startApiServer();
  server.registerResource({ ...websites, kind: 'Website', subresources: { status: {} } });
});
afterAll(async () => {
  await server.close();
});

const site = (name: string, namespace?: string) => ({
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: { name, ...(namespace !== undefined && { namespace }) } as { name: string; namespace?: string },
  spec: { image: 'nginx' },
});

describe('objectClient without a namespace on a namespaced resource (CR-110…CR-112)', () => {
  it("writes each object to its own metadata.namespace: create, replace, apply, status, delete", async () => {
    const all = objectClient(server.kubeConfig(), websites);
    const created = await all.create(site('a', 'team-a'));
    expect(created.metadata?.namespace).toBe('team-a');
    const applied = await all.apply({ ...site('b', 'team-b') });
    expect(applied.metadata?.namespace).toBe('team-b');
    const replaced = await all.replace({ ...created, spec: { image: 'httpd' } } as KubeObject);
    expect((replaced as { spec?: { image?: string } }).spec?.image).toBe('httpd');
    const status = await all.applyStatus({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'a', namespace: 'team-a' }, status: { ready: true } }, { fieldManager: 'ctl' });
    expect((status as { status?: unknown }).status).toEqual({ ready: true });
    const replacedStatus = await all.replaceStatus({ ...status, status: { ready: false } } as KubeObject);
    expect((replacedStatus as { status?: unknown }).status).toEqual({ ready: false });
    // Each went to its namespace, as a namespaced client reads them back.
    expect((await objectClient(server.kubeConfig(), websites, { namespace: 'team-b' }).get('b')).metadata?.name).toBe('b');
    await all.delete(replacedStatus);
    await all.delete(applied);
    const gone = await objectClient(server.kubeConfig(), websites, { namespace: 'team-a' }).get('a').catch((e: unknown) => e);
    expect(isNotFound(gone)).toBe(true);
    // And list reads every namespace.
    await all.create(site('c', 'team-c'));
    expect((await all.list()).items.map((w) => w.metadata?.namespace)).toContain('team-c');
  });

  it('names the mistake when neither the client nor the object has a namespace, before any request', () => {
    const before = server.stats.requests;
    const all = objectClient(server.kubeConfig(), websites);
    const message = "objectClient(kc, 'example.com/v1/websites'): a namespaced resource needs a namespace: pass { namespace } or set metadata.namespace";
    expect(() => all.create(site('x'))).toThrow(`create example.com/v1/websites x: ${message}`);
    expect(() => all.apply(site('x'))).toThrow(`apply example.com/v1/websites x: ${message}`);
    expect(() => all.replace(site('x'))).toThrow(message);
    expect(() => all.replaceStatus(site('x'))).toThrow(message);
    expect(() => all.applyStatus(site('x'))).toThrow(`apply status of example.com/v1/websites x: ${message}`);
    expect(() => all.delete(site('x'))).toThrow(message);
    // A call by name alone has no object to take it from.
    const byName = "objectClient(kc, 'example.com/v1/websites'): a namespaced resource needs a namespace: pass { namespace }";
    expect(() => all.get('x')).toThrow(`get example.com/v1/websites x: ${byName}`);
    expect(() => all.get('x')).not.toThrow(/metadata\.namespace/);
    expect(() => all.patch('x', {})).toThrow(byName);
    expect(() => all.delete('x')).toThrow(byName);
    expect(() => all.getStatus('x')).toThrow(byName);
    expect(() => all.patchStatus('x', {})).toThrow(byName);
    expect(() => objectClient(server.kubeConfig(), 'v1/configmaps').get('x')).toThrow("get v1/configmaps x: objectClient(kc, 'v1/configmaps'): a namespaced resource");
    expect(server.stats.requests).toBe(before);
  });

  it("refuses an object whose namespace differs from the client's, as kube-apiserver would", () => {
    const before = server.stats.requests;
    const teamA = objectClient(server.kubeConfig(), websites, { namespace: 'team-a' });
    const agree = "the object's metadata.namespace \"team-b\" is not the client's namespace \"team-a\"";
    expect(() => teamA.create(site('x', 'team-b'))).toThrow(`create example.com/v1/websites team-a/x: ${agree}`);
    expect(() => teamA.apply(site('x', 'team-b'))).toThrow(agree);
    expect(() => teamA.replace(site('x', 'team-b'))).toThrow(agree);
    expect(() => teamA.replaceStatus(site('x', 'team-b'))).toThrow(agree);
    expect(() => teamA.delete(site('x', 'team-b'))).toThrow(agree);
    expect(() => teamA.create({ ...site('x'), metadata: { name: 'x', namespace: '' } })).toThrow(/metadata.namespace: expected a non-empty string, got ""/);
    expect(() => objectClient(server.kubeConfig(), 'v1/namespaces').create({ metadata: { name: 'n', namespace: 'x' } })).toThrow(/v1\/namespaces is cluster-scoped, got namespace "x"/);
    expect(server.stats.requests).toBe(before);
  });

  it('a client with a namespace writes objects that carry the same one, or none', async () => {
    const teamD = objectClient(server.kubeConfig(), websites, { namespace: 'team-d' });
    expect((await teamD.create(site('same', 'team-d'))).metadata?.namespace).toBe('team-d');
    expect((await teamD.create(site('none'))).metadata?.namespace).toBe('team-d');
  });
});
