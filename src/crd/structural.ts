import { CustomResourceSchemaError } from './CustomResourceSchemaError.js';
import type { JsonSchemaObject } from './schemaSource.js';
import { deepEqual, isRecord, type Node } from './schemaNodes.js';
import { mergeUnion } from './unions.js';

// Rewrites a JSON Schema (2020-12, draft-07 or OpenAPI 3.0 flavoured) into the structural OpenAPI v3
// schema kube-apiserver requires of a CRD version, the way kube-derive rewrites schemars' output, and
// names the field of anything that has no structural form (CR-8…CR-15).

/** Keywords with no meaning for validation that JSONSchemaProps lacks: dropped. */
const DROPPED = new Set(['$schema', '$id', 'id', '$comment', '$anchor', '$defs', 'definitions', 'readOnly', 'writeOnly', 'deprecated', 'contentEncoding', 'contentMediaType', 'examples', '$dynamicAnchor']);

/** Keywords that change what validates and have no structural form: refused, naming the field. */
const REFUSED: Readonly<Record<string, string>> = {
  patternProperties: 'a restriction on the keys of a map (patternProperties) cannot be expressed in a CRD schema; use a map of any string key (additionalProperties) with x-kubernetes-validations on the keys',
  prefixItems: 'a tuple cannot be structural; use an array of one item type or an object',
  contains: '"contains" cannot be expressed in a CRD schema; use x-kubernetes-validations',
  not: '"not" cannot be expressed by this library; use x-kubernetes-validations',
  if: 'if/then/else cannot be expressed in a CRD schema; use x-kubernetes-validations',
  dependentRequired: 'dependentRequired cannot be expressed in a CRD schema; use x-kubernetes-validations',
  dependentSchemas: 'dependentSchemas cannot be expressed in a CRD schema; use x-kubernetes-validations',
  dependencies: 'dependencies cannot be expressed in a CRD schema; use x-kubernetes-validations',
  unevaluatedProperties: 'unevaluatedProperties cannot be expressed in a CRD schema',
  unevaluatedItems: 'unevaluatedItems cannot be expressed in a CRD schema',
  $dynamicRef: '$dynamicRef cannot be inlined',
};

/** Keywords copied to the node as they are, whatever its type. */
const ANNOTATIONS = ['description', 'title', 'default', 'example', 'externalDocs', 'format'];

const NUMERIC = ['minimum', 'maximum', 'multipleOf'];
const STRING = ['minLength', 'maxLength', 'pattern'];

interface Context {
  readonly root: JsonSchemaObject;
  /** The schema objects on the way to the current node: a JavaScript object that contains itself has no JSON form. */
  readonly ancestors: Set<object>;
  /** The `$ref`s being inlined on the way to the current node, to refuse a schema that refers to itself. */
  readonly expanding: string[];
}

/**
 * The structural form of a JSON Schema, for the field at `path` (`spec`, `status`).
 *
 * @throws CustomResourceSchemaError naming the field of what cannot be expressed.
 */
export function toStructural(path: string, schema: JsonSchemaObject): Node {
  return convert(schema, path, { root: schema, ancestors: new Set(), expanding: [] });
}

/** Converts one node, and (through the union rules) the nodes below it. */
function convert(input: unknown, path: string, ctx: Context): Node {
  if (input === true) return { 'x-kubernetes-preserve-unknown-fields': true };
  if (!isRecord(input)) throw new CustomResourceSchemaError(path, input === false ? 'the schema allows no value (false)' : 'is not a JSON Schema object');
  if (ctx.ancestors.has(input)) throw new CustomResourceSchemaError(path, 'the schema object contains itself; a structural schema is a finite tree (use $defs and $ref for shared parts)');
  ctx.ancestors.add(input);
  try {
    return convertNode(input, path, ctx);
  } finally {
    ctx.ancestors.delete(input);
  }
}

