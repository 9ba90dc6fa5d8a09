import { CustomResourceSchemaError } from './CustomResourceSchemaError.js';
import { deepEqual, isRecord, VALUE_VALIDATIONS, type Node } from './schemaNodes.js';

// How a union (anyOf/oneOf) of already structural branches becomes one structural node (CR-11):
// enums merged, integer-or-string marked, objects' properties hoisted into the node with each branch
// keeping only what it requires, scalars of one type keeping only their value validations.

const ARTICLE: Readonly<Record<string, string>> = { object: 'an object', array: 'an array', integer: 'an integer', string: 'a string', number: 'a number', boolean: 'a boolean' };

/**
 * Merges converted union branches into `base` (the union node's own keywords).
 *
 * @throws CustomResourceSchemaError naming the field when the branches have no structural form.
 */
export function mergeUnion(base: Node, junctor: 'anyOf' | 'oneOf', branches: readonly Node[], path: string): Node {
  if (branches.some((b) => b['default'] !== undefined)) {
    throw new CustomResourceSchemaError(path, 'a default inside a branch of a union cannot be structural (kube-apiserver refuses defaults inside anyOf/oneOf); put the default on the field itself');
  }
  const types = branches.map((b) => (typeof b['type'] === 'string' ? b['type'] : b['x-kubernetes-int-or-string'] === true ? 'int-or-string' : 'any'));
  const distinct = [...new Set(types)];
  if (distinct.length === 2 && distinct.includes('string') && (distinct.includes('integer') || distinct.includes('number'))) {
    if (base['type'] !== undefined) throw new CustomResourceSchemaError(path, `an integer-or-string union cannot also be of type ${String(base['type'])}`);
    return { ...base, 'x-kubernetes-int-or-string': true };
  }
  if (distinct.length !== 1 || distinct[0] === 'any' || distinct[0] === 'int-or-string') {
    const named = distinct.map((t) => ARTICLE[t] ?? (t === 'int-or-string' ? 'an int-or-string' : 'a value of any type'));
    throw new CustomResourceSchemaError(path, `a union of ${named.join(' and ')} cannot be structural; use one type (an object with optional fields, say)`);
  }
  const type = distinct[0] as string;
  if (base['type'] !== undefined && base['type'] !== type) throw new CustomResourceSchemaError(path, `the union's branches are of type ${type} but the field says ${String(base['type'])}`);
  if (branches.every(isEnumOnly)) {
    return { ...base, type, enum: [...new Set(branches.flatMap((b) => b['enum'] as unknown[]))] };
  }
  if (type === 'object') return mergeObjects(base, junctor, branches, path);
  const shared = type === 'array' ? sameItems(branches, path) : {};
  const kept = branches.map((b) => valueValidations(b, type === 'array' ? ['items'] : []));
  const out: Node = { ...base, type, ...shared };
  if (kept.some((b) => Object.keys(b).length === 0)) return out;
  out[junctor] = kept;
  return out;
}

function sameItems(branches: readonly Node[], path: string): Node {
  const first = branches[0]?.['items'];
  if (!branches.every((b) => deepEqual(b['items'], first))) {
    throw new CustomResourceSchemaError(`${path}[]`, 'a union of arrays with different item schemas cannot be structural; use one array of a union of items');
  }
  return { items: first };
}

/** What a branch may keep inside a junctor: value validations only, nested properties and items likewise. */
function valueValidations(node: Node, drop: readonly string[]): Node {
  const out: Node = {};
  for (const [key, value] of Object.entries(node)) {
    if (!VALUE_VALIDATIONS.has(key) || drop.includes(key)) continue;
    if (key === 'properties' && isRecord(value)) {
      const props = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isRecord(v) ? valueValidations(v, []) : v]).filter(([, v]) => Object.keys(v as object).length > 0));
      if (Object.keys(props).length > 0) out[key] = props;
    } else if (key === 'items' && isRecord(value)) {
      const items = valueValidations(value, []);
      if (Object.keys(items).length > 0) out[key] = items;
    } else {
      out[key] = value;
    }
  }
  return out;
}

/**
 * Objects: every branch's properties hoisted into the node. A property in several branches must have one
 * schema, except a string enum (a discriminator), which is merged in the node and restricted per branch.
 */
function mergeObjects(base: Node, junctor: 'anyOf' | 'oneOf', branches: readonly Node[], path: string): Node {
  const props: Record<string, Node> = isRecord(base['properties']) ? { ...(base['properties'] as Record<string, Node>) } : {};
  const discriminators = new Set<string>();
  for (const branch of branches) {
    if (branch['additionalProperties'] !== undefined) throw new CustomResourceSchemaError(path, 'a union branch with a schema for other keys (additionalProperties) cannot be structural');
    for (const [name, prop] of Object.entries((branch['properties'] ?? {}) as Record<string, Node>)) {
      const have = props[name];
      if (have === undefined || deepEqual(have, prop)) {
        props[name] = prop;
      } else if (isEnumOnly(have) && isEnumOnly(prop) && have['type'] === prop['type']) {
        props[name] = { ...have, enum: [...new Set([...(have['enum'] as unknown[]), ...(prop['enum'] as unknown[])])] };
        discriminators.add(name);
      } else {
        throw new CustomResourceSchemaError(`${path}.${name}`, 'the branches of a union give this field different schemas; give it one schema in every branch');
      }
    }
  }
  const out: Node = { ...base, type: 'object', properties: props };
  if (branches.some((b) => b['x-kubernetes-preserve-unknown-fields'] === true)) out['x-kubernetes-preserve-unknown-fields'] = true;
  const kept = branches.map((b) => {
    const own: Node = {};
    if (Array.isArray(b['required']) && b['required'].length > 0) own['required'] = b['required'];
    const restricted = Object.entries((b['properties'] ?? {}) as Record<string, Node>).filter(([name]) => discriminators.has(name));
    if (restricted.length > 0) own['properties'] = Object.fromEntries(restricted.map(([name, p]) => [name, { enum: p['enum'] }]));
    for (const key of ['minProperties', 'maxProperties']) if (b[key] !== undefined) own[key] = b[key];
    return own;
  });
  if (kept.some((b) => Object.keys(b).length === 0)) return out;
  out[junctor] = kept;
  return out;
}

const ENUM_ONLY_KEYS = new Set(['type', 'enum', 'description', 'title']);

/** A node that only lists values (with a type and words about them). */
function isEnumOnly(node: Node): boolean {
  return Array.isArray(node['enum']) && Object.keys(node).every((k) => ENUM_ONLY_KEYS.has(k));
}
