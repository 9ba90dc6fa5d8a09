import { isCustomResource, type CustomResource } from '../crd/customResource.js';
import { describeValue } from '../options/validate.js';
import { builtInKind } from '../sources/builtInKinds.js';
import { builtInScope, type BuiltInResource } from '../sources/resources.js';

/** What a webhook is for: a built-in resource's name (`'apps/v1/deployments'`) or a `customResource` definition (one version's view). */
export type AdmissionResource = BuiltInResource | CustomResource<any, any>;

/** The resource of a webhook, with the names a path, a rule and a review check need. */
export interface WebhookTarget {
  /** `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}


/**
 * Reads a webhook's resource, or throws a TypeError naming it.
 *
 * @param where the function, for messages.
 * @param resource a built-in name or a definition.
 * @returns its group, version, kind, plural and scope.
 */
export function webhookTarget(where: string, resource: unknown): WebhookTarget {
  if (isCustomResource(resource)) {
    return { group: resource.group, version: resource.version, kind: resource.kind, plural: resource.plural, namespaced: resource.namespaced };
  }
  const kind = typeof resource === 'string' ? builtInKind(resource) : undefined;
  if (typeof resource === 'string' && kind !== undefined) {
    const parts = resource.split('/');
    const [group, version, plural] = parts.length === 2 ? ['', parts[0] as string, parts[1] as string] : (parts as [string, string, string]);
    return { group, version, kind, plural, namespaced: builtInScope(resource) === true };
  }
  throw new TypeError(`${where}: resource must be a built-in resource name such as 'apps/v1/deployments' or a customResource definition, got ${describeValue(resource)}`);
}
