/**
 * The resource `rxkube watch` watches on a cluster: a built-in name is
 * resolved offline as before; any other name through the server's
 * discovery, as kubectl does (`websites`, `website`, `ws`,
 * `websites.example.com`), with the CRD's printer columns when it can be
 * read (semantics CR-103…CR-108).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { printable } from '../errors/printable.js';
import { readCrd, resolveServed, type ServedResource } from './discovery.js';
import { defaultColumns } from './printerColumns.js';
import { resolveResource, type CliResource } from './resources.js';
import { UsageError } from './usage.js';

/** A served resource as the command's resource: the built-in entry when rxkube knows it, else a custom resource. */
function fromServed(r: ServedResource): CliResource {
  const ref = r.group === '' ? `${r.version}/${r.plural}` : `${r.group}/${r.version}/${r.plural}`;
  try {
    const known = resolveResource(ref);
    if (known.builtIn) return known;
  } catch {
    // Not a name rxkube knows offline: the server's word stands.
  }
  return { ref, group: r.group, version: r.version, plural: r.plural, kind: r.kind, namespaced: r.namespaced, builtIn: false };
}

/**
 * Resolves what the user typed, asking the cluster when the name is not a built-in one.
 *
 * @param kc the cluster.
 * @param name the resource as typed.
 * @returns the resource, with printer columns for a custom resource whose CRD could be read.
 * @throws {UsageError} when the server serves nothing by that name (with close names), or discovery fails.
 */
export async function resolveWatched(kc: KubeConfig, name: string): Promise<CliResource> {
  let resource: CliResource | undefined;
  try {
    resource = resolveResource(name);
  } catch (err) {
    if (!(err instanceof TypeError) || name.includes('/')) throw err;
  }
  if (resource?.builtIn === true) return resource;
  if (resource === undefined) {
    try {
      resource = fromServed(await resolveServed(kc, name));
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`${JSON.stringify(printable(name))} is not a built-in resource name, and asking the server's discovery for it failed: ${printable((err as Error).message, { newlines: true })}`);
    }
    if (resource.builtIn) return resource;
  }
  // The CRD's default printer columns, or none when it cannot be read (not allowed, an aggregated API, a server
  // without CRDs): the table then shows name, status and age only.
  const columns = defaultColumns(await readCrd(kc, `${resource.plural}.${resource.group}`).catch(() => undefined), resource.version);
  return columns.length === 0 ? resource : { ...resource, columns };
}
