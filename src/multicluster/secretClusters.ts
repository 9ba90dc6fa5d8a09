import { KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { defer, distinctUntilChanged, filter, map, merge, shareReplay, tap } from 'rxjs';
import { MalformedDocumentError } from '../errors/MalformedDocumentError.js';
import { reportError } from '../errors/reportError.js';
import { informer } from '../informer/informer.js';
import { kubeSource } from '../sources/kubeSource.js';
import { checkOptionNames, functionOption, describeValue, booleanOption, optionNames } from '../options/validate.js';
import { kubeConfigFingerprint } from './clusterChanges.js';
import { localReferences } from './localReferences.js';
import { ClusterError } from './ClusterError.js';
import type { Cluster, ClusterProvider } from './types.js';
import { syncedOf } from '../informer/syncedOf.js';

/**
 * Options of {@link secretClusters}.
 *
 * ## Example
 * ```ts
 * import { secretClusters } from 'rxkube';
 * import { type SecretClustersOptions } from 'rxkube/core';
 *
 * // Cluster API: every workload cluster's admin kubeconfig, under `value`, named by its label.
 * const capi: SecretClustersOptions = {
 *   namespace: 'fleet',
 *   labelSelector: 'cluster.x-k8s.io/cluster-name',
 *   keys: ['value'],
 *   clusterName: (s) => s.metadata?.labels?.['cluster.x-k8s.io/cluster-name'],
 * };
 * ```
 */
export interface SecretClustersOptions {
  /** The hub namespace holding the Secrets. Required. */
  readonly namespace: string;
  /** Only Secrets with these labels (e.g. `sigs.k8s.io/multicluster-runtime-kubeconfig=true`). @default every Secret of the namespace */
  readonly labelSelector?: string;
  /** Data keys that may hold the kubeconfig, tried in order; a Secret with none of them is not a cluster. @default ['kubeconfig', 'value'] */
  readonly keys?: readonly string[];
  /** The cluster's name for a Secret; `undefined` or `''` leaves the Secret out. @default the Secret's name */
  readonly clusterName?: (secret: V1Secret) => string | undefined;
  /**
   * Let a Secret's kubeconfig name what is on this machine: an exec plugin or
   * auth provider (a command run in this process's pod), a token file, a
   * client certificate or key file, a CA file. Off, such a Secret is
   * reported as a `ClusterError` naming the fields and left out, since
   * whoever can write the Secret could otherwise run a command here or have
   * this pod's own ServiceAccount token sent to a server of theirs. Turn it
   * on only when the Secrets' writers are trusted as much as this pod.
   * @default false
   */
  readonly allowLocalCredentials?: boolean;
  /** Receives unusable Secrets (as `ClusterError`s) and the hub informer's errors; the last set is kept meanwhile. @default reportError (stderr, rate-limited) */
  readonly onError?: (err: Error) => void;
}

const OPTION_NAMES = optionNames<SecretClustersOptions>({ namespace: true, labelSelector: true, keys: true, clusterName: true, allowLocalCredentials: true, onError: true });

/**
 * The clusters whose kubeconfigs are kept in Secrets of a namespace on a hub
 * cluster, as Cluster API (`<cluster>-kubeconfig`, key `value`) and
 * multicluster-runtime's kubeconfig provider (key `kubeconfig`, by label)
 * keep them. An informer on the hub follows the Secrets: one created joins
 * its cluster, one deleted removes it, one rewritten replaces it. A Secret
 * whose kubeconfig does not parse (its cause a `MalformedDocumentError`
 * giving the position, quoting nothing) or names this machine's commands or
 * files (`allowLocalCredentials`, HI-49) is reported as a `ClusterError` and
 * left out. The first set comes once the Secrets are listed; while the hub
 * is down the last set stays. The provider is shared (MC-1).
 *
 * ## Example
 * ```ts
 * import { kubeSource, multiClusterInformer, secretClusters, unwrapTombstone } from 'rxkube';
 * import { KubeConfig } from '@kubernetes/client-node';
 *
 * const hub = new KubeConfig();
 * hub.loadFromDefault();
 * const members = secretClusters(hub, { namespace: 'fleet', labelSelector: 'fleet.example.com/member=true' });
 * const nodes = multiClusterInformer(members, (c) => kubeSource(c.kubeConfig, 'v1/nodes'));
 * nodes.subscribe((e) => console.log(e.cluster, e.type, unwrapTombstone(e.obj)?.metadata?.name));
 * ```
 *
 * @param hub where the Secrets are.
 * @param opts the namespace, which Secrets, and where in them the kubeconfig is.
 * @returns the provider, reading nothing until subscribed.
 * @throws {TypeError} for an option that is not valid (a malformed selector included).
 */
export function secretClusters(hub: KubeConfig, opts: SecretClustersOptions): ClusterProvider {
  const where = 'secretClusters';
  if (typeof hub !== 'object' || hub === null || typeof (hub as Partial<KubeConfig>).getCurrentCluster !== 'function') throw new TypeError(`${where}: hub must be a KubeConfig, got ${describeValue(hub)}`);
  const o = checkOptionNames(where, opts, OPTION_NAMES) as unknown as SecretClustersOptions;
  if (typeof o.namespace !== 'string' || o.namespace === '') throw new TypeError(`${where}: option "namespace" must be a non-empty string, got ${describeValue(o.namespace)}`);
  const keys = o.keys ?? ['kubeconfig', 'value'];
  if (!Array.isArray(keys) || keys.length === 0 || keys.some((k) => typeof k !== 'string' || k === '')) throw new TypeError(`${where}: option "keys" must be a non-empty list of data keys, got ${describeValue(o.keys)}`);
  const nameOf = functionOption<(secret: V1Secret) => string | undefined>(where, 'clusterName', o.clusterName) ?? ((s: V1Secret) => s.metadata?.name);
  const allowLocal = booleanOption(where, 'allowLocalCredentials', o.allowLocalCredentials, false);
  const report = functionOption<(err: Error) => void>(where, 'onError', o.onError) ?? reportError;
  // Built now, so a bad selector throws here rather than on the first subscribe.
  const source = kubeSource(hub, 'v1/secrets', { namespace: o.namespace, ...(o.labelSelector !== undefined && { labelSelector: o.labelSelector }) });

  const parse = (secret: V1Secret): Cluster | undefined => {
    const id = `Secret ${o.namespace}/${secret.metadata?.name ?? '?'}`;
    const key = keys.find((k) => typeof secret.data?.[k] === 'string');
    if (key === undefined) return undefined;
    let name: string | undefined;
    try {
      name = nameOf(secret);
    } catch (err) {
      report(new Error(`${where}: clusterName threw for ${id}; it is left out`, { cause: err }));
      return undefined;
    }
    if (name === undefined || name === '') return undefined;
    const unusable = (why: Error): undefined => {
      report(new ClusterError(name, `the kubeconfig in ${id} (key ${JSON.stringify(key)}) cannot be used: ${why.message}; it is left out`, why));
      return undefined;
    };
    const text = Buffer.from(secret.data?.[key] as string, 'base64').toString('utf8');
    const kc = new KubeConfig();
    try {
      // Before client-node sees it: it reads a token-file while it parses (HI-49).
      const local = allowLocal ? [] : localReferences(text);
      if (local.length > 0) {
        return unusable(new Error(`it names what is on this machine (${local.join(', ')}), which a Secret may not unless allowLocalCredentials is set`));
      }
      kc.loadFromString(text);
    } catch (err) {
      // The parser's error quotes the document (tokens and keys included) and holds all of it: only the position is kept.
      return unusable(err instanceof MalformedDocumentError ? err : MalformedDocumentError.from(err));
    }
    try {
      if (!kc.getCurrentContext() && kc.getContexts()[0] !== undefined) kc.setCurrentContext((kc.getContexts()[0] as { name: string }).name);
      kubeConfigFingerprint(kc);
      return { name, kubeConfig: kc };
    } catch (err) {
      return unusable(err as Error);
    }
  };

  return defer(() => {
    const secrets = informer(source, { name: `cluster Secrets in ${o.namespace}`, onError: report });
    // What each Secret gave, by uid, kept while its resourceVersion is unchanged so a KubeConfig keeps its identity.
    let parsed = new Map<string, { readonly resourceVersion: string | undefined; readonly cluster: Cluster | undefined }>();
    const current = (): readonly Cluster[] => {
      const now: typeof parsed = new Map();
      for (const secret of secrets.store.list()) {
        const { uid, name, resourceVersion } = secret.metadata ?? {};
        const was = parsed.get(uid ?? name ?? '');
        now.set(uid ?? name ?? '', was !== undefined && was.resourceVersion === resourceVersion ? was : { resourceVersion, cluster: parse(secret) });
      }
      parsed = now;
      return [...now.values()].flatMap((e) => e.cluster ?? []).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    };
    // Kept by status$, which emits on each change of sync: a Secret event reads a flag, not a whole status().
    let synced = false;
    return merge(secrets, syncedOf(secrets).pipe(tap((s) => (synced = s)))).pipe(
      filter(() => synced),
      map(current),
      // The same Secrets again (another Secret of the namespace changed) is not news.
      distinctUntilChanged((a, b) => a.length === b.length && a.every((c, i) => c === b[i])),
    );
  }).pipe(shareReplay({ bufferSize: 1, refCount: true }));
}
