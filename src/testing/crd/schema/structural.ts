import { forbidden, invalid, required, type FieldCause } from './causes.js';
import { checkDefaultRules } from './cel.js';
import { compileRule, unsupportedFunction } from './celLibrary.js';
import { applyDefaults } from './defaults.js';
import { child, key } from './fieldPath.js';
import { crdNodeRules } from './listRules.js';
import { isRecord, jsonCopy, rootNode, type Node } from './node.js';
import { pruneObject } from './prune.js';
import { toFieldCause, validateValue } from './validate.js';
import { jsonEqual, patternError } from './values.js';

// Why a CRD's schema is not structural, or carries a default the server would refuse, in the
// server's words: each reason is a field path under `openAPIV3Schema` and a field error body.

const ROOT = 'openAPIV3Schema';
const EXTENSIONS_FORBIDDEN_IN_VALUE_VALIDATION: readonly (readonly [string, string])[] = [
  ['x-kubernetes-preserve-unknown-fields', 'must be false to be structural'],
  ['x-kubernetes-embedded-resource', 'must be false to be structural'],
  ['x-kubernetes-int-or-string', 'must be false to be structural'],
  ['x-kubernetes-list-map-keys', 'must be empty to be structural'],
  ['x-kubernetes-list-type', 'must be undefined to be structural'],
  ['x-kubernetes-map-type', 'must be undefined to be structural'],
  ['x-kubernetes-validations', 'must be empty to be structural'],
];

type Causes = FieldCause[];

/** Where a node sits: at the root, as an object's field, or as a list's items. */
type Place = 'root' | 'field' | 'items';

function checkValueValidation(path: string, raw: Readonly<Record<string, unknown>>, out: Causes): void {
  if (typeof raw['type'] === 'string' && raw['type'] !== '') out.push(forbidden(child(path, 'type'), 'must be empty to be structural'));
  if (raw['additionalProperties'] !== undefined) out.push(forbidden(child(path, 'additionalProperties'), 'must be undefined to be structural'));
  if (raw['default'] !== undefined) out.push(forbidden(child(path, 'default'), 'must be undefined to be structural'));
  if (typeof raw['title'] === 'string' && raw['title'] !== '') out.push(forbidden(child(path, 'title'), 'must be empty to be structural'));
  if (typeof raw['description'] === 'string' && raw['description'] !== '') {
    out.push(forbidden(child(path, 'description'), 'must be empty to be structural'));
  }
  if (raw['nullable'] === true) out.push(forbidden(child(path, 'nullable'), 'must be false to be structural'));
  for (const [name, why] of EXTENSIONS_FORBIDDEN_IN_VALUE_VALIDATION) {
    const v = raw[name];
    if (v !== undefined && v !== false && !(Array.isArray(v) && v.length === 0)) out.push(forbidden(child(path, name), why));
  }
  const props = raw['properties'];
  if (isRecord(props)) {
    for (const [k, p] of Object.entries(props)) if (isRecord(p)) checkValueValidation(key(child(path, 'properties'), k), p, out);
  }
  if (isRecord(raw['items'])) checkValueValidation(child(path, 'items'), raw['items'], out);
  if (isRecord(raw['not'])) checkValueValidation(child(path, 'not'), raw['not'], out);
  for (const name of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = raw[name];
    if (Array.isArray(list)) list.forEach((s, i) => isRecord(s) && checkValueValidation(`${child(path, name)}[${i}]`, s, out));
  }
}

