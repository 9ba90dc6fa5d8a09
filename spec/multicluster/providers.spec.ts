import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClusterError } from '../../src/multicluster/ClusterError.js';
import { SharedInformer } from '../../src/informer/SharedInformer.js';
import { kubeconfigClusters } from '../../src/multicluster/kubeconfigClusters.js';
import { multiClusterInformer } from '../../src/multicluster/multiClusterInformer.js';
import { secretClusters } from '../../src/multicluster/secretClusters.js';
import type { Cluster } from '../../src/multicluster/types.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(): Promise<ApiServer> {
  const s = await startApiServer({ port: 0 });
  cleanups.push(() => s.close());
  return s;
}

/** A kubeconfig with one context (and cluster, and user) per entry. */
function kubeconfigYaml(contexts: Record<string, { url: string; token?: string }>): string {
  const entries = Object.entries(contexts);
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    ...entries.flatMap(([n, c]) => [`- name: ${n}`, '  cluster:', `    server: ${c.url}`, '    insecure-skip-tls-verify: true']),
    'users:',
    ...entries.flatMap(([n, c]) => [`- name: ${n}`, c.token === undefined ? '  user: {}' : `  user:\n    token: ${c.token}`]),
    'contexts:',
    ...entries.flatMap(([n]) => [`- name: ${n}`, '  context:', `    cluster: ${n}`, `    user: ${n}`]),
    `current-context: ${entries[0]?.[0] ?? ''}`,
    '',
  ].join('\n');
}

/** Subscribes for the test's length and keeps every set given. */
function sets(provider: ReturnType<typeof kubeconfigClusters>): (readonly Cluster[])[] {
  const seen: (readonly Cluster[])[] = [];
  const sub: Subscription = provider.subscribe((s) => seen.push(s));
  cleanups.push(() => sub.unsubscribe());
  return seen;
}

const names = (set: readonly Cluster[] | undefined): string[] => (set ?? []).map((c) => c.name).sort();

describe('kubeconfigClusters', () => {
  it("gives the chosen contexts, each a KubeConfig of its own, and follows the file as it is rewritten", async () => {
    const [a, b, c] = [await server(), await server(), await server()];
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-kc-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'config');
    writeFileSync(file, kubeconfigYaml({ a: { url: a.url }, b: { url: b.url } }));
    const errors: Error[] = [];
    const seen = sets(kubeconfigClusters({ path: file, debounceMs: 20, onError: (e) => errors.push(e) }));
    expect(names(seen[0])).toEqual(['a', 'b']);
    const first = seen[0]?.find((x) => x.name === 'b')?.kubeConfig;
    expect(first?.getCurrentContext()).toBe('b');
    expect(first?.getCurrentCluster()?.server).toBe(b.url);

    // Written elsewhere and renamed over the file, as editors and kubectl do.
    writeFileSync(`${file}.tmp`, kubeconfigYaml({ b: { url: b.url }, c: { url: c.url } }));
    renameSync(`${file}.tmp`, file);
    await waitFor(() => names(seen.at(-1)).join() === 'b,c', 'the rewritten file to be read');
    expect(errors).toEqual([]);

    // A file that does not parse is reported; the last set stays.
    const count = seen.length;
    writeFileSync(file, 'clusters: [ {');
    await waitFor(() => errors.length > 0, 'the read error');
    expect(seen).toHaveLength(count);
    expect(errors[0]?.message).toMatch(/could not read .*config.*the last set is kept/);
  });

  it('chooses contexts by name or predicate, reports a name it cannot find, and reads nothing until subscribed', async () => {
    const [a, b] = [await server(), await server()];
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-kc-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'config');
    const errors: Error[] = [];
    const byName = kubeconfigClusters({ path: file, contexts: ['b', 'zz'], watch: false, onError: (e) => errors.push(e) });
    // The file does not exist yet: nothing was read when the provider was made.
    writeFileSync(file, kubeconfigYaml({ a: { url: a.url }, b: { url: b.url } }));
    expect(names(sets(byName)[0])).toEqual(['b']);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/no context "zz"/)]);
    expect(names(sets(kubeconfigClusters({ path: file, contexts: (ctx) => ctx.name === 'a', watch: false }))[0])).toEqual(['a']);
  });

  it('a missing file gives an empty set (reported) until it appears', async () => {
    const a = await server();
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-kc-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'config');
    const errors: Error[] = [];
    const seen = sets(kubeconfigClusters({ path: file, debounceMs: 20, onError: (e) => errors.push(e) }));
    expect(seen).toEqual([[]]);
    expect(errors[0]?.message).toMatch(/no clusters until it can be read/);
    writeFileSync(file, kubeconfigYaml({ a: { url: a.url } }));
    await waitFor(() => names(seen.at(-1)).join() === 'a', 'the new file to be read');
  });

  it('with watch: false reads the files anew at each run, so a run after every subscriber left sees the file as it is now', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-kc-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'config');
    const errors: Error[] = [];
    const clusters = kubeconfigClusters({ path: file, watch: false, onError: (e) => errors.push(e) });
    const seen: (readonly Cluster[])[] = [];
    clusters.subscribe((s) => seen.push(s)).unsubscribe(); // missing at this run: reported, empty set
    expect(seen).toEqual([[]]);
    expect(errors).toHaveLength(1);
    writeFileSync(file, kubeconfigYaml({ a: { url: 'https://127.0.0.1:1' } }));
    clusters.subscribe((s) => seen.push(s)).unsubscribe();
    writeFileSync(file, kubeconfigYaml({ b: { url: 'https://127.0.0.1:1' } }));
    clusters.subscribe((s) => seen.push(s)).unsubscribe();
    expect(seen.slice(1).map(names)).toEqual([['a'], ['b']]);
  });

  it('checks its options up front', () => {
    expect(() => kubeconfigClusters({ path: [] })).toThrow(/"path" must be a file path or a non-empty list/);
    expect(() => kubeconfigClusters({ contexts: 'a' as never })).toThrow(/"contexts" must be a list of context names or a predicate, got "a"/);
    expect(() => kubeconfigClusters({ debounceMs: -5 })).toThrow(/debounceMs.*-5/);
    expect(() => kubeconfigClusters({ watch: 'yes' as never })).toThrow(/"watch" must be a boolean, got "yes"/);
    expect(() => kubeconfigClusters({ watsh: true } as never)).toThrow(/unknown option "watsh"/);
  });
});

