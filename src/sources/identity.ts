// How a source and a write name the cluster and resource they are about, so that one can be matched with the
// other (docs/semantics.md RYW-2). Internal.

import type { SourceIdentity } from './types.js';

/**
 * The cluster part of an identity: the server URL normalised as `new URL()`
 * does (scheme and host lower-cased, a default port dropped), without
 * trailing slashes, so two kubeconfigs naming one server alike match.
 */
export function clusterOf(server: string): string {
  let text = server;
  try {
    const url = new URL(server);
    text = `${url.origin}${url.pathname}`;
  } catch {
    // Not a URL: the text itself, trimmed, is the best name there is.
  }
  return text.replace(/\/+$/, '');
}

/**
 * The key writes and caches are matched by: cluster, group and plural. The
 * version is left out because every served version of a resource reads the
 * same stored objects, with the same resourceVersions.
 */
export function resourceKey(identity: Pick<SourceIdentity, 'cluster' | 'group' | 'plural'>): string {
  return `${identity.cluster} ${identity.group}/${identity.plural}`;
}
