import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { loadKubeConfig } from '../../src/manager/kubeConfig.js';
import { isUnauthorized } from '../../src/errors/api/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';

const TOKEN = 'service-account-token-for-the-spec';
let server: ApiServer;
let dir: string;

beforeAll(async () => {
  server = await startApiServer({ port: 0, tls: true, token: TOKEN });
  await server.create('v1/configmaps', { metadata: { name: 'seen', namespace: 'team-a' }, data: {} });
  dir = await mkdtemp(join(tmpdir(), 'rxkube-sa-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** A service-account directory as the kubelet mounts it. */
async function mount(name: string, files: { token?: string; ca?: string; namespace?: string }): Promise<string> {
  const at = join(dir, name);
  await mkdir(at, { recursive: true });
  if (files.token !== undefined) await writeFile(join(at, 'token'), files.token);
  if (files.ca !== undefined) await writeFile(join(at, 'ca.crt'), files.ca);
  if (files.namespace !== undefined) await writeFile(join(at, 'namespace'), files.namespace);
  return at;
}

const inPod = () => ({ KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(server.port) });

describe('loadKubeConfig', () => {
  it('in a pod: the service address over TLS trusted by ca.crt, the token as credential, the namespace as the context namespace', async () => {
    const sa = await mount('ok', { token: TOKEN, ca: server.caPem ?? '', namespace: 'team-a' });
    const kc = loadKubeConfig({ serviceAccountDir: sa, env: inPod() });
    expect(kc.getCurrentCluster()?.server).toBe(`https://127.0.0.1:${server.port}`);
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('team-a');
    const got = await objectClient(kc, 'v1/configmaps', { namespace: 'team-a' }).get('seen');
    expect(got.metadata?.name).toBe('seen');
  });

  it('uses the token it finds: a wrong one is refused by the server', async () => {
    const sa = await mount('wrong', { token: 'not-the-token', ca: server.caPem ?? '' });
    const kc = loadKubeConfig({ serviceAccountDir: sa, env: inPod() });
    await expect(objectClient(kc, 'v1/configmaps', { namespace: 'team-a' }).get('seen')).rejects.toSatisfy(isUnauthorized);
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBeUndefined();
  });

  it('in a pod without a mounted token, names the missing file at once', async () => {
    const sa = await mount('empty', { ca: server.caPem ?? '' });
    expect(() => loadKubeConfig({ serviceAccountDir: sa, env: inPod() })).toThrow(`${join(sa, 'token')} does not exist; is a service account token mounted?`);
  });

  it('brackets an IPv6 service host and rejects a port that is not one', async () => {
    const sa = await mount('v6', { token: TOKEN, ca: server.caPem ?? '' });
    expect(loadKubeConfig({ serviceAccountDir: sa, env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' } }).getCurrentCluster()?.server).toBe('https://[fd00::1]:443');
    expect(() => loadKubeConfig({ serviceAccountDir: sa, env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: 'https' } })).toThrow(/KUBERNETES_SERVICE_PORT is "https", not a port number/);
  });

  it('outside a pod, loads the files of KUBECONFIG, and the kubeconfig option before them', async () => {
    const file = join(dir, 'kubeconfig');
    await writeFile(file, server.kubeConfigYaml());
    expect(loadKubeConfig({ env: { KUBECONFIG: file } }).getCurrentCluster()?.server).toBe(server.url);
    // The option wins over KUBECONFIG and over the pod's own configuration.
    expect(loadKubeConfig({ kubeconfig: file, env: { KUBECONFIG: join(dir, 'nope'), ...inPod() } }).getCurrentCluster()?.server).toBe(server.url);
  });

  it('names what is wrong at once, in one line: a missing or malformed file, an unknown context, nothing at all', async () => {
    const missing = join(dir, 'no-such-kubeconfig');
    expect(() => loadKubeConfig({ kubeconfig: missing })).toThrow(`loadKubeConfig: option "kubeconfig": ${missing} does not exist`);
    expect(() => loadKubeConfig({ env: { KUBECONFIG: missing } })).toThrow(`KUBECONFIG: ${missing} does not exist`);
    const bad = join(dir, 'bad-kubeconfig');
    await writeFile(bad, 'clusters: [');
    expect(() => loadKubeConfig({ kubeconfig: bad })).toThrow(new RegExp(`^loadKubeConfig: option "kubeconfig": ${bad} is not a valid kubeconfig: \\S`));
    const file = join(dir, 'kubeconfig-ctx');
    await writeFile(file, server.kubeConfigYaml());
    const kc = loadKubeConfig({ kubeconfig: file });
    expect(() => loadKubeConfig({ kubeconfig: file, context: 'nosuch' })).toThrow(`loadKubeConfig: option "context": no context "nosuch" in the kubeconfig (it has: ${kc.getCurrentContext()})`);
    expect(loadKubeConfig({ kubeconfig: file, context: kc.getCurrentContext() }).getCurrentCluster()?.server).toBe(server.url);
    // No KUBECONFIG, not a pod, and a home without ~/.kube/config: client-node would try localhost:8080 in silence.
    const home = process.env['HOME'];
    process.env['HOME'] = await mkdtemp(join(dir, 'home-'));
    try {
      expect(() => loadKubeConfig({ env: {} })).toThrow(/^loadKubeConfig: no kubeconfig: .*\.kube\/config does not exist, KUBECONFIG is not set, and this is not a pod/);
    } finally {
      if (home === undefined) delete process.env['HOME'];
      else process.env['HOME'] = home;
    }
  });

  it('rejects a service-account directory, kubeconfig or context that is not a non-empty string', () => {
    expect(() => loadKubeConfig({ serviceAccountDir: '' })).toThrow(/option "serviceAccountDir" must be a non-empty string, got ""/);
    expect(() => loadKubeConfig({ kubeconfig: '' })).toThrow(/option "kubeconfig" must be a non-empty string, got ""/);
    expect(() => loadKubeConfig({ context: 7 as unknown as string })).toThrow(/option "context" must be a non-empty string, got 7/);
  });
});
