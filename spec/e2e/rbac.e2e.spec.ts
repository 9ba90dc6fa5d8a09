/**
 * rxkube against a second real kube-apiserver, set up the other way round from the first: RBAC
 * authorization, and the WatchList feature off as on servers older than 1.32. A user without
 * permission is told so on the status stream, the reflector keeps retrying instead of dying, and
 * it syncs as soon as a Role grants the access; a streaming list falls back to a paged one.
 */
import { CoreV1Api, RbacAuthorizationV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isForbidden, KubeApiError } from '../../src/errors/api/index.js';
import type { KubeObject } from '../../src/store/types.js';
import { startCluster, type Cluster } from './cluster.js';
import { converges, informed, mirror, type Informed } from './helpers.js';
import { waitFor } from '../helpers/waitFor.js';

let cluster: Cluster;
let reader: Informed<V1ConfigMap & KubeObject> | undefined;

beforeAll(async () => {
  cluster = await startCluster({ authorization: 'RBAC', users: [{ name: 'viewer' }], featureGates: { WatchList: false } });
});

afterAll(async () => {
  await reader?.stop();
  await cluster?.stop();
});

it('a Forbidden list is reported on status, retried, and overcome once a Role grants access', async () => {
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const ns = 'e2e-rbac';
  await core.createNamespace({ body: { metadata: { name: ns } } });
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'a' }, data: { v: '0' } } });

  const i = informed<V1ConfigMap & KubeObject>(cluster.kubeConfigFor('viewer'), 'v1/configmaps', { namespace: ns }, {
    reflector: { backoff: { initialMs: 200, maxMs: 2_000 } },
  });
  reader = i;
  const forbidden = () => i.statuses.filter((s) => (s.state === 'error' || s.state === 'backoff') && isForbidden(s.error));
  await waitFor(() => forbidden().length >= 2, 'a Forbidden on the status stream', 60_000);
  const first = forbidden()[0];
  const err = first && 'error' in first ? (first.error as KubeApiError) : undefined;
  expect(err?.status).toBe(403);
  expect(err?.reason).toBe('Forbidden');
  expect(err?.serverMessage).toContain('viewer');
  expect(i.errors.some((e) => isForbidden(e))).toBe(true);
  // Not fatal: nothing was listed, the informer still runs and is not synced.
  expect(i.events).toHaveLength(0);
  expect(i.status?.state).toBe('running');
  expect(i.informer.status().synced).toBe(false);

  const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace: ns,
    body: { metadata: { name: 'cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: ns,
    body: {
      metadata: { name: 'viewer-reads-cm' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }],
    },
  });

  await i.whenSynced(60_000);
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'b' }, data: { v: '0' } } });
  await converges(() => i.informer.store.list(), async () => (await core.listNamespacedConfigMap({ namespace: ns })).items as KubeObject[]);
  expect(i.informer.store.listKeys().sort()).toEqual([`${ns}/a`, `${ns}/b`]);
  expect(i.status?.state).toBe('running');
});

it('the same user is still refused what the Role does not grant, without disturbing the reader', async () => {
  const secrets = mirror<KubeObject>(cluster.kubeConfigFor('viewer'), 'v1/secrets', { namespace: 'e2e-rbac' }, { backoff: { initialMs: 200, maxMs: 2_000 } });
  try {
    await waitFor(() => secrets.statuses.some((s) => 'error' in s && isForbidden(s.error)), 'a Forbidden for secrets', 60_000);
    expect(secrets.failure).toBeUndefined();
    expect(reader?.statuses.at(-1)?.state).toBe('watching');
  } finally {
    secrets.stop();
  }
});

it('onTerminal can make a Forbidden final: the observable then errors with it', async () => {
  const final = mirror<KubeObject>(cluster.kubeConfigFor('viewer'), 'v1/secrets', { namespace: 'e2e-rbac' }, {
    onTerminal: (e) => isForbidden(e),
  });
  try {
    await waitFor(() => final.failure !== undefined, 'the reflector to stop on Forbidden', 60_000);
    expect(isForbidden(final.failure)).toBe(true);
  } finally {
    final.stop();
  }
});

it("initialList: 'stream' falls back to a paged list on a server without WatchList, and then watches", async () => {
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const ns = 'e2e-no-watchlist';
  await core.createNamespace({ body: { metadata: { name: ns } } });
  for (const name of ['a', 'b', 'c']) await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name }, data: { v: '0' } } });
  const list = async () => (await core.listNamespacedConfigMap({ namespace: ns })).items as KubeObject[];

  const i = informed<V1ConfigMap & KubeObject>(cluster.kubeConfig, 'v1/configmaps', { namespace: ns }, { initialList: 'stream' });
  try {
    await i.whenSynced(60_000);
    await converges(() => i.informer.store.list(), list);
    // The server answers 422 Invalid ("sendInitialEvents is forbidden for watch unless the WatchList
    // feature gate is enabled"); the reflector reports it, not as terminal, and lists page by page.
    const rejected = i.statuses.find((s) => s.state === 'error');
    if (rejected?.state !== 'error') throw new Error(`no rejection reported: ${JSON.stringify(i.statuses.map((s) => s.state))}`);
    expect(rejected.terminal).toBe(false);
    expect(rejected.error).toBeInstanceOf(KubeApiError);
    expect((rejected.error as KubeApiError).status).toBe(422);
    expect((rejected.error as KubeApiError).serverMessage).toContain('sendInitialEvents');
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'd' }, data: { v: '0' } } });
    await converges(() => i.informer.store.list(), list);
    expect(i.status?.state).toBe('running');
  } finally {
    await i.stop();
  }
});
