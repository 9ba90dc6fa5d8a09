import { printable } from '../errors/printable.js';
import { describeValue, booleanOption } from '../options/validate.js';
import type { KubeObject, OwnerReference } from '../store/types.js';

/**
 * Options of {@link ownerReference}.
 *
 * ## Example
 * ```ts
 * import { ownerReference, type KubeObject } from 'rxkube';
 * import type { OwnerReferenceOptions } from 'rxkube/core';
 * declare const website: KubeObject;
 * declare const deployment: KubeObject;
 *
 * const opts: OwnerReferenceOptions = { controller: true, for: deployment };
 * const ref = ownerReference(website, opts);
 * ```
 */
export interface OwnerReferenceOptions {
  /** Marks the owner as the managing controller (at most one per object); `owns` sources follow this reference. @default false (left out) */
  readonly controller?: boolean;
  /** With foreground deletion, the owner is not removed before this dependent is. @default false (left out) */
  readonly blockOwnerDeletion?: boolean;
  /**
   * The dependent that will carry the reference: the owner is refused when
   * the API server's garbage collector would not honour it (CR-121), and a
   * controller reference when another controller already holds the object
   * (CR-122). Its `metadata.namespace` must be set when it is namespaced.
   * @default undefined (not checked)
   */
  readonly for?: { readonly metadata?: { readonly namespace?: string | undefined; readonly ownerReferences?: readonly Partial<OwnerReference>[] | undefined } | undefined };
}

/** Printable, bounded text of a name read from an object. */
const shown = (value: string): string => `"${printable(value.length > 253 ? `${value.slice(0, 253)}…` : value)}"`;

/**
 * Builds the owner reference to `owner`, an object read from the server, as
 * controller-runtime's `SetOwnerReference` / `SetControllerReference` do:
 * `apiVersion`, `kind`, `name` and `uid` from the owner, and `controller` /
 * `blockOwnerDeletion` when asked for.
 *
 * An owner without any of the four is refused with a TypeError naming what
 * is missing (an object you built yourself has no `uid`: read it from the
 * server or the informer first). With `for: child`, the owner is also
 * checked against the child (CR-121): a namespaced owner may own only
 * objects of its own namespace, never a cluster-scoped object; a
 * cluster-scoped owner may own anything. kube-apiserver stores such a
 * reference without complaint, but its garbage collector treats it as
 * unresolvable and may delete the child, so the mistake is caught here,
 * before the request.
 *
 * ## Example
 * ```ts
 * import { objectClient, ownerReference, type KubeObject } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * declare const website: KubeObject; // from the informer's store
 *
 * const child = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'blog-config', namespace: 'default' }, data: { theme: 'dark' } };
 * await objectClient(kc, 'v1/configmaps').apply({
 *   ...child,
 *   metadata: { ...child.metadata, ownerReferences: [ownerReference(website, { controller: true, blockOwnerDeletion: true, for: child })] },
 * });
 * ```
 *
 * @param owner the owning object, as the server answered it (with `metadata.uid`).
 * @param opts `controller`, `blockOwnerDeletion`, and the child to check the owner against.
 * @returns the owner reference.
 * @throws {TypeError} when the owner lacks `apiVersion`, `kind`, `metadata.name` or `metadata.uid`, or cannot own the child.
 */
export function ownerReference(owner: KubeObject, opts: OwnerReferenceOptions = {}): OwnerReference {
  if (owner === null || typeof owner !== 'object' || Array.isArray(owner)) throw new TypeError(`ownerReference: owner must be an object, got ${describeValue(owner)}`);
  if (opts === null || typeof opts !== 'object') throw new TypeError(`ownerReference: opts must be an object, got ${describeValue(opts)}`);
  for (const key of ['controller', 'blockOwnerDeletion'] as const) booleanOption('ownerReference', key, opts[key], false);
  const meta = owner.metadata;
  const fields = { apiVersion: owner.apiVersion, kind: owner.kind, 'metadata.name': meta?.name, 'metadata.uid': meta?.uid };
  const missing = Object.entries(fields).filter(([, v]) => typeof v !== 'string' || v === '').map(([k]) => k);
  if (missing.length > 0) {
    const hint = missing.includes('metadata.uid') ? ' (only an object read from the server has a uid)' : missing.includes('kind') || missing.includes('apiVersion') ? ' (an object built by hand, or read by a client that drops them, may lack them: set them)' : '';
    throw new TypeError(`ownerReference: the owner has no ${missing.join(', ')}${hint}`);
  }
  const ref: OwnerReference = {
    apiVersion: owner.apiVersion as string,
    kind: owner.kind as string,
    name: meta?.name as string,
    uid: meta?.uid as string,
    ...(opts.controller === true && { controller: true }),
    ...(opts.blockOwnerDeletion === true && { blockOwnerDeletion: true }),
  };
  if (opts.for !== undefined) checkOwnable(ref, meta?.namespace, opts.for);
  return ref;
}

/** The garbage collector's rules (CR-121) and controller-runtime's one-controller rule (CR-122). */
function checkOwnable(ref: OwnerReference, ownerNamespace: string | undefined, child: NonNullable<OwnerReferenceOptions['for']>): void {
  if (child === null || typeof child !== 'object') throw new TypeError(`ownerReference: option "for" must be the dependent object, got ${describeValue(child)}`);
  const what = `${ref.kind} ${shown(ref.name)}`;
  const childNamespace = child.metadata?.namespace;
  if (ownerNamespace !== undefined && ownerNamespace !== '') {
    if (childNamespace === undefined || childNamespace === '') {
      throw new TypeError(`ownerReference: ${what} lives in namespace ${shown(ownerNamespace)} and cannot own a cluster-scoped object (if the object is namespaced, set its metadata.namespace)`);
    }
    if (childNamespace !== ownerNamespace) {
      throw new TypeError(`ownerReference: ${what} lives in namespace ${shown(ownerNamespace)} and cannot own an object in namespace ${shown(childNamespace)}: owner references never cross namespaces`);
    }
  }
  if (ref.controller !== true) return;
  const other = child.metadata?.ownerReferences?.find((r) => r?.controller === true && r.uid !== ref.uid);
  if (other !== undefined) {
    throw new TypeError(`ownerReference: the object is already controlled by ${printable(String(other.kind).slice(0, 63))} ${shown(String(other.name))}; an object has at most one controller`);
  }
}
