import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { informer } from '../../src/informer/index.js';
import { ConnectionError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { kubeConfigYaml } from './secretScan.js';
import { Lifetimes } from '../helpers/lifetimes.js';

const CERTIFICATE_PROBLEM = /certificate|self[- ]signed|unable to verify|issuer/i;

function load(yaml: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return kc;
}

/** Runs an informer until it syncs or reports an error, and says which came first, with the errors it saw. */
async function syncOrFail(kc: KubeConfig): Promise<{ synced: boolean; errors: Error[]; names: string[] }> {
  const life = new Lifetimes();
  const inf = life.track(informer(kubeSource(kc, 'v1/pods')));
  const errors: Error[] = [];
  const sub = inf.errors$.subscribe((e) => errors.push(e));
  let synced = false;
  try {
    inf.subscribe();
    void inf.whenSynced().then(
      () => (synced = true),
      () => undefined,
    );
    await waitFor(() => synced || errors.length > 0, 'the informer to sync or report an error', 20_000);
    const names = synced ? [...inf.store.listKeys()].sort() : [];
    return { synced, errors, names };
  } finally {
    await life.end();
    sub.unsubscribe();
  }
}

describe('TLS is verified unless the kubeconfig says insecure-skip-tls-verify', () => {
  let server: ApiServer;
  let stranger: ApiServer;
  let ca: string;
  let wrongCa: string;

  beforeAll(async () => {
    [server, stranger] = await Promise.all([startApiServer({ tls: true }), startApiServer({ tls: true })]);
    await server.create('v1/pods', pod('web'));
    ca = server.kubeConfig().getCurrentCluster()?.caData ?? '';
    wrongCa = stranger.kubeConfig().getCurrentCluster()?.caData ?? '';
    expect(ca).not.toBe('');
    expect(wrongCa).not.toBe(ca);
  });

  afterAll(async () => {
    await Promise.all([server?.close(), stranger?.close()]);
  });

  it("syncs with the server's own CA", async () => {
    const r = await syncOrFail(load(kubeConfigYaml({ server: server.url, 'certificate-authority-data': ca }, {})));
    expect(r.errors).toEqual([]);
    expect(r.synced).toBe(true);
    expect(r.names).toEqual(['default/web']);
  });

  it('refuses a server whose certificate another CA signed: a ConnectionError naming a certificate problem, from kubeSource and on errors$', async () => {
    const kc = load(kubeConfigYaml({ server: server.url, 'certificate-authority-data': wrongCa }, {}));
    const err = await kubeSource(kc, 'v1/pods')
      .list({}, new AbortController().signal)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).message).toMatch(CERTIFICATE_PROBLEM);
    const r = await syncOrFail(kc);
    expect(r.synced).toBe(false);
    expect(r.errors[0]).toBeInstanceOf(ConnectionError);
    expect(r.errors[0]?.message).toMatch(CERTIFICATE_PROBLEM);
  });

  it('refuses a server no CA in the kubeconfig vouches for (the system CAs do not know it)', async () => {
    const r = await syncOrFail(load(kubeConfigYaml({ server: server.url }, {})));
    expect(r.synced).toBe(false);
    expect(r.errors[0]).toBeInstanceOf(ConnectionError);
    expect(r.errors[0]?.message).toMatch(CERTIFICATE_PROBLEM);
  });

  it('syncs with insecure-skip-tls-verify: true, even beside a wrong CA (the flag wins, as in client-node; kubectl would refuse the pair)', async () => {
    for (const cluster of [{ 'insecure-skip-tls-verify': true }, { 'insecure-skip-tls-verify': true, 'certificate-authority-data': wrongCa }]) {
      const r = await syncOrFail(load(kubeConfigYaml({ server: server.url, ...cluster }, {})));
      expect(r.errors, Object.keys(cluster).join(' ')).toEqual([]);
      expect(r.synced).toBe(true);
      expect(r.names).toEqual(['default/web']);
    }
  });
});