function convertNode(input: Node, path: string, ctx: Context): Node {
  const ref = input['$ref'];
  if (ref !== undefined) {
    const inlined = inlineRef(input, path, ctx);
    ctx.expanding.push(ref as string);
    try {
      return convert(inlined, path, ctx);
    } finally {
      ctx.expanding.pop();
    }
  }
  let node = everyKeyPattern(flattenAllOf(input, path, ctx));
  for (const key of Object.keys(node)) {
    const why = REFUSED[key];
    if (why !== undefined) throw new CustomResourceSchemaError(path, why);
  }
  let nullable = node['nullable'] === true;
  const withoutNull = stripNull(node, path);
  node = withoutNull.node;
  nullable ||= withoutNull.nullable;
  const junctor = node['anyOf'] !== undefined ? 'anyOf' : node['oneOf'] !== undefined ? 'oneOf' : undefined;
  let out: Node;
  if (junctor !== undefined) {
    if (node['anyOf'] !== undefined && node['oneOf'] !== undefined) throw new CustomResourceSchemaError(path, 'anyOf and oneOf on one node cannot be structural; nest them in one union');
    const { [junctor]: branchesIn, ...rest } = node;
    const branches = unionBranches(branchesIn, path, ctx);
    nullable ||= branches.nullable;
    if (branches.kept.length === 1) {
      out = convert({ ...branches.kept[0], ...rest }, path, ctx);
    } else {
      const typed = rest['type'] !== undefined || rest['properties'] !== undefined;
      const base = convertTyped(rest, path, ctx, !typed);
      out = mergeUnion(base, junctor, branches.kept.map((b) => convert(b, path, ctx)), path);
    }
  } else {
    out = convertTyped(node, path, ctx, false);
  }
  if (nullable) out['nullable'] = true;
  return out;
}

function resolveRef(path: string, ref: unknown, ctx: Context): Node {
  if (typeof ref !== 'string') throw new CustomResourceSchemaError(path, '$ref must be a string');
  if (ref === '#' || ctx.expanding.includes(ref)) {
    throw new CustomResourceSchemaError(path, `the schema refers to itself (${ref}): a recursive type cannot be a structural schema; bound its depth, or mark the field with x-kubernetes-preserve-unknown-fields`);
  }
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  const defs = match === null ? undefined : ctx.root[match[1] as string];
  const name = match?.[2]?.replace(/~1/g, '/').replace(/~0/g, '~');
  const target = isRecord(defs) && name !== undefined ? defs[name] : undefined;
  if (!isRecord(target)) throw new CustomResourceSchemaError(path, `$ref ${JSON.stringify(ref)} does not name a definition of this schema ($defs or definitions)`);
  return target;
}

/** A node with its `$ref` (if any) replaced by the target, the node's own keywords kept; refs are followed while they are not being expanded. */
function inlineRef(node: Node, path: string, ctx: Context): Node {
  const ref = node['$ref'];
  if (ref === undefined) return node;
  const { $ref: _ref, ...siblings } = node;
  return { ...resolveRef(path, ref, ctx), ...siblings };
}

/** Patterns that match every key: TypeBox writes `Record<string, V>` with one of them as patternProperties. */
const EVERY_KEY = new Set(['^(.*)$', '^.*$', '.*', '']);

/** `patternProperties` whose one pattern matches every key, read as the schema of every value (additionalProperties) (CR-33). */
function everyKeyPattern(node: Node): Node {
  const patterns = node['patternProperties'];
  if (!isRecord(patterns) || node['additionalProperties'] !== undefined) return node;
  const keys = Object.keys(patterns);
  if (keys.length !== 1 || !EVERY_KEY.has(keys[0] as string)) return node;
  const { patternProperties: _patterns, ...rest } = node;
  return { ...rest, additionalProperties: patterns[keys[0] as string] };
}

/** allOf's branches merged into their node: their properties joined, their required lists joined. */
function flattenAllOf(node: Node, path: string, ctx: Context): Node {
  const all = node['allOf'];
  if (all === undefined) return node;
  if (!Array.isArray(all)) throw new CustomResourceSchemaError(path, 'allOf must be an array');
  const { allOf: _all, ...merged } = node;
  for (const branchIn of all) {
    if (!isRecord(branchIn)) throw new CustomResourceSchemaError(path, 'an allOf branch is not a schema object');
    const ref = branchIn['$ref'];
    const branch = inlineRef(branchIn, path, ctx);
    if (typeof ref === 'string') ctx.expanding.push(ref);
    try {
      mergeInto(merged, flattenAllOf(branch, path, ctx), path);
    } finally {
      if (typeof ref === 'string') ctx.expanding.pop();
    }
  }
  return merged;
}

function mergeInto(merged: Node, flat: Node, path: string): void {
  for (const [key, value] of Object.entries(flat)) {
    if (value === undefined) continue;
    if (key === 'properties' && isRecord(value) && isRecord(merged['properties'])) {
      for (const [name, prop] of Object.entries(value)) {
        const have = merged['properties'][name];
        if (have !== undefined && !deepEqual(have, prop)) throw new CustomResourceSchemaError(`${path}.${name}`, 'the branches of an intersection (allOf) give this field different schemas; give it one');
      }
      merged['properties'] = { ...merged['properties'], ...value };
    } else if (key === 'required' && Array.isArray(value) && Array.isArray(merged['required'])) {
      merged['required'] = [...new Set([...(merged['required'] as unknown[]), ...value])];
    } else if (merged[key] !== undefined && !deepEqual(merged[key], value)) {
      throw new CustomResourceSchemaError(path, `the branches of an intersection (allOf) disagree on ${key}; give the field one schema`);
    } else {
      merged[key] = value;
    }
  }
}

