/**
 * Serving certificates for a webhook server on 127.0.0.1, made with openssl: a CA of their own (what a
 * webhook configuration's caBundle names) and a certificate it signs, laid out in a directory as
 * controller-runtime and cert-manager lay them out (`tls.crt`, `tls.key`). Rotation is writing another
 * pair over them.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { mkdir, mkdtemp, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A CA: its certificate (PEM) and key (PEM). */
export interface TestCa {
  readonly certPem: string;
  readonly keyPem: string;
}

/** A serving certificate and its key (PEM), and the SHA-256 fingerprint a TLS peer sees. */
export interface ServingPair {
  readonly cert: string;
  readonly key: string;
  readonly fingerprint256: string;
}

/** Runs openssl in a temp dir holding `files`, and returns what it wrote to the files named in `out`. */
async function inTempDir<K extends string>(files: Readonly<Record<string, string>>, steps: readonly (readonly string[])[], out: readonly K[]): Promise<Record<K, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'rxkube-e2e-certs-'));
  try {
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    for (const args of steps) await run('openssl', [...args], { cwd: dir });
    const result = {} as Record<K, string>;
    for (const name of out) result[name] = await readFile(join(dir, name), 'utf8');
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A new self-signed CA named `name`, valid for two days. */
export async function makeCa(name: string): Promise<TestCa> {
  const { 'ca.crt': certPem, 'ca.key': keyPem } = await inTempDir(
    {},
    [['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']],
    ['ca.crt', 'ca.key'],
  );
  return { certPem, keyPem };
}

/**
 * A serving certificate signed by `ca` for `hosts` (IP addresses and DNS names), valid for two days.
 *
 * @param ca the CA that signs it.
 * @param hosts the subject alternative names.
 * @param commonName its subject's CN, to tell two certificates of the same CA apart in a log.
 * @returns the PEM certificate and key, and the fingerprint a TLS client sees.
 */
export async function issueServingPair(ca: TestCa, hosts: readonly string[] = ['127.0.0.1', 'localhost'], commonName = 'rxkube-webhook'): Promise<ServingPair> {
  const san = hosts.map((h) => (/^[\d.]+$|:/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
  const ext = ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature,keyEncipherment', 'extendedKeyUsage=serverAuth', `subjectAltName=${san}`, ''].join('\n');
  const { 'tls.crt': cert, 'tls.key': key } = await inTempDir(
    { 'ca.crt': ca.certPem, 'ca.key': ca.keyPem, 'server.ext': ext },
    [
      ['req', ...EC, '-keyout', 'tls.key', '-out', 'server.csr', '-subj', `/CN=${commonName}`],
      ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.crt', '-days', '2', '-extfile', 'server.ext'],
    ],
    ['tls.crt', 'tls.key'],
  );
  return { cert, key, fingerprint256: new X509Certificate(cert).fingerprint256 };
}

/**
 * Writes `pair` into `dir` as `tls.crt` and `tls.key` the way a kubelet updates a Secret volume, so the pair changes
 * at once and a reader never sees a new key beside an old certificate: both files go into a new `..<n>` directory,
 * a `..data` symlink is renamed over the old one to point at it, and `tls.crt`, `tls.key` are symlinks through
 * `..data`.
 */
export async function writeCertDir(dir: string, pair: ServingPair): Promise<void> {
  const version = `..${Date.now()}-${Math.random().toString(36).slice(2)}`;
  await mkdir(join(dir, version));
  await writeFile(join(dir, version, 'tls.key'), pair.key, { mode: 0o600 });
  await writeFile(join(dir, version, 'tls.crt'), pair.cert);
  await symlink(version, join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));
  for (const name of ['tls.crt', 'tls.key']) {
    const link = join(dir, name);
    const target = await readlink(link).catch(() => undefined);
    if (target !== join('..data', name)) {
      await rm(link, { force: true });
      await symlink(join('..data', name), link);
    }
  }
}

/** The SHA-256 fingerprint of the certificate the TLS server at `port` on `host` presents to a new connection. */
export async function servedFingerprint(port: number, host = '127.0.0.1'): Promise<string> {
  return (await servedCertificate(port, host)).fingerprint256;
}

/** The certificate the TLS server at `port` on `host` presents to a new connection (not verified). */
export function servedCertificate(port: number, host = '127.0.0.1'): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, servername: 'localhost', rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.destroy();
      resolve(new X509Certificate(raw));
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no TLS handshake with ${host}:${port} in 5 s`)));
    socket.once('error', reject);
  });
}
