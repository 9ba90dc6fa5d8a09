import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Cluster } from '@kubernetes/client-node';
import { codeSuffix, CredentialFailure, untilAborted } from './credentialFailure.js';
import { startPlugin, type PluginCommand, type PluginRun } from './execPlugin.js';

/** What an exec plugin answered, as a request uses it. */
export interface ExecCredential {
  readonly token: string | undefined;
  /** PEM client certificate and key, both or neither. */
  readonly cert: string | undefined;
  readonly key: string | undefined;
}

/** The API versions of the client.authentication.k8s.io ExecCredential protocol client-go still speaks. */
const VERSIONS = new Set(['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']);

/** A credential and when it stops being good (`Infinity` without an `expirationTimestamp`). */
interface Cached {
  readonly credential: ExecCredential;
  readonly expiresAt: number;
}

/** A plugin run that requests wait for together, and how many still wait. */
interface Shared {
  readonly run: PluginRun;
  readonly credential: Promise<ExecCredential>;
  waiters: number;
}

/** By a digest of the plugin's configuration (env values may be secrets): one entry per configured plugin. */
const cache = new Map<string, Cached>();
/** Runs in progress, by the same digest: concurrent requests start one process, as client-go's exec authenticator does. */
const running = new Map<string, Shared>();

/**
 * Runs the kubeconfig user's exec credential plugin, or answers the credential
 * it gave last while that has not expired (internal).
 *
 * Speaks client.authentication.k8s.io `ExecCredential` as client-go does:
 * the command and arguments of the kubeconfig, the process's environment
 * plus the kubeconfig's `env`, and `KUBERNETES_EXEC_INFO` describing the
 * request (never interactive; the cluster when `provideClusterInfo` is set).
 * The answer must be an ExecCredential of the configured version with a
 * `status.token`, a client certificate and key, or both; it is kept until
 * its `expirationTimestamp` (for ever without one).
 *
 * Every request waiting for a run gives its own `signal`; once all of them
 * have aborted (unsubscribed, timed out) the process is killed.
 *
 * @throws {CredentialFailure} naming what was wrong, never what the plugin printed; the signal's reason once it aborts.
 */
export function execCredential(exec: unknown, cluster: Cluster | null, signal: AbortSignal): Promise<ExecCredential> {
  const config = execConfig(exec);
  const id = digest(config, cluster);
  const cached = cache.get(id);
  if (cached !== undefined && Date.now() < cached.expiresAt) return Promise.resolve(cached.credential);
  let shared = running.get(id);
  if (shared === undefined) {
    shared = start(id, config, cluster);
    running.set(id, shared);
  }
  return wait(id, shared, signal);
}

/** Runs in progress (for tests). */
export function execRunsInProgress(): number {
  return running.size;
}

async function wait(id: string, shared: Shared, signal: AbortSignal): Promise<ExecCredential> {
  shared.waiters++;
  try {
    return await untilAborted(shared.credential, signal);
  } finally {
    shared.waiters--;
    if (shared.waiters === 0 && running.get(id) === shared) {
      // Nobody waits any more: end the process, and let the next request start afresh rather than join a dying run.
      running.delete(id);
      shared.run.kill();
    }
  }
}

function start(id: string, config: ExecConfig, cluster: Cluster | null): Shared {
  const run = startPlugin(pluginCommand(config, cluster));
  const credential = run.output.then((text) => {
    const parsed = parseCredential(text, config.apiVersion);
    cache.set(id, parsed);
    return parsed.credential;
  });
  const settle = (): void => {
    if (running.get(id)?.run === run) running.delete(id);
  };
  credential.then(settle, settle);
  return { run, credential, waiters: 0 };
}

/** The fields of a kubeconfig `exec` section rxkube reads. */
interface ExecConfig {
  readonly apiVersion: string | undefined;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  readonly provideClusterInfo: boolean;
}

