import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

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
 * const opts: LoadKubeConfigOptions = { serviceAccountDir: '/tmp/sa' };
 * const kc = loadKubeConfig(opts);
 * ```
 */
export interface LoadKubeConfigOptions {
  /** Where the service-account `token`, `ca.crt` and `namespace` are. @default '/var/run/secrets/kubernetes.io/serviceaccount' */
  readonly serviceAccountDir?: string;
  /** The environment read for `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Loads the configuration a controller should use where it runs: in a pod
 * (`KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` set), the
 * in-cluster one — the API server at that address over HTTPS, trusted by
 * the service account's `ca.crt`, authenticated by its `token` (read again
 * as the kubelet rotates it) and with its `namespace` as the context's
 * namespace; anywhere else, the default kubeconfig (`$KUBECONFIG` or
 * `~/.kube/config`), as `kubectl` finds it.
 *
 * A pod whose token or CA is missing (no service account mounted,
 * `automountServiceAccountToken: false`) is an error naming the file, at
 * once, rather than a 401 on the first request.
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
 * @param opts where the service account is mounted, and the environment to read.
 * @returns the configuration.
 * @throws {Error} in a pod without a readable token or CA.
 */
export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`loadKubeConfig: options must be an object, got ${String(opts)}`);
  const dir = opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (typeof dir !== 'string' || dir === '') throw new TypeError(`loadKubeConfig: option "serviceAccountDir" must be a non-empty string, got ${JSON.stringify(dir)}`);
  const env = opts.env ?? process.env;
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  const kc = new KubeConfig();
  if (!host || !port) {
    kc.loadFromDefault();
    return kc;
  }
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw new Error(`loadKubeConfig: KUBERNETES_SERVICE_PORT is ${JSON.stringify(port)}, not a port number`);
  const token = join(dir, 'token');
  const ca = join(dir, 'ca.crt');
  for (const file of [token, ca]) {
    if (!existsSync(file)) throw new Error(`loadKubeConfig: running in a pod (KUBERNETES_SERVICE_HOST is set) but ${file} does not exist; is a service account token mounted?`);
  }
  const namespaceFile = join(dir, 'namespace');
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : undefined;
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server: `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}`, caFile: ca, skipTLSVerify: false }],
    // client-node's token-file provider reads the file again every minute, so a rotated token is picked up.
    users: [{ name: 'service-account', authProvider: { name: 'tokenFile', config: { tokenFile: token } } }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'service-account', ...(namespace !== undefined && namespace !== '' && { namespace }) }],
    currentContext: 'in-cluster',
  });
  return kc;
}
