/**
 * The transport against a real kube-apiserver: a process with several informers and a controller
 * writing holds a handful of connections at most (kube-apiserver offers HTTP/2, so one carries
 * everything), and a client certificate rewritten on disk is used from the next request on, while
 * requests already running finish on the old connection.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, type V1ConfigMap, type V1Deployment } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendJson } from '../../src/client/request.js';
import { objectClient } from '../../src/client/objectClient.js';
import { isAlreadyExists } from '../../src/errors/api/index.js';
import { controller } from '../../src/controller/controller.js';
import { informer, type Informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { KubeObject } from '../../src/store/types.js';
import { pools } from '../../src/transport/pool.js';
import { waitFor } from '../helpers/waitFor.js';
import { certFileKubeConfig, issueClientCertificate } from './clientCerts.js';
import { startCluster, type Cluster } from './cluster.js';

const NS = 'transport-e2e';
let cluster: Cluster;
let dir: string;
/** What the tests started, ended at the end. */
const subscriptions: Subscription[] = [];

beforeAll(async () => {
  cluster = await startCluster();
  dir = mkdtempSync(join(tmpdir(), 'rxkube-e2e-transport-'));
  await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
});

afterAll(async () => {
  for (const s of subscriptions) s.unsubscribe();
  await cluster?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function deployment(name: string): V1Deployment {
  const labels = { app: name };
  return {
    metadata: { name, namespace: NS },
    spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }] } } },
  };
}

describe('connections to a real kube-apiserver', () => {
  it('several informers and a controller writing share a handful of connections at most', async () => {
    const proxy = await cluster.startProxy();
    const kc = proxy.kubeConfig();
    const deployments = informer(kubeSource(kc, 'apps/v1/deployments', { namespace: NS }));
    const configMaps = informer(kubeSource(kc, 'v1/configmaps', { namespace: NS }));
    const others = (['v1/pods', 'v1/secrets', 'v1/services', 'v1/namespaces'] as const).map((r) => informer(kubeSource(kc, r)) as unknown as Informer<KubeObject>);
    const cms = objectClient(kc, 'v1/configmaps', { namespace: NS });
    const c = controller({
      for: deployments,
      owns: [{ source: configMaps, kind: 'Deployment', apiVersion: 'apps/v1' }],
      reconcile: async (d: V1Deployment) => {
        const name = `${d.metadata?.name ?? ''}-info`;
        const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata?.name ?? '', uid: d.metadata?.uid ?? '', controller: true };
        try {
          await cms.create({ metadata: { name, ownerReferences: [owner] }, data: { replicas: String(d.spec?.replicas) } });
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          await cms.patch(name, { data: { replicas: String(d.spec?.replicas) } });
        }
        return undefined;
      },
      concurrency: 4,
    });
    subscriptions.push(c.subscribe(), ...others.map((i) => i.subscribe()));

    const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
    for (let i = 0; i < 20; i++) await apps.createNamespacedDeployment({ namespace: NS, body: deployment(`d${i}`) });
    for (let i = 0; i < 20; i += 2) {
      await apps.patchNamespacedDeployment({ name: `d${i}`, namespace: NS, body: [{ op: 'replace', path: '/spec/replicas', value: 3 }] });
    }
    await waitFor(() => {
      const written = configMaps.store.list().filter((cm) => (cm as V1ConfigMap).metadata?.name?.endsWith('-info'));
      return written.length === 20 && written.filter((cm) => (cm as V1ConfigMap).data?.['replicas'] === '3').length === 10;
    }, 'the controller to write twenty ConfigMaps and update ten', 60_000);
    // Six watches, four lists of all objects, and thirty writes: over HTTP/2, one connection carries them all.
    expect(proxy.accepted).toBeLessThanOrEqual(2);
    expect(pools.size).toBe(1);
  });
});

describe('a rotated client certificate', () => {
  async function whoami(kc: Parameters<typeof sendJson>[0]): Promise<string | undefined> {
    const review = await sendJson<{ status?: { userInfo?: { username?: string } } }>(kc, {
      verb: 'POST',
      url: `${cluster.server}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      what: 'create selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      signal: undefined,
      timeoutMs: 10_000,
    });
    return review.status?.userInfo?.username;
  }

  /** Replaces both files the way a rotation does: written beside, then renamed over. */
  function install(cert: { certPem: string; keyPem: string }, certFile: string, keyFile: string): void {
    writeFileSync(`${keyFile}.new`, cert.keyPem);
    writeFileSync(`${certFile}.new`, cert.certPem);
    renameSync(`${keyFile}.new`, keyFile);
    renameSync(`${certFile}.new`, certFile);
  }

  it('is used from the next request on, without a restart, while the running watch finishes on the old connection', async () => {
    for (const s of subscriptions.splice(0)) s.unsubscribe();
    await waitFor(() => pools.size === 0, 'the first test to let go of its pool');
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    install(await issueClientCertificate(cluster, 'alice'), certFile, keyFile);
    const kc = await certFileKubeConfig(cluster, cluster.server, certFile, keyFile);
    expect(await whoami(kc)).toBe('alice');

    const watched = informer(kubeSource(kc, 'v1/configmaps', { namespace: NS }));
    const watching = watched.subscribe();
    await watched.whenSynced({ timeout: 30_000 });

    install(await issueClientCertificate(cluster, 'bob'), certFile, keyFile);
    expect(await whoami(kc)).toBe('bob');
    // The watch opened as alice still delivers: requests under way are not cut by a rotation.
    await objectClient(cluster.kubeConfig, 'v1/configmaps', { namespace: NS }).create({ metadata: { name: 'after-rotation' } });
    await waitFor(() => watched.store.getByKey(`${NS}/after-rotation`) !== undefined, 'the watch to deliver after the rotation', 30_000);
    // Only the watch's pool is left: the one bob's request used closed when it ended.
    await waitFor(() => pools.size === 1, 'the new pool to close after its request');
    watching.unsubscribe();
    await waitFor(() => pools.size === 0, 'the old pool to close with its watch');
  });
});
