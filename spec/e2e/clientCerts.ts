/**
 * Client certificates for the e2e cluster, signed by its CA with openssl, and kubeconfigs that read
 * them from files: what a kubelet or cert-manager hands a workload, and rotates by rewriting the files.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import type { Cluster } from './cluster.js';

const run = promisify(execFile);

/** A PEM certificate and its PEM key. */
export interface ClientCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Signs a client certificate for `user` (CN) in `groups` (O), valid for a day, with the cluster's CA. */
export async function issueClientCertificate(cluster: Cluster, user: string, groups: readonly string[] = []): Promise<ClientCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'rxkube-e2e-client-'));
  try {
    const subject = `/CN=${user}${groups.map((g) => `/O=${g}`).join('')}`;
    await run('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'client.key', '-out', 'client.csr', '-subj', subject], { cwd: dir });
    await writeFile(join(dir, 'client.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
    await run('openssl', ['x509', '-req', '-in', 'client.csr', '-CA', join(cluster.pkiDir, 'ca.crt'), '-CAkey', join(cluster.pkiDir, 'ca.key'),
      '-CAcreateserial', '-CAserial', join(dir, 'ca.srl'), '-out', 'client.crt', '-days', '1', '-extfile', 'client.ext'], { cwd: dir });
    return { certPem: await readFile(join(dir, 'client.crt'), 'utf8'), keyPem: await readFile(join(dir, 'client.key'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A KubeConfig for `server` trusting the cluster CA, authenticating with the certificate and key in these files. */
export async function certFileKubeConfig(cluster: Cluster, server: string, certFile: string, keyFile: string): Promise<KubeConfig> {
  const caPem = await readFile(join(cluster.pkiDir, 'ca.crt'), 'utf8');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'e2e', server, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'cert-user', certFile, keyFile }],
    contexts: [{ name: 'cert-user', cluster: 'e2e', user: 'cert-user' }],
    currentContext: 'cert-user',
  });
  return kc;
}