function execConfig(exec: unknown): ExecConfig {
  const e = (typeof exec === 'object' && exec !== null ? exec : {}) as Record<string, unknown>;
  if (typeof e['command'] !== 'string' || e['command'] === '') throw new CredentialFailure('the exec section names no command');
  const apiVersion = e['apiVersion'];
  if (apiVersion !== undefined && (typeof apiVersion !== 'string' || !VERSIONS.has(apiVersion))) {
    throw new CredentialFailure(`the exec section asks for apiVersion ${JSON.stringify(String(apiVersion)).slice(0, 80)}, not one of ${[...VERSIONS].join(', ')}`);
  }
  if (e['interactiveMode'] === 'Always') throw new CredentialFailure('the exec plugin needs a terminal (interactiveMode Always), which rxkube never gives it');
  const args = e['args'] ?? [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw new CredentialFailure('the exec section\'s args are not a list of strings');
  const env = e['env'] ?? [];
  const entries = Array.isArray(env) ? (env as unknown[]) : [null];
  if (!entries.every((v) => typeof v === 'object' && v !== null && typeof (v as Record<string, unknown>)['name'] === 'string' && typeof (v as Record<string, unknown>)['value'] === 'string')) {
    throw new CredentialFailure('the exec section\'s env is not a list of { name, value } strings');
  }
  return {
    apiVersion,
    command: e['command'],
    args: args as string[],
    env: entries as ExecConfig['env'],
    provideClusterInfo: e['provideClusterInfo'] === true,
  };
}

function digest(config: ExecConfig, cluster: Cluster | null): string {
  const clusterPart = config.provideClusterInfo ? [cluster?.server, cluster?.caData, cluster?.caFile, cluster?.tlsServerName, cluster?.skipTLSVerify, cluster?.proxyUrl] : [];
  return createHash('sha256').update(JSON.stringify([config, clusterPart])).digest('base64url');
}

function pluginCommand(config: ExecConfig, cluster: Cluster | null): PluginCommand {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const { name, value } of config.env) env[name] = value;
  const spec: Record<string, unknown> = { interactive: false };
  if (config.provideClusterInfo && cluster !== null) spec['cluster'] = clusterInfo(cluster);
  env['KUBERNETES_EXEC_INFO'] = JSON.stringify({ apiVersion: config.apiVersion ?? 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec });
  return { command: config.command, args: config.args, env };
}

/** The `spec.cluster` of `KUBERNETES_EXEC_INFO`, in the protocol's field names. */
function clusterInfo(cluster: Cluster): Record<string, unknown> {
  let ca = cluster.caData;
  if ((ca === undefined || ca === '') && cluster.caFile !== undefined && cluster.caFile !== '') {
    try {
      ca = readFileSync(cluster.caFile).toString('base64');
    } catch (err) {
      throw new CredentialFailure(`the cluster's CA file, asked for by provideClusterInfo, could not be read${codeSuffix(err)}`);
    }
  }
  return {
    server: cluster.server,
    ...(cluster.tlsServerName !== undefined && { 'tls-server-name': cluster.tlsServerName }),
    // Plain http: servers are given the flag by rxkube's own view of the kubeconfig; it means nothing there.
    ...(cluster.skipTLSVerify === true && !cluster.server.startsWith('http:') && { 'insecure-skip-tls-verify': true }),
    ...(ca !== undefined && ca !== '' && { 'certificate-authority-data': ca }),
    ...(cluster.proxyUrl !== undefined && cluster.proxyUrl !== '' && { 'proxy-url': cluster.proxyUrl }),
  };
}

/** Checks what the plugin printed; each failure names the field at fault, never its value. */
function parseCredential(text: string, apiVersion: string | undefined): Cached {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CredentialFailure('the exec plugin printed no valid ExecCredential JSON');
  }
  const obj = (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {}) as Record<string, unknown>;
  if (obj['kind'] !== 'ExecCredential') throw new CredentialFailure('the exec plugin printed JSON that is not an ExecCredential');
  const version = obj['apiVersion'];
  if (typeof version !== 'string' || !VERSIONS.has(version) || (apiVersion !== undefined && version !== apiVersion)) {
    throw new CredentialFailure(`the exec plugin answered in an apiVersion other than ${apiVersion ?? 'client.authentication.k8s.io/v1 or v1beta1'}`);
  }
  const status = obj['status'];
  if (typeof status !== 'object' || status === null) throw new CredentialFailure('the exec plugin\'s ExecCredential has no status');
  const s = status as Record<string, unknown>;
  const field = (name: string): string | undefined => {
    const value = s[name];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw new CredentialFailure(`the exec plugin's status.${name} is not a string`);
    return value;
  };
  const token = field('token');
  const cert = field('clientCertificateData');
  const key = field('clientKeyData');
  if ((cert === undefined) !== (key === undefined)) throw new CredentialFailure('the exec plugin gave a client certificate without its key, or a key without its certificate');
  if (token === undefined && cert === undefined) throw new CredentialFailure('the exec plugin gave neither a token nor a client certificate');
  const expiry = field('expirationTimestamp');
  const expiresAt = expiry === undefined ? Infinity : Date.parse(expiry);
  if (Number.isNaN(expiresAt)) throw new CredentialFailure('the exec plugin\'s status.expirationTimestamp is not a time');
  return { credential: { token, cert, key }, expiresAt };
}