describe('secretClusters', () => {
  const secret = (name: string, data: Record<string, string>, labels: Record<string, string> = { member: 'true' }): V1Secret => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'fleet', labels },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  });

  it('follows kubeconfig Secrets on a hub: created joins, rewritten replaces, deleted leaves, unreadable is reported', async () => {
    const [hub, m1, m2] = [await server(), await server(), await server()];
    await m1.create('v1/pods', pod('in-m1'));
    await m2.create('v1/pods', pod('in-m2'));
    await hub.create('v1/secrets', secret('m1', { kubeconfig: m1.kubeConfigYaml() }));
    await hub.create('v1/secrets', secret('not-a-member', { kubeconfig: m2.kubeConfigYaml() }, {}));
    const errors: Error[] = [];
    const members = secretClusters(hub.kubeConfig(), { namespace: 'fleet', labelSelector: 'member=true', onError: (e) => errors.push(e) });
    const pods = multiClusterInformer(members, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { onError: () => {} });
    const sub = pods.subscribe();
    cleanups.push(() => sub.unsubscribe());
    await pods.whenSynced({ timeout: 10_000 });
    expect(pods.store.listKeys()).toEqual(['m1/default/in-m1']);

    // Cluster API's key, and a name taken from a label.
    await hub.create('v1/secrets', secret('m2-kubeconfig', { value: m2.kubeConfigYaml() }, { member: 'true', 'cluster-name': 'second' }));
    await waitFor(() => pods.store.getByKey('m2-kubeconfig/default/in-m2'), 'the second member to join');

    await hub.create('v1/secrets', secret('broken', { kubeconfig: 'clusters: nope' }));
    await waitFor(() => errors.some((e) => e instanceof ClusterError && e.cluster === 'broken'), 'the unreadable Secret to be reported');

    // m1's Secret now points at m2's server: the cluster is replaced, and only the difference is told.
    const s1 = hub.get<V1Secret>('v1/secrets', 'fleet', 'm1');
    await hub.update('v1/secrets', { ...s1, data: { kubeconfig: Buffer.from(m2.kubeConfigYaml()).toString('base64') } });
    await waitFor(() => pods.store.getByKey('m1/default/in-m2') !== undefined && pods.store.getByKey('m1/default/in-m1') === undefined, 'm1 to be replaced');

    await hub.delete('v1/secrets', 'fleet', 'm1');
    await waitFor(() => pods.store.listKeys().join() === 'm2-kubeconfig/default/in-m2', 'm1 to leave');
  });

  it('refuses a kubeconfig that names a command or a file of this machine unless allowLocalCredentials is set (HI-49)', async () => {
    const [hub, m] = [await server(), await server()];
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-local-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // This pod's own token, as a ServiceAccount's would be mounted; a Secret's kubeconfig points a member at it.
    const own = join(dir, 'token');
    writeFileSync(own, 'this-pods-own-token');
    const marker = join(dir, 'ran');
    const base = m.kubeConfigYaml();
    const withUser = (user: string): string => base.replace(/^( {2}user:)(?: \{\})?$/m, `$1\n${user}`);
    expect(withUser('    token-file: x')).not.toBe(base);
    await hub.create('v1/secrets', secret('reads-a-file', { kubeconfig: withUser(`    token-file: ${own}`) }));
    await hub.create('v1/secrets', secret('runs-a-command', { kubeconfig: withUser(`    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: sh\n      args: ['-c', 'touch ${marker}']`) }));
    await hub.create('v1/secrets', secret('plain', { kubeconfig: base }));
    const errors: Error[] = [];
    const seen = sets(secretClusters(hub.kubeConfig(), { namespace: 'fleet', onError: (e) => errors.push(e) }));
    await waitFor(() => seen.length > 0, 'the first set');
    expect(names(seen.at(-1))).toEqual(['plain']);
    const refused = errors.filter((e): e is ClusterError => e instanceof ClusterError).map((e) => [e.cluster, e.message] as const);
    expect(refused).toEqual(
      expect.arrayContaining([
        ['reads-a-file', expect.stringMatching(/names what is on this machine \(users\[0\]\.user\.token-file\)/)],
        ['runs-a-command', expect.stringMatching(/users\[0\]\.user\.exec/)],
      ]),
    );
    expect(JSON.stringify(errors.map((e) => [e.message, String(e.cause)]))).not.toContain(own);

    // Opted in, the same Secrets are clusters: their writers are trusted as much as this pod.
    const trusted = sets(secretClusters(hub.kubeConfig(), { namespace: 'fleet', allowLocalCredentials: true, onError: () => {} }));
    await waitFor(() => trusted.length > 0, 'the trusted set');
    expect(names(trusted.at(-1))).toEqual(['plain', 'reads-a-file', 'runs-a-command']);
    expect(() => secretClusters(hub.kubeConfig(), { namespace: 'fleet', allowLocalCredentials: 'yes' as never })).toThrow(/"allowLocalCredentials" must be a boolean, got "yes"/);
  });

  it('reads the Secrets informer\'s sync from its status$, not from a whole status() per Secret event', async () => {
    const [hub, m] = [await server(), await server()];
    const statusReads = vi.spyOn(SharedInformer.prototype, 'status');
    cleanups.push(() => statusReads.mockRestore());
    const seen = sets(secretClusters(hub.kubeConfig(), { namespace: 'fleet' }));
    await waitFor(() => seen.length > 0, 'the first (empty) set');
    for (let i = 0; i < 10; i++) await hub.create('v1/secrets', secret(`m${i}`, { kubeconfig: m.kubeConfigYaml() }));
    await waitFor(() => names(seen.at(-1)).length === 10, 'ten clusters, one Secret event each');
    expect(statusReads).not.toHaveBeenCalled();
  });

  it('names clusters with clusterName, and checks its options up front', async () => {
    const [hub, m] = [await server(), await server()];
    await hub.create('v1/secrets', secret('x-kubeconfig', { value: m.kubeConfigYaml() }, { member: 'true', 'cluster-name': 'x' }));
    const seen = sets(secretClusters(hub.kubeConfig(), { namespace: 'fleet', keys: ['value'], clusterName: (s) => s.metadata?.labels?.['cluster-name'] }));
    await waitFor(() => seen.length > 0, 'the first set');
    expect(names(seen[0])).toEqual(['x']);
    expect(() => secretClusters(hub.kubeConfig(), {} as never)).toThrow(/"namespace" must be a non-empty string/);
    expect(() => secretClusters(hub.kubeConfig(), { namespace: 'fleet', labelSelector: 'a in (' })).toThrow();
    expect(() => secretClusters(hub.kubeConfig(), { namespace: 'fleet', keys: [] })).toThrow(/"keys" must be a non-empty list/);
    expect(() => secretClusters({} as never, { namespace: 'fleet' })).toThrow(/hub must be a KubeConfig/);
  });
});
