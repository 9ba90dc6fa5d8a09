import { CustomResourceSchemaError } from './CustomResourceSchemaError.js';
import { defaultProblem } from './defaults.js';
import { re2Problem } from './patterns.js';
import { celSyntaxProblem } from './celSyntax.js';
import { isRecord, VALUE_VALIDATIONS, type Node } from './schemaNodes.js';

// The check kube-apiserver makes of a CRD version's schema before it accepts it (apiextensions'
// structural schema rules, CR-16, CR-17), made again here on the rewritten schema so that whatever slipped
// through the rewrite is named at definition time, with its field, rather than by the server.

const JUNCTORS = ['anyOf', 'oneOf', 'allOf', 'not'] as const;
const SCALARS = new Set(['string', 'integer', 'number', 'boolean']);

/**
 * Throws the first reason `schema` is not structural, naming the field.
 *
 * @param path The field the schema is for (`spec`).
 * @param schema A schema produced by the structural rewrite (or written by hand).
 */
export function checkStructural(path: string, schema: Node): void {
  checkNode(schema, path);
}

function checkNode(node: Node, path: string): void {
  const type = node['type'];
  const open = node['x-kubernetes-preserve-unknown-fields'];
  if (open !== undefined && open !== true) throw new CustomResourceSchemaError(path, 'x-kubernetes-preserve-unknown-fields must be true when given');
  if (type === undefined && node['x-kubernetes-int-or-string'] !== true && open !== true) {
    throw new CustomResourceSchemaError(path, 'has no type; every field of a structural schema needs one (or x-kubernetes-int-or-string / x-kubernetes-preserve-unknown-fields)');
  }
  if (node['x-kubernetes-int-or-string'] === true && type !== undefined) throw new CustomResourceSchemaError(path, 'x-kubernetes-int-or-string cannot have a type');
  if (node['uniqueItems'] === true) throw new CustomResourceSchemaError(path, 'uniqueItems: true is refused by kube-apiserver; use x-kubernetes-list-type: set');
  if (node['patternProperties'] !== undefined) throw new CustomResourceSchemaError(path, 'patternProperties is not allowed in a CRD schema');
  if (node['properties'] !== undefined && node['additionalProperties'] !== undefined) {
    throw new CustomResourceSchemaError(path, 'properties and additionalProperties cannot both be given');
  }
  if (type === 'array' && !isRecord(node['items'])) throw new CustomResourceSchemaError(path, 'an array needs a schema for its items');
  checkListType(node, path);
  checkValidations(node, path);
  checkPattern(node, path);
  if (node['default'] !== undefined) {
    const problem = defaultProblem(node, node['default']);
    if (problem !== undefined) throw new CustomResourceSchemaError(path, `the default ${JSON.stringify(node['default'])} does not validate: ${problem}`);
  }
  for (const [name, prop] of Object.entries(isRecord(node['properties']) ? node['properties'] : {})) {
    if (!isRecord(prop)) throw new CustomResourceSchemaError(`${path}.${name}`, 'is not a schema object');
    checkNode(prop, `${path}.${name}`);
  }
  if (isRecord(node['items'])) checkNode(node['items'], `${path}[]`);
  if (isRecord(node['additionalProperties'])) checkNode(node['additionalProperties'], `${path}[*]`);
  for (const junctor of JUNCTORS) {
    const branches = node[junctor];
    if (branches === undefined) continue;
    for (const branch of Array.isArray(branches) ? branches : [branches]) {
      if (!isRecord(branch)) throw new CustomResourceSchemaError(path, `a ${junctor} branch is not a schema object`);
      checkInJunctor(branch, path, junctor);
    }
  }
}

/** Inside anyOf/oneOf/allOf/not only value validations may appear, and the same below them. */
function checkInJunctor(node: Node, path: string, junctor: string): void {
  for (const key of Object.keys(node)) {
    if (!VALUE_VALIDATIONS.has(key)) {
      throw new CustomResourceSchemaError(path, `inside ${junctor} only value validations may appear, not ${key}: kube-apiserver refuses ${key} there (a union whose branches need it cannot be structural)`);
    }
  }
  checkPattern(node, path);
  for (const [name, prop] of Object.entries(isRecord(node['properties']) ? node['properties'] : {})) {
    if (isRecord(prop)) checkInJunctor(prop, `${path}.${name}`, junctor);
  }
  if (isRecord(node['items'])) checkInJunctor(node['items'], `${path}[]`, junctor);
}

