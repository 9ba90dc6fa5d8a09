import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import type { KubeConfig, User } from '@kubernetes/client-node';
import { transportOf, type ResolvedTransportOptions } from './options.js';
import { codeSuffix, CredentialFailure } from './credentialFailure.js';
import { execCredential } from './execCredential.js';
import { tokenFromFile } from './tokenFile.js';

/** The TLS material a connection is made with, as client-node read it for this request. */
export interface TlsMaterial {
  readonly ca?: string | Buffer | undefined;
  readonly cert?: string | Buffer | undefined;
  readonly key?: string | Buffer | undefined;
  readonly pfx?: string | Buffer | undefined;
  readonly passphrase?: string | undefined;
  readonly rejectUnauthorized?: boolean | undefined;
  readonly servername?: string | undefined;
}

/** Everything that decides which connection a request may travel on (internal). */
export interface ConnectionTarget {
  /**
   * Identifies the pool: a digest of the origin, the proxy, the TLS material
   * (contents, not file names) and the transport options. Never the material
   * itself, so the key can be kept and compared without holding a secret.
   */
  readonly key: string;
  /** `https://host:port` of the server. */
  readonly origin: string;
  readonly tls: TlsMaterial;
  /** The cluster's `proxy-url`, when it has one. */
  readonly proxyUrl: string | undefined;
  readonly options: ResolvedTransportOptions;
}

/** One request's credentials and the connection it must use (internal). */
export interface ResolvedRequest {
  /** Authorization, impersonation: applied to this request only. */
  readonly headers: Record<string, string>;
  readonly target: ConnectionTarget;
}

/**
 * Reads what one request to `url` needs from the kubeconfig: its credential
 * headers (tokens, exec and OIDC plugins, basic auth, impersonation) and the
 * identity of the connection it may use (internal).
 *
 * Runs for every request. client-node re-reads certificate, key and CA files
 * each time, so a rotated file gives a different {@link ConnectionTarget.key}
 * on the next request, and with it a new pool. A service-account token file
 * is re-read as soon as it changes, and an empty or unreadable one keeps the
 * last good token (see `tokenFromFile`). An exec plugin is run by rxkube, not
 * client-node, so that `signal` can stop it (see `execCredential`). A static
 * `token` of the user wins over an exec plugin, which then does not run, and
 * stands in for a token file that has never given a token (as in client-go).
 *
 * @param signal Aborts the resolution; an exec plugin nobody waits for any more is killed.
 * @throws {CredentialFailure} for a token file or exec plugin; whatever client-node's other providers throw (the caller wraps it without its message).
 */
