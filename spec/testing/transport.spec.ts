import { CoreV1Api } from '@kubernetes/client-node';
import { X509Certificate } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';

let server: ApiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('transport', () => {
  it('serves HTTPS with a generated CA that the kubeconfig carries', async () => {
    server = await startApiServer({ tls: true });
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = new X509Certificate(server.caPem as string);
    expect(ca.ca).toBe(true);
    expect(server.kubeConfigYaml()).toContain(`certificate-authority-data: ${Buffer.from(server.caPem as string).toString('base64')}`);
    expect(server.kubeConfigYaml()).not.toContain('insecure-skip-tls-verify');
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'a' } } });
    expect((await core.listNamespacedPod({ namespace: 'default' })).items).toHaveLength(1);
    const trusted = await request(`${server.url}/api/v1/pods`, { ca: server.caPem });
    expect(trusted.status).toBe(200);
  });

  it('is refused by a client that does not trust its CA', async () => {
    server = await startApiServer({ tls: true });
    await expect(request(`${server.url}/api/v1/pods`)).rejects.toThrow(/certificate/i);
  });

  it('requires the bearer token when one is set, answering 401 Unauthorized otherwise', async () => {
    server = await startApiServer({ token: 'sekret' });
    const anonymous = await request(`${server.url}/api/v1/pods`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
    expect((await request(`${server.url}/api/v1/pods`, { token: 'wrong' })).status).toBe(401);
    expect((await request(`${server.url}/api/v1/pods`, { token: 'sekret' })).status).toBe(200);
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    expect((await core.listPodForAllNamespaces()).items).toEqual([]);
  });

  it('streams watches over TLS with a token', async () => {
    server = await startApiServer({ tls: true, token: 't0k3n' });
    const w = await WireWatch.open(`${server.url}/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`, {
      token: 't0k3n',
      ca: server.caPem,
    });
    try {
      await server.create('v1/pods', { metadata: { name: 'a', namespace: 'default' } });
      await w.waitForLines(1);
      expect(w.events[0]?.type).toBe('ADDED');
    } finally {
      w.close();
    }
  });

  it('writes a kubeconfig YAML that client-node loads', async () => {
    server = await startApiServer({ token: 'abc' });
    const yaml = server.kubeConfigYaml();
    expect(yaml).toContain(`server: ${server.url}`);
    const kc = server.kubeConfig();
    expect(kc.getCurrentCluster()?.server).toBe(server.url);
    expect(kc.getCurrentUser()?.token).toBe('abc');
  });
});