/** `type: [X, 'null']`, `null` in an enum, `const` → enum: what remains after null is taken out, and whether it was there. */
function stripNull(node: Node, path: string): { node: Node; nullable: boolean } {
  let nullable = false;
  const out: Node = { ...node };
  delete out['nullable'];
  if ('const' in out) {
    if (out['enum'] !== undefined) throw new CustomResourceSchemaError(path, 'const and enum on one node; use one');
    out['enum'] = [out['const']];
    delete out['const'];
  }
  const type = out['type'];
  if (type === 'null') throw new CustomResourceSchemaError(path, 'a field that can only be null cannot be structural');
  if (Array.isArray(type)) {
    const others = type.filter((t) => t !== 'null');
    nullable = others.length < type.length;
    if (others.length === 0) throw new CustomResourceSchemaError(path, 'a field that can only be null cannot be structural');
    out['type'] = others.length === 1 ? others[0] : others;
  }
  const values = out['enum'];
  if (Array.isArray(values) && values.includes(null)) {
    nullable = true;
    out['enum'] = values.filter((v) => v !== null);
    if ((out['enum'] as unknown[]).length === 0) throw new CustomResourceSchemaError(path, 'a field that can only be null cannot be structural');
  }
  return { node: out, nullable };
}

/** A union's branches with the null branches taken out (a `$ref` is looked through to tell, and left for `convert` to inline). */
function unionBranches(value: unknown, path: string, ctx: Context): { kept: Node[]; nullable: boolean } {
  if (!Array.isArray(value) || value.length === 0) throw new CustomResourceSchemaError(path, 'anyOf/oneOf must be a non-empty array');
  const kept: Node[] = [];
  let nullable = false;
  for (const branch of value) {
    if (!isRecord(branch)) throw new CustomResourceSchemaError(path, 'a union branch is not a schema object');
    const seen = inlineRef(branch, path, ctx);
    const isNull = seen['type'] === 'null' || (Array.isArray(seen['enum']) && seen['enum'].length === 1 && seen['enum'][0] === null) || ('const' in seen && seen['const'] === null);
    if (isNull) nullable = true;
    else kept.push(branch);
  }
  if (kept.length === 0) throw new CustomResourceSchemaError(path, 'a field that can only be null cannot be structural');
  return { kept, nullable };
}

/** One node of one type (or, for a union, the union's own annotations) converted keyword by keyword. */
function convertTyped(node: Node, path: string, ctx: Context, union: boolean): Node {
  const out: Node = {};
  for (const key of ANNOTATIONS) if (node[key] !== undefined) out[key] = node[key];
  if (out['example'] === undefined && Array.isArray(node['examples']) && node['examples'].length > 0) out['example'] = node['examples'][0];
  for (const [key, value] of Object.entries(node)) if (key.startsWith('x-kubernetes-')) out[key] = value;
  if (union) return out;
  let type = node['type'];
  if (Array.isArray(type)) {
    const set = new Set(type as unknown[]);
    if (set.size === 2 && set.has('string') && (set.has('integer') || set.has('number'))) return { ...out, 'x-kubernetes-int-or-string': true };
    throw new CustomResourceSchemaError(path, `a value of several types (${type.join(', ')}) cannot be structural; use one type`);
  }
  if (type === undefined) type = inferType(node);
  if (type === undefined) {
    if (out['x-kubernetes-int-or-string'] === true || out['x-kubernetes-preserve-unknown-fields'] === true) return out;
    const validating = Object.keys(node).filter((k) => !DROPPED.has(k) && !ANNOTATIONS.includes(k) && !k.startsWith('x-kubernetes-'));
    if (validating.length > 0) throw new CustomResourceSchemaError(path, `has no type (it says only ${validating.join(', ')}); give it a type`);
    // A schema that says nothing accepts any value: kept as it is, with its unknown fields (CR-14).
    return { ...out, 'x-kubernetes-preserve-unknown-fields': true };
  }
  if (typeof type !== 'string' || !['object', 'array', 'string', 'number', 'integer', 'boolean'].includes(type)) {
    throw new CustomResourceSchemaError(path, `type ${JSON.stringify(type)} is not one of object, array, string, number, integer, boolean`);
  }
  out['type'] = type;
  if (node['enum'] !== undefined) out['enum'] = node['enum'];
  if (type === 'object') objectKeywords(node, out, path, ctx);
  else if (type === 'array') arrayKeywords(node, out, path, ctx);
  else if (type === 'string') copy(node, out, STRING);
  else if (type === 'number' || type === 'integer') numberKeywords(node, out, type);
  return out;
}