export async function resolveRequest(kc: KubeConfig, url: string, signal: AbortSignal): Promise<ResolvedRequest> {
  const opts: RequestOptions = {};
  const user = kc.getCurrentUser();
  if (user !== null) {
    refuseBlockingProvider(user);
    checkFiles(kc, user);
  }
  const own = user === null ? undefined : ownCredential(user);
  // Public API that runs client-node's authenticators and reads the TLS files; the agent it caches is never used.
  await (own === undefined || user === null ? kc : withoutPlugin(kc, user)).applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(opts.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  if (typeof opts.auth === 'string' && opts.auth !== '') headers['authorization'] = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  const staticToken = user?.token !== undefined && user.token !== '';
  if (own?.kind === 'tokenFile') {
    // As client-go: the file's token wins, and a static token is sent only while the file has never given one.
    try {
      headers['authorization'] = `Bearer ${tokenFromFile(own.path)}`;
    } catch (err) {
      if (!staticToken) throw err;
    }
  }
  if (own?.kind === 'exec' && !staticToken) {
    const credential = await execCredential(own.exec, kc.getCurrentCluster(), signal);
    if (credential.token !== undefined) headers['authorization'] = `Bearer ${credential.token}`;
    if (credential.cert !== undefined) opts.cert = credential.cert;
    if (credential.key !== undefined) opts.key = credential.key;
  }
  const cluster = kc.getCurrentCluster();
  const proxyUrl = cluster?.proxyUrl === undefined || cluster.proxyUrl === '' ? undefined : cluster.proxyUrl;
  const tls: TlsMaterial = {
    ca: opts.ca as string | Buffer | undefined,
    cert: opts.cert as string | Buffer | undefined,
    key: opts.key as string | Buffer | undefined,
    pfx: opts.pfx as string | Buffer | undefined,
    passphrase: opts.passphrase,
    rejectUnauthorized: opts.rejectUnauthorized,
    servername: opts.servername,
  };
  const origin = new URL(url).origin;
  const options = transportOf(kc);
  return { headers, target: { key: connectionKey(origin, proxyUrl, tls, options), origin, tls, proxyUrl, options } };
}

function connectionKey(origin: string, proxyUrl: string | undefined, tls: TlsMaterial, options: ResolvedTransportOptions): string {
  const hash = createHash('sha256');
  const part = (value: string | Buffer | boolean | number | undefined): void => {
    // Length-prefixed, so no two different tuples can hash the same bytes.
    const bytes = value === undefined ? Buffer.alloc(0) : Buffer.isBuffer(value) ? value : Buffer.from(String(value));
    hash.update(`${value === undefined ? '-' : bytes.length}:`);
    hash.update(bytes);
  };
  part(origin);
  part(proxyUrl);
  part(tls.ca);
  part(tls.cert);
  part(tls.key);
  part(tls.pfx);
  part(tls.passphrase);
  part(tls.rejectUnauthorized);
  part(tls.servername);
  part(options.http2);
  part(options.readIdleTimeoutMs);
  part(options.pingTimeoutMs);
  return hash.digest('base64url');
}

/** The credentials rxkube obtains itself rather than through client-node: a token file, an exec plugin. */
type OwnCredential = { readonly kind: 'tokenFile'; readonly path: string } | { readonly kind: 'exec'; readonly exec: unknown };

function ownCredential(user: User): OwnCredential | undefined {
  if (user.exec !== undefined && user.exec !== null) return { kind: 'exec', exec: user.exec };
  const provider = user.authProvider as { name?: unknown; config?: Record<string, unknown> } | undefined;
  const nested = provider?.config?.['exec'];
  if (nested !== undefined && nested !== null) return { kind: 'exec', exec: nested };
  const tokenFile = provider?.config?.['tokenFile'];
  if (typeof tokenFile === 'string' && tokenFile !== '') return { kind: 'tokenFile', path: tokenFile };
  return undefined;
}

/**
 * A view of `kc` whose current user has no exec plugin or auth provider, so
 * client-node applies only its TLS material, basic auth, static token and
 * impersonation, and runs no plugin of its own (its exec provider cannot be
 * stopped, and its token-file provider keeps the first token for a minute).
 */
function withoutPlugin(kc: KubeConfig, user: User): KubeConfig {
  const stripped: User = { ...user, exec: undefined, authProvider: undefined };
  const view = Object.create(kc) as KubeConfig;
  view.getCurrentUser = () => stripped;
  return view;
}

/**
 * client-node's `gcp` and `azure` auth providers refresh a missing or expired
 * token by running their `cmd-path` with `execSync`: the whole process stops
 * until the command ends, and no deadline or signal can help. client-go
 * removed both (1.26) in favour of exec plugins; here a token they still hold
 * is used, and a refresh is refused rather than run.
 */
function refuseBlockingProvider(user: User): void {
  const provider = user.authProvider as { name?: unknown; config?: Record<string, unknown> } | undefined;
  if (provider?.name !== 'gcp' && provider?.name !== 'azure') return;
  const config = provider.config ?? {};
  const token = config['access-token'];
  const expiry = typeof config['expiry'] === 'string' ? Date.parse(config['expiry']) : config['expires-on'] !== undefined ? Number(config['expires-on']) * 1000 : undefined;
  if (typeof token === 'string' && token !== '' && (expiry === undefined || !(expiry < Date.now()))) return;
  throw new CredentialFailure(
    `the ${provider.name} auth provider's token is missing or expired, and refreshing it would block the whole process on its command; use its exec plugin (gke-gcloud-auth-plugin, kubelogin) as client-go requires`,
  );
}

/**
 * The certificate, key and CA files client-node is about to read with
 * `readFileSync`: a FIFO or device there would block the whole process, so
 * anything but a regular file is refused before it is opened. A missing or
 * unreadable file is reported with its system code only.
 */
function checkFiles(kc: KubeConfig, user: User): void {
  const cluster = kc.getCurrentCluster();
  // client-node reads a named file even when the data is given too.
  const files: [string, string | undefined][] = [
    ['certificate-authority', cluster?.caFile],
    ['client-certificate', user.certFile],
    ['client-key', user.keyFile],
  ];
  for (const [label, path] of files) {
    if (path === undefined || path === '') continue;
    let regular: boolean;
    try {
      regular = statSync(path).isFile();
    } catch (err) {
      throw new CredentialFailure(`the kubeconfig's ${label} file could not be read${codeSuffix(err)}`, (err as { code?: string }).code);
    }
    if (!regular) throw new CredentialFailure(`the kubeconfig's ${label} file is not a regular file`);
  }
}
