import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { informer } from '../../src/informer/informer.js';
import { ConnectionError, isUnauthorized } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { KubeObject } from '../../src/store/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pools } from '../../src/transport/pool.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

let server: ApiServer | undefined;
let root: string | undefined;
const running = new Lifetimes();
const savedEnv = { host: process.env['KUBERNETES_SERVICE_HOST'], port: process.env['KUBERNETES_SERVICE_PORT'] };

afterEach(async () => {
  await running.end();
  await server?.close();
  server = undefined;
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
  for (const [key, value] of [['KUBERNETES_SERVICE_HOST', savedEnv.host], ['KUBERNETES_SERVICE_PORT', savedEnv.port]] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

/**
 * The service-account volume as the kubelet's atomic writer lays it out: each
 * version of the files in a directory of its own, `..data` a symlink to the
 * current one, and `token` a symlink through `..data`. A rotation writes a new
 * directory and swaps `..data` with a rename, so a reader never sees half a file.
 */
class ProjectedVolume {
  readonly dir: string;
  #version = 0;

  constructor(dir: string, files: Record<string, string>) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
    this.write(files);
    for (const name of Object.keys(files)) symlinkSync(join('..data', name), join(dir, name));
  }

  write(files: Record<string, string>): void {
    const version = `..v${++this.#version}`;
    mkdirSync(join(this.dir, version));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(this.dir, version, name), text);
    symlinkSync(version, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
  }
}

/** A simulator that accepts `token`, and an in-cluster KubeConfig loaded from a projected volume holding it. */
async function inCluster(token: string): Promise<{ server: ApiServer; volume: ProjectedVolume; kc: KubeConfig }> {
  server = await startApiServer({ tls: true, token, bookmarkIntervalMs: 60_000 });
  root = mkdtempSync(join(tmpdir(), 'rxkube-sa-'));
  const files = { token: `${token}\n`, 'ca.crt': server.caPem ?? '', namespace: 'default' };
  const volume = new ProjectedVolume(join(root, SERVICE_ACCOUNT), files);
  process.env['KUBERNETES_SERVICE_HOST'] = '127.0.0.1';
  process.env['KUBERNETES_SERVICE_PORT'] = String(server.port);
  const kc = new KubeConfig();
  kc.loadFromCluster(root);
  return { server, volume, kc };
}

describe('in-cluster service-account token rotation', () => {
  it('the first request after the kubelet replaced the token carries the new one, though the old one is revoked at once', async () => {
    const { server: s, volume, kc } = await inCluster('token-one');
    const cms = objectClient(kc, 'v1/configmaps', { namespace: 'default' });
    await cms.create({ metadata: { name: 'before' } });

    s.acceptToken('token-two');
    volume.write({ token: 'token-two\n', 'ca.crt': s.caPem ?? '', namespace: 'default' });
    s.revokeToken('token-one');
    // client-node would keep sending token-one for up to a minute: every write here would be refused with 401.
    await cms.create({ metadata: { name: 'after' } });
    expect(s.list('v1/configmaps').map((c) => (c as KubeObject).metadata?.name)).toEqual(['after', 'before']);

    // And the other way round: a token the server no longer accepts is refused, typed, without the token in the message.
    s.revokeToken('token-two');
    const err = await cms.create({ metadata: { name: 'refused' } }).catch((e: unknown) => e);
    expect(isUnauthorized(err)).toBe(true);
    expect(String((err as Error).message)).not.toContain('token-two');
    await waitFor(() => pools.size === 0, 'the pool to close');
  });

  it('an informer resumes its watch with the new token after the old one is revoked, without a single 401', async () => {
    const { server: s, volume, kc } = await inCluster('token-one');
    await s.create('v1/pods', { metadata: { name: 'a', namespace: 'default' } });
    const inf = running.track(informer(kubeSource(kc, 'v1/pods'), { reflector: { backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } } }));
    const errors: unknown[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    const sub = inf.subscribe();
    await inf.whenSynced({ timeout: 10_000 });
    await waitFor(() => s.stats.watchesOpen === 1, 'the watch to open');

    s.acceptToken('token-two');
    volume.write({ token: 'token-two\n', 'ca.crt': s.caPem ?? '', namespace: 'default' });
    s.revokeToken('token-one');
    // The open watch outlives the revocation (tokens are checked when a request arrives); its successor must not.
    const started = s.stats.watchesStarted;
    s.faults.closeWatches();
    await waitFor(() => s.stats.watchesStarted > started && s.stats.watchesOpen === 1, 'the watch to reopen');
    await s.create('v1/pods', { metadata: { name: 'b', namespace: 'default' } });
    await waitFor(() => inf.store.size === 2, 'the new pod to reach the cache');
    // The watch closed at once is reported as very short; what must not be there is a refusal.
    expect(errors.filter((e) => isUnauthorized(e))).toEqual([]);
    expect(s.stats.watchesStarted).toBeGreaterThan(started);
    sub.unsubscribe();
  });

  it('a token file emptied or removed mid-rotation keeps the last good token, not the first one ever read', async () => {
    const { server: s, volume, kc } = await inCluster('token-one');
    const cms = objectClient(kc, 'v1/configmaps', { namespace: 'default' });
    await cms.create({ metadata: { name: 'one' } });
    s.acceptToken('token-two');
    volume.write({ token: 'token-two\n', 'ca.crt': s.caPem ?? '', namespace: 'default' });
    s.revokeToken('token-one');
    await cms.create({ metadata: { name: 'two' } });

    // A writer caught between truncating and writing: the file is there, empty.
    volume.write({ token: '', 'ca.crt': s.caPem ?? '', namespace: 'default' });
    await cms.create({ metadata: { name: 'empty' } });
    // Only whitespace is empty too, once trimmed.
    volume.write({ token: ' \n', 'ca.crt': s.caPem ?? '', namespace: 'default' });
    await cms.create({ metadata: { name: 'blank' } });
    // The file gone altogether (its directory swapped for one without it).
    volume.write({ 'ca.crt': s.caPem ?? '', namespace: 'default' });
    await cms.create({ metadata: { name: 'missing' } });

    s.acceptToken('token-three');
    volume.write({ token: 'token-three', 'ca.crt': s.caPem ?? '', namespace: 'default' });
    s.revokeToken('token-two');
    await cms.create({ metadata: { name: 'three' } });
    expect(s.list('v1/configmaps').map((c) => (c as KubeObject).metadata?.name)).toEqual(['blank', 'empty', 'missing', 'one', 'three', 'two']);
  });

  it('a token file that never held a token fails typed, with no contents in the message', async () => {
    const { volume, server: s } = await inCluster('token-one');
    volume.write({ token: '\n', 'ca.crt': s.caPem ?? '', namespace: 'default' });
    const fresh = new KubeConfig();
    fresh.loadFromCluster(root ?? '');
    const err = await objectClient(fresh, 'v1/configmaps', { namespace: 'default' })
      .get('x')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).code).toBe('CREDENTIALS');
    expect((err as Error).message).toMatch(/the token file is empty/);
  });

  it("a static token stands in while the token file has never given one, and the file's token wins once it does", async () => {
    server = await startApiServer({ token: 'static-token' });
    root = mkdtempSync(join(tmpdir(), 'rxkube-sa-'));
    const file = join(root, 'token');
    writeFileSync(file, '');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: server.url, skipTLSVerify: false }],
      users: [{ name: 'u', token: 'static-token', authProvider: { name: 'tokenFile', config: { tokenFile: file } } }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const cms = objectClient(kc, 'v1/configmaps', { namespace: 'default' });
    await cms.create({ metadata: { name: 'static' } });
    server.acceptToken('file-token');
    writeFileSync(file, 'file-token\n');
    server.revokeToken('static-token');
    await cms.create({ metadata: { name: 'file' } });
    expect(server.list('v1/configmaps').map((c) => (c as KubeObject).metadata?.name)).toEqual(['file', 'static']);
  });
});
