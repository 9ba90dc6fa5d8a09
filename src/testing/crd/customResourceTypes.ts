import { admit, defaultOnRead } from './admission.js';
import type { Names } from './crdNames.js';
import { specOf, versionsOf } from './crdValidation.js';
import { invalidFields, StatusError } from '../server/status.js';
import { toResourceType, type PrinterColumn, type ResourceType, type ScalePaths } from '../storage/resources.js';
import { isRecord } from '../writes/objectRules.js';

// The resources a served CRD adds to the simulator: one per served version, under the accepted names,
// with the version's schema admitting every write, its subresources, and its printer columns.

type AnyObject = Record<string, unknown>;

/** The first column of every custom resource's Table (and of the CRDs' own). */
export const NAME_COLUMN: PrinterColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
  jsonPath: undefined,
};

/** The column a CRD without printer columns gets after Name. */
const AGE_COLUMN: PrinterColumn = {
  name: 'Age',
  type: 'date',
  format: '',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  priority: 0,
  jsonPath: '.metadata.creationTimestamp',
};

function columnsOf(version: AnyObject): PrinterColumn[] {
  const given = Array.isArray(version['additionalPrinterColumns']) ? version['additionalPrinterColumns'].filter(isRecord) : [];
  const columns = given.map((c) => ({
    name: String(c['name']),
    type: String(c['type']),
    format: typeof c['format'] === 'string' ? c['format'] : '',
    description: typeof c['description'] === 'string' ? c['description'] : '',
    priority: typeof c['priority'] === 'number' ? c['priority'] : 0,
    jsonPath: String(c['jsonPath']),
  }));
  return [NAME_COLUMN, ...(columns.length === 0 ? [AGE_COLUMN] : columns)];
}

function scaleOf(subresources: AnyObject): ScalePaths | undefined {
  const s = subresources['scale'];
  if (!isRecord(s)) return undefined;
  const selector = s['labelSelectorPath'];
  return { specReplicasPath: String(s['specReplicasPath']), statusReplicasPath: String(s['statusReplicasPath']), labelSelectorPath: typeof selector === 'string' ? selector : undefined };
}

/** Field paths usable in field selectors: `.spec.color` → `spec.color`. */
function selectableOf(version: AnyObject): string[] {
  const fields = Array.isArray(version['selectableFields']) ? version['selectableFields'].filter(isRecord) : [];
  return fields.map((f) => String(f['jsonPath']).replace(/^\./, '')).filter((f) => f !== '');
}

/**
 * The resources of a CRD's served versions under its accepted names, all
 * kept in one store (objects stay in the version they were written in and
 * are served in the version read through). Every
 * write is admitted against the version's `openAPIV3Schema`; a refusal is
 * 422 `Invalid` naming `<Kind>.<group>`, a create into a terminating CRD
 * 405 `MethodNotAllowed`.
 *
 * @param crd the stored CRD.
 * @param names its accepted names.
 * @param terminating true once the CRD is being deleted (creates are refused), asked on each write.
 */
export function customResourceTypes(crd: AnyObject, names: Names, terminating: () => boolean): ResourceType[] {
  const spec = specOf(crd);
  const group = String(spec['group']);
  const namespaced = spec['scope'] === 'Namespaced';
  const versions = versionsOf(spec);
  const storageVersion = String(versions.find((v) => v['storage'] === true)?.['name']);
  // One store for every version, named after the CRD so that it outlives a change of storage version.
  const store: ResourceType = {
    ...toResourceType({ group, version: storageVersion, plural: names.plural, kind: names.kind, listKind: names.listKind, namespaced }),
    id: `${names.plural}.${group}`,
  };
  return versions
    .filter((v) => v['served'] === true)
    .map((v) => {
      const schema = isRecord(v['schema']) && isRecord(v['schema']['openAPIV3Schema']) ? v['schema']['openAPIV3Schema'] : undefined;
      const subresources = isRecord(v['subresources']) ? v['subresources'] : {};
      const columns = columnsOf(v);
      const scale = scaleOf(subresources);
      return toResourceType(
        {
          group,
          version: String(v['name']),
          plural: names.plural,
          kind: names.kind,
          listKind: names.listKind,
          namespaced,
          selectableFields: selectableOf(v),
          subresources: isRecord(subresources['status']) ? { status: {} } : {},
        },
        {
          admit: (next, old, subresource) => {
            if (old === undefined && terminating()) throw new StatusError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating');
            // Admission works on a copy of its own, so parts `next` shares with the stored object stay untouched.
            const { object, causes } = admit(schema, next, old, subresource);
            if (causes.length > 0) throw invalidFields(group, names.kind, causes, String((next['metadata'] as AnyObject)['name'] ?? ''));
            return object;
          },
          // A body is decoded with the version's defaults and pruning before admission webhooks see it.
          decode: (obj) => defaultOnRead(schema, obj),
          discovery: { singularName: names.singular, shortNames: names.shortNames, categories: names.categories },
          columns,
          storage: store,
          ...(scale === undefined ? {} : { scale }),
        },
      );
    });
}
