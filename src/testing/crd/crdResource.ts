import { crdCauses, specOf, versionsOf } from './crdValidation.js';
import { NAME_COLUMN } from './customResourceTypes.js';
import { invalidFields } from '../server/status.js';
import { toResourceType, type ResourceType } from '../storage/resources.js';
import { isRecord } from '../writes/objectRules.js';

// The `customresourcedefinitions` resource itself (apiextensions.k8s.io/v1, cluster-scoped, with a status
// subresource): its defaults, the status a new CRD starts with, and its validation on every write.

type AnyObject = Record<string, unknown>;

/** The group of CRDs, as errors name it. */
export const CRD_GROUP = 'apiextensions.k8s.io';
/** The id the simulator knows the resource by. */
export const CRD_RESOURCE = 'apiextensions.k8s.io/v1/customresourcedefinitions';

/** The spec defaults apiextensions' v1 defaulting applies: singular, listKind, and no conversion. */
function withSpecDefaults(crd: AnyObject): AnyObject {
  const spec = specOf(crd);
  if (!isRecord(crd['spec'])) return crd;
  const names = isRecord(spec['names']) ? { ...spec['names'] } : undefined;
  if (names !== undefined && typeof names['kind'] === 'string') {
    if (names['singular'] === undefined || names['singular'] === '') names['singular'] = names['kind'].toLowerCase();
    if (names['listKind'] === undefined || names['listKind'] === '') names['listKind'] = `${names['kind']}List`;
  }
  return {
    ...crd,
    spec: { ...spec, ...(names === undefined ? {} : { names }), conversion: isRecord(spec['conversion']) ? spec['conversion'] : { strategy: 'None' } },
  };
}

/** A new CRD's status: no conditions and no names yet, its storage version recorded. */
function initialStatus(crd: AnyObject): void {
  const storage = versionsOf(specOf(crd)).find((v) => v['storage'] === true)?.['name'];
  crd['status'] = { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: typeof storage === 'string' ? [storage] : [] };
}

/**
 * Why a CRD would be refused on create, as `Kind.group "name" is invalid: …`
 * text, or undefined when it would be accepted: for options checked up front.
 */
export function crdRefusal(crd: unknown): string | undefined {
  if (!isRecord(crd)) return 'a CustomResourceDefinition must be an object';
  if (crd['apiVersion'] !== undefined && crd['apiVersion'] !== `${CRD_GROUP}/v1`) return `apiVersion must be ${CRD_GROUP}/v1, got ${JSON.stringify(crd['apiVersion'])}`;
  if (crd['kind'] !== undefined && crd['kind'] !== 'CustomResourceDefinition') return `kind must be CustomResourceDefinition, got ${JSON.stringify(crd['kind'])}`;
  const withMeta = { ...crd, metadata: isRecord(crd['metadata']) ? crd['metadata'] : {} };
  const causes = crdCauses(withSpecDefaults(withMeta), undefined);
  return causes.length === 0 ? undefined : invalidFields(CRD_GROUP, 'CustomResourceDefinition', causes, String(withMeta.metadata['name'] ?? '')).message;
}

/**
 * The CRD resource: defaulted, validated on every write (a 422 naming
 * `CustomResourceDefinition.apiextensions.k8s.io`), refusing updates without
 * a resourceVersion, as apiextensions' strategy does.
 */
export function crdResourceType(): ResourceType {
  return toResourceType(
    { group: CRD_GROUP, version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, subresources: { status: {} } },
    {
      builtIn: true,
      unconditionalUpdate: false,
      defaults: initialStatus,
      admit: (next, old) => {
        const crd = withSpecDefaults(next);
        const causes = crdCauses(crd, old);
        if (causes.length > 0) throw invalidFields(CRD_GROUP, 'CustomResourceDefinition', causes, String((crd['metadata'] as AnyObject)['name'] ?? ''));
        return crd;
      },
      // kube-apiserver's printer for CRDs: the name and the creation time as a timestamp.
      columns: [
        NAME_COLUMN,
        { name: 'Created At', type: 'date', format: '', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', priority: 0, jsonPath: '.metadata.creationTimestamp', timestamp: true },
      ],
    },
  );
}