function inferType(node: Node): string | undefined {
  if (node['properties'] !== undefined || node['additionalProperties'] !== undefined || node['required'] !== undefined) return 'object';
  if (node['items'] !== undefined) return 'array';
  const values = node['enum'];
  if (Array.isArray(values) && values.length > 0) {
    const kinds = new Set(values.map((v) => (typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v)));
    if (kinds.size === 1) {
      const [kind] = kinds;
      if (kind === 'string' || kind === 'integer' || kind === 'number' || kind === 'boolean') return kind;
    }
    if (kinds.size === 2 && kinds.has('integer') && kinds.has('number')) return 'number';
  }
  return undefined;
}

function copy(from: Node, to: Node, keys: readonly string[]): void {
  for (const key of keys) if (from[key] !== undefined) to[key] = from[key];
}

function objectKeywords(node: Node, out: Node, path: string, ctx: Context): void {
  copy(node, out, ['minProperties', 'maxProperties']);
  const names = node['propertyNames'];
  if (names !== undefined && !(isRecord(names) && Object.keys(names).every((k) => k === 'type') && (names['type'] === undefined || names['type'] === 'string'))) {
    throw new CustomResourceSchemaError(path, 'a restriction on the keys of a map (propertyNames) cannot be expressed in a CRD schema; use x-kubernetes-validations on the map');
  }
  const props = node['properties'];
  if (props !== undefined) {
    if (!isRecord(props)) throw new CustomResourceSchemaError(path, 'properties must be an object');
    out['properties'] = Object.fromEntries(Object.entries(props).map(([name, p]) => [name, convert(p, `${path}.${name}`, ctx)]));
  }
  const required = node['required'];
  if (Array.isArray(required) && required.length > 0) out['required'] = [...required];
  const extra = node['additionalProperties'];
  if (extra === undefined || extra === false) return;
  if (extra === true || (isRecord(extra) && Object.keys(extra).every((k) => k === 'description' || k === 'title'))) {
    // An open object (a record of unknown values): the one way of asking to keep unknown fields (CR-14).
    out['x-kubernetes-preserve-unknown-fields'] = true;
    return;
  }
  if (props !== undefined && Object.keys(props as object).length > 0) {
    throw new CustomResourceSchemaError(path, 'an object with both fixed fields and a schema for other keys (properties and additionalProperties) cannot be structural; use one');
  }
  delete out['properties'];
  out['additionalProperties'] = convert(extra, `${path}[*]`, ctx);
}

function arrayKeywords(node: Node, out: Node, path: string, ctx: Context): void {
  if (node['uniqueItems'] === true) throw new CustomResourceSchemaError(path, 'uniqueItems: true is refused by kube-apiserver; use x-kubernetes-list-type: set');
  copy(node, out, ['minItems', 'maxItems']);
  const items = node['items'];
  if (items === undefined) throw new CustomResourceSchemaError(path, 'an array needs a schema for its items');
  if (Array.isArray(items)) throw new CustomResourceSchemaError(path, 'a tuple cannot be structural; use an array of one item type or an object');
  out['items'] = convert(items, `${path}[]`, ctx);
}

function numberKeywords(node: Node, out: Node, type: string): void {
  copy(node, out, NUMERIC);
  if (type === 'integer') {
    // zod bounds every integer by JavaScript's safe range; kube-apiserver's int64 needs no such bound.
    if (out['minimum'] === -Number.MAX_SAFE_INTEGER) delete out['minimum'];
    if (out['maximum'] === Number.MAX_SAFE_INTEGER) delete out['maximum'];
  }
  for (const [exclusive, bound, stricter] of [['exclusiveMinimum', 'minimum', (a: number, b: number) => a >= b], ['exclusiveMaximum', 'maximum', (a: number, b: number) => a <= b]] as const) {
    const value = node[exclusive];
    if (typeof value === 'boolean') {
      if (value) out[exclusive] = true;
    } else if (typeof value === 'number') {
      const have = out[bound];
      if (typeof have !== 'number' || stricter(value, have)) {
        out[bound] = value;
        out[exclusive] = true;
      }
    }
  }
}