function checkType(path: string, node: Node, place: Place, out: Causes): void {
  if (node.intOrString) {
    if (node.preserveUnknown) out.push(invalid(child(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
    if (node.embedded) out.push(invalid(child(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
    return;
  }
  if (node.embedded && node.type !== 'object') {
    out.push(node.type === '' ? required(child(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true') : invalid(child(path, 'type'), node.type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (node.type === '' && !node.preserveUnknown) {
    const where = place === 'root' ? 'at the root' : place === 'items' ? 'for specified array items' : 'for specified object fields';
    out.push(required(child(path, 'type'), `must not be empty ${where}`));
  }
  if (place === 'root' && node.type !== '' && node.type !== 'object') out.push(invalid(child(path, 'type'), node.type, 'must be object at the root'));
  if (node.embedded && node.properties === undefined && !node.preserveUnknown) {
    out.push(required(child(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
}

function checkMetadata(path: string, meta: Node, out: Causes): void {
  const allowed = new Set(['type', 'properties', 'description']);
  const extra = Object.keys(meta.raw).some((k) => !allowed.has(k));
  const props = [...(meta.properties?.keys() ?? [])].some((k) => k !== 'name' && k !== 'generateName');
  if (extra || props || (meta.type !== '' && meta.type !== 'object')) {
    out.push(forbidden(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
}

function checkDefault(path: string, node: Node, out: Causes): void {
  if (!node.hasDefault) return;
  const pruned = jsonCopy(node.default);
  if (isRecord(pruned)) pruneObject(pruned as Record<string, unknown>, node);
  if (!jsonEqual(pruned, node.default)) {
    out.push(invalid(child(path, 'default'), node.default, 'must not have unknown fields'));
    return;
  }
  const defaulted = jsonCopy(node.default);
  applyDefaults(defaulted, node);
  const errors = validateValue('', defaulted, node);
  for (const e of errors) out.push(toFieldCause(e, child(path, 'default')));
  if (errors.length === 0) out.push(...checkDefaultRules(child(path, 'default'), defaulted, node));
}

function checkRules(path: string, node: Node, out: Causes): void {
  node.validations.forEach((rule, i) => {
    const at = `${child(path, 'x-kubernetes-validations')}[${i}].rule`;
    const unsupported = unsupportedFunction(rule.rule);
    if (unsupported !== undefined) out.push(invalid(at, rule.rule, `the simulator's CEL library does not provide ${unsupported}()`));
    const compiled = compileRule(rule.rule);
    if (!compiled.ok) out.push(invalid(at, rule.rule, `compilation failed: ${compiled.error}`));
  });
}

function walk(path: string, node: Node, place: Place, out: Causes): void {
  checkType(path, node, place, out);
  if (node.type === 'array' && node.items === undefined) out.push(required(child(path, 'items'), 'must be specified'));
  if (place === 'root' && node.additional !== undefined) out.push(forbidden(child(path, 'additionalProperties'), 'must not be used at the root'));
  if (node.embedded && node.additional !== undefined) {
    out.push(forbidden(child(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (node.properties !== undefined && typeof node.additional === 'object') {
    out.push(forbidden(child(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
  }
  if (node.pattern !== undefined) {
    const why = patternError(node.pattern);
    if (why !== undefined) out.push(invalid(child(path, 'pattern'), node.pattern, `must be a valid regular expression, but isn't: ${why}`));
  }
  for (const name of ['allOf', 'anyOf', 'oneOf'] as const) {
    node[name].forEach((s, i) => checkValueValidation(`${child(path, name)}[${i}]`, s.raw, out));
  }
  if (node.not !== undefined) checkValueValidation(child(path, 'not'), node.not.raw, out);
  crdNodeRules(path, node, out);
  checkDefault(path, node, out);
  checkRules(path, node, out);
  for (const [k, p] of node.properties ?? []) {
    const at = key(child(path, 'properties'), k);
    if (k === 'metadata' && (place === 'root' || node.embedded)) checkMetadata(at, p, out);
    walk(at, p, 'field', out);
  }
  if (typeof node.additional === 'object') walk(child(path, 'additionalProperties'), node.additional, 'field', out);
  if (node.items !== undefined) walk(child(path, 'items'), node.items, 'items', out);
}

/**
 * The reasons kube-apiserver would refuse `schema` as a CRD version's `openAPIV3Schema`: each is
 * `<field>: <message>`, the field starting at `openAPIV3Schema` (the serving part puts
 * `spec.versions[i].schema.` before it). Empty when the schema is structural and its defaults valid.
 */
export function structuralReasons(schema: unknown): FieldCause[] {
  if (!isRecord(schema)) return [required(ROOT, '')];
  const out: Causes = [];
  walk(ROOT, rootNode(schema), 'root', out);
  return out;
}

