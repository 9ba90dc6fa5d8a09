import type { ResourceRef } from './types.js';
import { describeValue } from '../options/validate.js';

/** A {@link ResourceRef} with its parts checked and named. */
export interface ParsedResource {
  /** `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** `undefined` when the reference did not say (string form). */
  readonly namespaced: boolean | undefined;
  /** `v1/pods`, `apps/v1/deployments`: used in messages. */
  readonly name: string;
}

const SEGMENT = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/i;

/**
 * Parses a resource reference: `'v1/pods'` (core group), `'apps/v1/deployments'`,
 * `'example.com/v1/widgets'`, or `{ group?, version, plural, namespaced? }`.
 *
 * @param ref The reference.
 * @returns The parts; throws a TypeError naming the reference when it is malformed.
 */
export function parseResourceRef(ref: ResourceRef): ParsedResource {
  let group: string;
  let version: string;
  let plural: string;
  let namespaced: boolean | undefined;
  if (typeof ref === 'string') {
    const parts = ref.split('/');
    if (parts.length === 2) {
      group = '';
      [version, plural] = parts as [string, string];
    } else if (parts.length === 3) {
      [group, version, plural] = parts as [string, string, string];
    } else {
      throw new TypeError(`resource: expected 'version/plural' or 'group/version/plural', got ${describeValue(ref)}`);
    }
  } else if (typeof ref === 'object' && ref !== null) {
    group = ref.group ?? '';
    version = ref.version;
    plural = ref.plural;
    namespaced = ref.namespaced;
  } else {
    throw new TypeError(`resource: expected a string or { group, version, plural }, got ${describeValue(ref)}`);
  }
  if (group === 'core') group = '';
  for (const [label, value] of [['version', version], ['plural', plural]] as const) {
    if (typeof value !== 'string' || !SEGMENT.test(value)) {
      throw new TypeError(`resource: invalid ${label} ${JSON.stringify(value)} in ${JSON.stringify(ref)}`);
    }
  }
  if (typeof group !== 'string' || (group !== '' && !SEGMENT.test(group))) {
    throw new TypeError(`resource: invalid group ${JSON.stringify(group)} in ${JSON.stringify(ref)}`);
  }
  return { group, version, plural, namespaced, name: group === '' ? `${version}/${plural}` : `${group}/${version}/${plural}` };
}

/**
 * Builds the collection path of a resource: `/api/v1/pods`,
 * `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/namespaces/ns/deployments`.
 *
 * @param resource A parsed reference.
 * @param namespace A namespace, or undefined for every namespace (or a cluster-scoped resource).
 * @returns The URL path, without a trailing slash.
 */
export function resourcePath(resource: ParsedResource, namespace?: string): string {
  const base = resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  const ns = namespace === undefined || namespace === '' ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${base}${ns}/${resource.plural}`;
}