function checkListType(node: Node, path: string): void {
  const listType = node['x-kubernetes-list-type'];
  const keys = node['x-kubernetes-list-map-keys'];
  const mapType = node['x-kubernetes-map-type'];
  if (mapType !== undefined && (!['granular', 'atomic'].includes(mapType as string) || node['type'] !== 'object')) {
    throw new CustomResourceSchemaError(path, 'x-kubernetes-map-type must be "granular" or "atomic", on an object');
  }
  if (listType === undefined) {
    if (keys !== undefined) throw new CustomResourceSchemaError(path, 'x-kubernetes-list-map-keys needs x-kubernetes-list-type: map');
    return;
  }
  if (node['type'] !== 'array' || !['atomic', 'set', 'map'].includes(listType as string)) {
    throw new CustomResourceSchemaError(path, 'x-kubernetes-list-type must be "atomic", "set" or "map", on an array');
  }
  const items = node['items'] as Node;
  if (listType === 'set' && !SCALARS.has(items['type'] as string) && items['x-kubernetes-map-type'] !== 'atomic') {
    throw new CustomResourceSchemaError(path, 'x-kubernetes-list-type: set needs scalar items (or atomic ones)');
  }
  if (listType !== 'map') {
    if (keys !== undefined) throw new CustomResourceSchemaError(path, 'x-kubernetes-list-map-keys needs x-kubernetes-list-type: map');
    return;
  }
  if (!Array.isArray(keys) || keys.length === 0) throw new CustomResourceSchemaError(path, 'x-kubernetes-list-type: map needs x-kubernetes-list-map-keys');
  if (items['type'] !== 'object') throw new CustomResourceSchemaError(path, 'x-kubernetes-list-type: map needs object items');
  const props = isRecord(items['properties']) ? items['properties'] : {};
  const required = Array.isArray(items['required']) ? items['required'] : [];
  for (const key of keys) {
    const prop = props[key as string];
    if (!isRecord(prop) || !SCALARS.has(prop['type'] as string)) throw new CustomResourceSchemaError(`${path}[]`, `the list map key ${JSON.stringify(key)} must be a scalar field of the items`);
    if (!required.includes(key) && prop['default'] === undefined) throw new CustomResourceSchemaError(`${path}[]`, `the list map key ${JSON.stringify(key)} must be required or have a default`);
  }
}

const RULE_REASONS = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'];

function checkValidations(node: Node, path: string): void {
  const rules = node['x-kubernetes-validations'];
  if (rules === undefined) return;
  if (!Array.isArray(rules) || !rules.every((r) => isRecord(r) && typeof r['rule'] === 'string' && r['rule'].trim() !== '')) {
    throw new CustomResourceSchemaError(path, 'x-kubernetes-validations must be a list of { rule, message?, … } with a CEL rule in each');
  }
  rules.forEach((r: Node, i) => {
    const at = `x-kubernetes-validations[${i}]`;
    for (const key of ['rule', 'messageExpression'] as const) {
      if (r[key] === undefined) continue;
      const problem = typeof r[key] === 'string' ? celSyntaxProblem(r[key]) : 'not a string';
      if (problem !== undefined) throw new CustomResourceSchemaError(path, `${at}.${key} ${JSON.stringify(r[key])} is not CEL kube-apiserver can compile: ${problem}`);
    }
    const message = r['message'];
    if (message !== undefined && (typeof message !== 'string' || message.trim() === '' || message.length > 2048 || /[\r\n]/.test(message))) {
      throw new CustomResourceSchemaError(path, `${at}.message must be one line of 1 to 2048 characters`);
    }
    if (r['reason'] !== undefined && !RULE_REASONS.includes(r['reason'] as string)) {
      throw new CustomResourceSchemaError(path, `${at}.reason must be one of ${RULE_REASONS.join(', ')}, got ${JSON.stringify(r['reason'])}`);
    }
  });
}

function checkPattern(node: Node, path: string): void {
  const pattern = node['pattern'];
  if (pattern === undefined) return;
  if (typeof pattern !== 'string') throw new CustomResourceSchemaError(path, 'pattern must be a string');
  const problem = re2Problem(pattern);
  if (problem !== undefined) {
    throw new CustomResourceSchemaError(path, `the pattern uses ${problem}, which kube-apiserver's regular expressions (RE2) do not have, so it would refuse the CRD; write the pattern without it (in zod, .meta({ pattern }) replaces a built-in format's pattern), or check the value with a CEL rule`);
  }
}
