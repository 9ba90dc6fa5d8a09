/**
 * Where `rxkube crd types` takes its CRD from: a YAML or JSON file, or the
 * cluster by CRD name (`websites.example.com`) or by any name discovery
 * knows the resource by (`websites`, `website`, `ws`) (semantics CR-92).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { printable } from '../errors/printable.js';
import { readCrdFile } from './crdManifest.js';
import { readCrd, resolveServed } from './discovery.js';
import { UsageError } from './usage.js';

/**
 * The CRDs to type: those of the file, or the one the cluster has for the resource.
 *
 * @param file the file argument, if given.
 * @param resource `-r`, if given.
 * @param cluster loads the kubeconfig (only called for `-r`).
 * @returns the CRDs.
 * @throws {UsageError} when both or neither are given, the file holds no CRD, or the cluster has none for the name.
 */
export async function crdTypesInput(file: string | undefined, resource: string | undefined, cluster: () => KubeConfig): Promise<Record<string, unknown>[]> {
  if ((file === undefined) === (resource === undefined)) throw new UsageError('give a CRD file or -r <resource>, one of the two');
  if (file !== undefined) return readCrdFile(file);
  const name = resource as string;
  const kc = cluster();
  // A CRD's own name (plural.group) is one GET; anything else is found through discovery first.
  const direct = name.includes('.') ? await readCrd(kc, name.toLowerCase()) : undefined;
  if (direct !== undefined) return [direct];
  const served = await resolveServed(kc, name);
  if (served.group === '' || !served.group.includes('.')) throw new UsageError(`${printable(name)} is ${served.group === '' ? '' : `${printable(served.group)}/`}${printable(served.plural)}, a built-in resource, not a custom resource`);
  const crdName = `${served.plural}.${served.group}`;
  const crd = await readCrd(kc, crdName);
  if (crd === undefined) throw new UsageError(`${printable(crdName)} is served, but the cluster has no CustomResourceDefinition by that name (an aggregated API?)`);
  return [crd];
}
