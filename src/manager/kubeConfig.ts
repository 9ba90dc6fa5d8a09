import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { describeValue } from '../options/validate.js';
import {
  homeKubeConfigPath,
  KubeConfigLoadError,
  readHomeKubeConfig,
  readKubeConfigFile,
  readKubeConfigList,
  selectContext,
  type FoundKubeConfig,
} from './kubeConfigFiles.js';

/** Where the kubelet mounts a pod's service-account token, CA and namespace. */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * Options of {@link loadKubeConfig}.
 *
 * ## Example
 * ```ts
 * import { loadKubeConfig } from 'rxkube';
 * import { type LoadKubeConfigOptions } from 'rxkube/core';
 *
 * const opts: LoadKubeConfigOptions = { kubeconfig: '/etc/rxkube/kubeconfig', context: 'staging' };
 * const kc = loadKubeConfig(opts);
 * ```
 */
export interface LoadKubeConfigOptions {
  /** A kubeconfig file to use, as `--kubeconfig` (controller-runtime's flag); it wins over everything else. @default undefined */
  readonly kubeconfig?: string;
  /** The context to use instead of the kubeconfig's current context. @default the current context */
  readonly context?: string;
  /** Where the service-account `token`, `ca.crt` and `namespace` are. @default '/var/run/secrets/kubernetes.io/serviceaccount' */
  readonly serviceAccountDir?: string;
  /** The environment read for `KUBECONFIG`, `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Loads the configuration a controller should use where it runs, in
 * controller-runtime's order: the `kubeconfig` option; else the files of
 * `$KUBECONFIG`; else, in a pod (`KUBERNETES_SERVICE_HOST` and
 * `KUBERNETES_SERVICE_PORT` set), the in-cluster one — the API server at
 * that address over HTTPS, trusted by the service account's `ca.crt`,
 * authenticated by its `token` (read again as the kubelet rotates it) and
 * with its `namespace` as the context's namespace; else `~/.kube/config`.
 *
 * Nothing waits in silence: a kubeconfig that is named but missing or
 * malformed, a `context` it does not have, a current context naming no
 * cluster, a pod whose token or CA is missing (no service account mounted,
 * `automountServiceAccountToken: false`), or no configuration at all (where
 * client-node would quietly try `http://localhost:8080`) throws at once, one
 * line naming the file or setting.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource, loadKubeConfig } from 'rxkube';
 *
 * const kc = loadKubeConfig();
 * const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default'; // the pod's, in a pod
 * const pods = informer(kubeSource(kc, 'v1/pods', { namespace }));
 * ```
 *
 * @param opts a kubeconfig and context to use, where the service account is mounted, and the environment to read.
 * @returns the configuration.
 * @throws {Error} in a pod without a readable token or CA.
 */
export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`loadKubeConfig: options must be an object, got ${describeValue(opts)}`);
  for (const name of ['kubeconfig', 'context'] as const) {
    const value = opts[name];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new TypeError(`loadKubeConfig: option "${name}" must be a non-empty string, got ${describeValue(value)}`);
    }
  }
  const found = findKubeConfig(opts, 'loadKubeConfig: option "kubeconfig"');
  if (found === undefined) {
    throw new KubeConfigLoadError(
      `loadKubeConfig: no kubeconfig: ${homeKubeConfigPath()} does not exist, KUBECONFIG is not set, and this is not a pod (KUBERNETES_SERVICE_HOST is not set); pass the option "kubeconfig"`,
    );
  }
  return selectContext(found, opts.context, 'loadKubeConfig: option "context"');
}

/**
 * The configuration `loadKubeConfig` would use, before a context is chosen;
 * undefined when there is none at all. Shared with `rxkube watch`, which
 * words the flag and the "none" case for a command line.
 * @param kubeconfigFlag how the caller names the explicit file in messages.
 */
export function findKubeConfig(opts: Omit<LoadKubeConfigOptions, 'context'>, kubeconfigFlag: string): FoundKubeConfig | undefined {
  const dir = opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (typeof dir !== 'string' || dir === '') throw new TypeError(`loadKubeConfig: option "serviceAccountDir" must be a non-empty string, got ${describeValue(dir)}`);
  if (opts.kubeconfig !== undefined) return { kc: readKubeConfigFile(opts.kubeconfig, kubeconfigFlag), where: opts.kubeconfig };
  const env = opts.env ?? process.env;
  const list = env['KUBECONFIG'];
  if (list !== undefined && list !== '') return readKubeConfigList(list);
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (host && port) return { kc: inCluster(host, port, dir), where: "the pod's service account" };
  return readHomeKubeConfig();
}

/** The in-cluster configuration: the service's address, the mounted CA and token, the pod's namespace. */
function inCluster(host: string, port: string, dir: string): KubeConfig {
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw new KubeConfigLoadError(`loadKubeConfig: KUBERNETES_SERVICE_PORT is ${JSON.stringify(port)}, not a port number`);
  const token = join(dir, 'token');
  const ca = join(dir, 'ca.crt');
  for (const file of [token, ca]) {
    if (!existsSync(file)) throw new KubeConfigLoadError(`loadKubeConfig: running in a pod (KUBERNETES_SERVICE_HOST is set) but ${file} does not exist; is a service account token mounted?`);
  }
  const namespaceFile = join(dir, 'namespace');
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : undefined;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server: `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}`, caFile: ca, skipTLSVerify: false }],
    // rxkube reads the token file again as soon as it changed, keeping the last good token while it is empty (HI-45).
    users: [{ name: 'service-account', authProvider: { name: 'tokenFile', config: { tokenFile: token } } }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'service-account', ...(namespace !== undefined && namespace !== '' && { namespace }) }],
    currentContext: 'in-cluster',
  });
  return kc;
}
