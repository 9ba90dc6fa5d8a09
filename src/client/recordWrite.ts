import type { KubeConfig } from '@kubernetes/client-node';
import type { ApiStatus } from '../errors/api/KubeApiError.js';
import { clusterOf, resourceKey } from '../sources/identity.js';
import { parseResourceRef } from '../sources/resourceRef.js';
import { orderedResourceVersion } from '../sources/resourceVersion.js';
import type { ResourceRef } from '../sources/types.js';
import type { KubeObject } from '../store/types.js';
import { reportError } from '../errors/reportError.js';
import { writeLog } from './writeLog.js';
import { describeValue } from '../options/validate.js';

/**
 * Options of {@link recordWrite}.
 *
 * ## Example
 * ```ts
 * import { recordWrite } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 * declare const status: V1ConfigMap;
 *
 * recordWrite(kc, 'v1/configmaps', status, { namespace: 'default' });
 * ```
 */
export interface RecordWriteOptions {
  /**
   * The namespace the write was sent to. Needed only for a deletion the
   * server answered with a `Status`, which names the object but not its
   * namespace; an answered object carries its own.
   * @default undefined (the answer's namespace, else cluster scope)
   */
  readonly namespace?: string;
}

/**
 * Records a write made through another client (client-node's typed APIs,
 * server-side apply, …) in the process's write log, as `objectClient` does
 * for its own writes, so that controllers wait for their caches to show it
 * before the next reconcile reads them (docs/semantics.md RYW-1).
 *
 * Pass what the server answered: the object (its namespace, name, labels
 * and `metadata.resourceVersion` are kept), or for a deletion the `Status`
 * (its `details.name` and `details.uid`, with `opts.namespace`). An answer
 * without a decimal resourceVersion (and a `Status` without a uid) records
 * nothing, since it cannot be waited for.
 *
 * ## Example
 * ```ts
 * import { AppsV1Api } from '@kubernetes/client-node';
 * import { recordWrite } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const apps = kc.makeApiClient(AppsV1Api);
 * const patched = await apps.patchNamespacedDeployment({ name: 'web', namespace: 'default', body: [{ op: 'add', path: '/metadata/labels/tier', value: 'gold' }] });
 * recordWrite(kc, 'apps/v1/deployments', patched);
 * ```
 *
 * @param kc the kubeconfig the write went through; its current cluster's server URL names the cluster.
 * @param resource the resource written to: `'v1/configmaps'`, `'apps/v1/deployments'` or `{ group, version, plural }`.
 * @param answer what the server answered.
 * @param opts the namespace of a deletion answered by a `Status`.
 * @throws {TypeError} when `kc` has no current cluster or `resource` is malformed.
 */
export function recordWrite(kc: KubeConfig, resource: ResourceRef, answer: KubeObject | ApiStatus, opts: RecordWriteOptions = {}): void {
  if (kc === null || typeof kc !== 'object' || typeof kc.getCurrentCluster !== 'function') throw new TypeError(`recordWrite: kc must be a KubeConfig, got ${describeValue(kc)}`);
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new TypeError('recordWrite: the kubeconfig has no current cluster');
  const parsed = parseResourceRef(resource);
  if (opts === null || typeof opts !== 'object') throw new TypeError(`recordWrite: opts must be an object, got ${describeValue(opts)}`);
  if (opts.namespace !== undefined && (typeof opts.namespace !== 'string' || opts.namespace === '')) {
    throw new TypeError(`recordWrite: option "namespace" must be a non-empty string, got ${describeValue(opts.namespace)}`);
  }
  recordAnswer(resourceKey({ cluster: clusterOf(cluster.server), group: parsed.group, plural: parsed.plural }), opts.namespace, undefined, answer);
}

/**
 * Puts one successful write's answer in the write log (internal: objectClient
 * calls it for every write verb). Never throws: an answer it cannot read
 * records nothing.
 *
 * @param resource the `resourceKey` written to.
 * @param namespace the namespace the request went to.
 * @param name the name in the request path, for a `Status` that names nothing.
 * @param answer the parsed answer.
 */
export function recordAnswer(resource: string, namespace: string | undefined, name: string | undefined, answer: unknown): void {
  try {
    record(resource, namespace, name, answer);
  } catch (err) {
    // The write itself succeeded; failing to log it must not turn it into a failure.
    reportError(err);
  }
}

function record(resource: string, namespace: string | undefined, name: string | undefined, answer: unknown): void {
  if (answer === null || typeof answer !== 'object') return;
  const a = answer as { kind?: unknown; metadata?: KubeObject['metadata']; details?: { name?: unknown; uid?: unknown } };
  if (a.kind === 'Status') {
    // A deletion that completed: no resourceVersion to wait for, only the uid that must leave the caches.
    const uid = a.details?.uid;
    const objName = typeof a.details?.name === 'string' && a.details.name !== '' ? a.details.name : name;
    if (typeof uid !== 'string' || uid === '' || objName === undefined) return;
    writeLog.record({ resource, key: keyOf(namespace, objName), namespace, labels: undefined, rv: undefined, uid });
    return;
  }
  const meta = a.metadata;
  const objName = meta?.name;
  const rv = orderedResourceVersion(meta?.resourceVersion);
  if (typeof objName !== 'string' || objName === '' || rv === undefined) return;
  const ns = typeof meta?.namespace === 'string' && meta.namespace !== '' ? meta.namespace : namespace;
  const labels = meta?.labels !== null && typeof meta?.labels === 'object' ? meta.labels : undefined;
  writeLog.record({ resource, key: keyOf(ns, objName), namespace: ns, labels, rv, uid: typeof meta?.uid === 'string' ? meta.uid : undefined });
}

function keyOf(namespace: string | undefined, name: string): string {
  return namespace === undefined ? name : `${namespace}/${name}`;
}
