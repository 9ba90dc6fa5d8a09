// A provider's successive sets as joins, leaves and replacements (MC-1), the one reading of a provider. Internal.

import type { KubeConfig } from '@kubernetes/client-node';
import { concatWith, defer, filter, map, mergeMap, NEVER, takeWhile, type Observable } from 'rxjs';
import { ClusterError } from './ClusterError.js';
import type { Cluster, ClusterProvider } from './types.js';
import { describeValue } from '../options/validate.js';

/** One change of a fleet. */
export type ClusterChange =
  | { readonly type: 'join'; readonly cluster: Cluster }
  | { readonly type: 'leave'; readonly name: string }
  | { readonly type: 'replace'; readonly cluster: Cluster };

/**
 * What a KubeConfig reaches and as whom (its current context, cluster and user): equal for a fresh but equal object.
 * @throws {TypeError} when it has no current context with a cluster.
 */
export function kubeConfigFingerprint(kc: KubeConfig): string {
  const contextName = kc.getCurrentContext();
  const context = contextName ? kc.getContextObject(contextName) : null;
  const cluster = kc.getCurrentCluster();
  if (cluster === null || context === null) throw new TypeError(`its KubeConfig has no current context with a cluster (current context ${JSON.stringify(contextName ?? '')})`);
  return JSON.stringify([context, cluster, kc.getCurrentUser()]);
}

/**
 * Each cluster's lifetime in a fleet's (shared) `changes`: `each(cluster, later)` from its join, merged, where
 * `later` is the cluster's own further changes, up to and including its leave.
 */
export function eachCluster<R>(changes: Observable<ClusterChange>, each: (cluster: Cluster, later: Observable<ClusterChange>) => Observable<R>): Observable<R> {
  const named = (name: string) => (c: ClusterChange) => (c.type === 'leave' ? c.name : c.cluster.name) === name;
  return changes.pipe(
    filter((c): c is ClusterChange & { type: 'join' } => c.type === 'join'),
    mergeMap(({ cluster }) => each(cluster, changes.pipe(filter(named(cluster.name)), takeWhile((c) => c.type !== 'leave', true)))),
  );
}

interface Known {
  readonly cluster: Cluster;
  readonly fingerprint: string;
}

/**
 * The changes each emission of `provider` makes to the set before it: one array per emission, empty when nothing
 * changed. Invalid entries are reported and left out, as if absent (MC-1).
 *
 * @param provider the clusters.
 * @param report where invalid entries are reported.
 * @returns the changes, per emission; errors with the provider, and never completes: the last set holds (MC-1).
 */
export function clusterChanges(provider: ClusterProvider, report: (err: Error) => void): Observable<readonly ClusterChange[]> {
  return defer(() => {
    // The set as of the last emission, by name: what the next one is compared with.
    let known = new Map<string, Known>();
    return provider.pipe(
      map((set): readonly ClusterChange[] => {
        if (!Array.isArray(set)) {
          report(new TypeError(`a cluster provider must emit arrays of { name, kubeConfig }, got ${describeValue(set)}; the set is unchanged`));
          return [];
        }
        const next = new Map<string, Known>();
        for (const entry of set as readonly unknown[]) {
          const known = checkEntry(entry, next, report);
          if (known !== undefined) next.set(known.cluster.name, known);
        }
        const changes: ClusterChange[] = [];
        for (const name of known.keys()) if (!next.has(name)) changes.push({ type: 'leave', name });
        for (const [name, entry] of next) {
          const before = known.get(name);
          if (before === undefined) changes.push({ type: 'join', cluster: entry.cluster });
          else if (before.fingerprint !== entry.fingerprint) changes.push({ type: 'replace', cluster: entry.cluster });
          // Unchanged: keep the KubeConfig already in use, so a controller's context keeps its identity.
          else next.set(name, before);
        }
        known = next;
        return changes;
      }),
      concatWith(NEVER),
    );
  });
}

/** An entry of a set, checked; undefined (and reported) when unusable. */
function checkEntry(entry: unknown, taken: ReadonlyMap<string, Known>, report: (err: Error) => void): Known | undefined {
  const c = entry as Partial<Cluster> | null;
  if (typeof entry !== 'object' || c === null || typeof c.name !== 'string' || c.name === '') {
    report(new TypeError(`a cluster provider gave ${describeValue(entry)} where a { name, kubeConfig } with a non-empty name belongs; it is ignored`));
    return undefined;
  }
  if (taken.has(c.name)) {
    report(new ClusterError(c.name, 'the provider gave this name twice in one set; the second one is ignored'));
    return undefined;
  }
  const kc = c.kubeConfig;
  if (typeof kc !== 'object' || kc === null || typeof kc.getCurrentCluster !== 'function') {
    report(new ClusterError(c.name, `kubeConfig must be a KubeConfig, got ${describeValue(kc)}; the cluster is ignored`));
    return undefined;
  }
  try {
    return { cluster: c as Cluster, fingerprint: kubeConfigFingerprint(kc) };
  } catch (err) {
    report(new ClusterError(c.name, `${(err as Error).message}; the cluster is ignored`, err));
    return undefined;
  }
}
