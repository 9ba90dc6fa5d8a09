import { structuralCauses } from './admission.js';
import type { FieldCause } from '../server/status.js';
import { isRecord } from '../writes/objectRules.js';
import { DNS1035, DNS1035_MESSAGE } from './schema/embedded.js';

// What kube-apiserver's apiextensions validation refuses in a CustomResourceDefinition, reduced to what
// decides whether the simulator can serve it: names, group, scope, versions, schemas, printer columns,
// subresources, and the rules an update must keep.

type AnyObject = Record<string, unknown>;

const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];

const quote = (v: unknown): string => JSON.stringify(typeof v === 'string' ? v : String(v));
const invalid = (field: string, value: unknown, why: string): FieldCause => ({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${quote(value)}: ${why}` });
const required = (field: string, why?: string): FieldCause => ({ reason: 'FieldValueRequired', field, message: why === undefined ? 'Required value' : `Required value: ${why}` });
const unsupported = (field: string, value: unknown, supported: readonly string[]): FieldCause => ({
  reason: 'FieldValueNotSupported',
  field,
  message: `Unsupported value: ${quote(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
});

/** The spec of a CRD, or `{}` when it has none (its absence is reported). */
export function specOf(crd: AnyObject): AnyObject {
  return isRecord(crd['spec']) ? crd['spec'] : {};
}

/** The versions of a CRD spec that are objects. */
export function versionsOf(spec: AnyObject): AnyObject[] {
  return Array.isArray(spec['versions']) ? spec['versions'].filter(isRecord) : [];
}

function checkLabel(causes: FieldCause[], field: string, value: unknown, optional: boolean): void {
  if (value === undefined || value === '') {
    if (!optional) causes.push(required(field));
    return;
  }
  if (typeof value !== 'string' || !DNS1035.test(value)) causes.push(invalid(field, value, DNS1035_MESSAGE));
}

function checkNames(causes: FieldCause[], names: AnyObject): void {
  checkLabel(causes, 'spec.names.plural', names['plural'], false);
  checkLabel(causes, 'spec.names.singular', names['singular'], true);
  const kind = names['kind'];
  if (kind === undefined || kind === '') causes.push(required('spec.names.kind'));
  else if (typeof kind !== 'string' || !DNS1035.test(kind.toLowerCase())) causes.push(invalid('spec.names.kind', kind, DNS1035_MESSAGE));
  const listKind = names['listKind'];
  if (listKind !== undefined && listKind !== '') {
    if (typeof listKind !== 'string' || !DNS1035.test(listKind.toLowerCase())) causes.push(invalid('spec.names.listKind', listKind, DNS1035_MESSAGE));
    else if (listKind === kind) causes.push(invalid('spec.names.listKind', listKind, 'kind and listKind may not be the same or listKind must be kindList'));
  }
  for (const [i, s] of (Array.isArray(names['shortNames']) ? names['shortNames'] : []).entries()) checkLabel(causes, `spec.names.shortNames[${i}]`, s, false);
  for (const [i, c] of (Array.isArray(names['categories']) ? names['categories'] : []).entries()) checkLabel(causes, `spec.names.categories[${i}]`, c, false);
}

function checkColumns(causes: FieldCause[], at: string, columns: unknown): void {
  if (columns === undefined) return;
  if (!Array.isArray(columns)) return void causes.push(invalid(at, columns, 'must be a list'));
  for (const [i, c] of columns.entries()) {
    const f = `${at}[${i}]`;
    if (!isRecord(c)) {
      causes.push(invalid(f, c, 'must be an object'));
      continue;
    }
    if (typeof c['name'] !== 'string' || c['name'] === '') causes.push(required(`${f}.name`));
    if (typeof c['jsonPath'] !== 'string' || c['jsonPath'] === '') causes.push(required(`${f}.jsonPath`));
    if (!COLUMN_TYPES.includes(c['type'] as string)) causes.push(c['type'] === undefined ? required(`${f}.type`) : unsupported(`${f}.type`, c['type'], COLUMN_TYPES));
  }
}

function checkScale(causes: FieldCause[], at: string, scale: unknown): void {
  if (scale === undefined || scale === null) return;
  if (!isRecord(scale)) return void causes.push(invalid(at, scale, 'must be an object'));
  const spec = scale['specReplicasPath'];
  if (typeof spec !== 'string' || spec === '') causes.push(required(`${at}.specReplicasPath`));
  else if (!spec.startsWith('.spec.')) causes.push(invalid(`${at}.specReplicasPath`, spec, 'should be a json path under .spec'));
  const status = scale['statusReplicasPath'];
  if (typeof status !== 'string' || status === '') causes.push(required(`${at}.statusReplicasPath`));
  else if (!status.startsWith('.status.')) causes.push(invalid(`${at}.statusReplicasPath`, status, 'should be a json path under .status'));
  const selector = scale['labelSelectorPath'];
  if (selector !== undefined && selector !== null && (typeof selector !== 'string' || !/^\.(spec|status)\./.test(selector))) {
    causes.push(invalid(`${at}.labelSelectorPath`, selector, 'should be a json path under either .spec or .status'));
  }
}

function checkVersions(causes: FieldCause[], spec: AnyObject): void {
  const versions = spec['versions'];
  if (!Array.isArray(versions) || versions.length === 0) return void causes.push(required('spec.versions'));
  const seen = new Set<string>();
  let storage = 0;
  for (const [i, v] of versions.entries()) {
    const at = `spec.versions[${i}]`;
    if (!isRecord(v)) {
      causes.push(invalid(at, v, 'must be an object'));
      continue;
    }
    checkLabel(causes, `${at}.name`, v['name'], false);
    if (typeof v['name'] === 'string') {
      if (seen.has(v['name'])) causes.push({ reason: 'FieldValueDuplicate', field: `${at}.name`, message: `Duplicate value: ${JSON.stringify(v['name'])}` });
      seen.add(v['name']);
    }
    if (typeof v['served'] !== 'boolean') causes.push(required(`${at}.served`));
    if (v['storage'] === true) storage++;
    const schema = isRecord(v['schema']) ? v['schema']['openAPIV3Schema'] : undefined;
    if (!isRecord(schema)) causes.push(required(`${at}.schema.openAPIV3Schema`, 'schemas are required'));
    else causes.push(...structuralCauses(schema, `${at}.schema`));
    checkColumns(causes, `${at}.additionalPrinterColumns`, v['additionalPrinterColumns']);
    checkScale(causes, `${at}.subresources.scale`, isRecord(v['subresources']) ? v['subresources']['scale'] : undefined);
  }
  if (storage !== 1) causes.push(invalid('spec.versions', `${storage} storage versions`, 'must have exactly one version marked as storage version'));
}

/**
 * The field errors that refuse a CustomResourceDefinition about to be
 * stored; `old` is the stored one on an update, whose scope is kept and
 * whose stored versions must stay in the spec.
 */
export function crdCauses(crd: AnyObject, old: AnyObject | undefined): FieldCause[] {
  const causes: FieldCause[] = [];
  const spec = specOf(crd);
  const group = spec['group'];
  const names = isRecord(spec['names']) ? spec['names'] : {};
  const name = (crd['metadata'] as AnyObject)['name'];
  if (typeof names['plural'] === 'string' && typeof group === 'string' && name !== `${names['plural']}.${group}`) {
    causes.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (group === undefined || group === '') causes.push(required('spec.group'));
  else if (typeof group !== 'string' || !DNS1123.test(group) || group.length > 253) causes.push(invalid('spec.group', group, 'a lowercase RFC 1123 subdomain is required'));
  else if (!group.includes('.')) causes.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  checkNames(causes, names);
  const scope = spec['scope'];
  if (scope !== 'Namespaced' && scope !== 'Cluster') causes.push(scope === undefined || scope === '' ? required('spec.scope') : unsupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  checkVersions(causes, spec);
  if (old !== undefined) {
    const oldSpec = specOf(old);
    if (oldSpec['scope'] !== scope) causes.push(invalid('spec.scope', scope, 'field is immutable'));
    if (oldSpec['group'] !== group) causes.push(invalid('spec.group', group, 'field is immutable'));
    const served = new Set(versionsOf(spec).map((v) => v['name']));
    const stored = isRecord(crd['status']) && Array.isArray(crd['status']['storedVersions']) ? crd['status']['storedVersions'] : [];
    for (const [i, v] of stored.entries()) if (!served.has(v)) causes.push(invalid(`status.storedVersions[${i}]`, v, 'must appear in spec.versions'));
  }
  return causes;
}
