import {
  invalid,
  notSupported,
  required,
  tooLong,
  tooMany,
  typeInvalid,
  type FieldCause,
} from './causes.js';
import { goQuote } from './goText.js';
import { isRecord, type Node } from './node.js';
import { checkEnum, checkNumber, checkString, checkType, expectedTypes, type SchemaError } from './values.js';

// The walk of kube-openapi's SchemaValidator over an object, in its order of checks for each value:
// type, allOf/anyOf/oneOf/not, string rules, format, number rules, list rules, enum, object rules
// (property counts, then each property and map entry, then required). A null value is only checked
// for its type and enum, as the server does.

type Errors = SchemaError[];

const composite = (path: string, message: string): SchemaError => ({ code: 'composite', path, message, value: '' });

function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function validateComposites(path: string, value: unknown, node: Node, out: Errors): void {
  if (node.anyOf.length > 0) {
    const results = node.anyOf.map((n) => validateValue(path, value, n));
    if (!results.some((r) => r.length === 0)) {
      out.push(composite(path, `${goQuote(path)} must validate at least one schema (anyOf)`), ...(results[0] ?? []));
    }
  }
  if (node.oneOf.length > 0) {
    const results = node.oneOf.map((n) => validateValue(path, value, n));
    const valid = results.filter((r) => r.length === 0).length;
    if (valid !== 1) {
      const more = valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`;
      out.push(composite(path, `${goQuote(path)} must validate one and only one schema (oneOf). ${more}`));
      if (valid === 0) out.push(...(results[0] ?? []));
    }
  }
  if (node.allOf.length > 0) {
    const results = node.allOf.map((n) => validateValue(path, value, n));
    const valid = results.filter((r) => r.length === 0).length;
    for (const r of results) out.push(...r);
    if (valid !== results.length) {
      out.push(composite(path, `${goQuote(path)} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`));
    }
  }
  if (node.not !== undefined && validateValue(path, value, node.not).length === 0) {
    out.push(composite(path, `${goQuote(path)} must not validate the schema (not)`));
  }
}

function validateArray(path: string, list: readonly unknown[], node: Node, out: Errors): void {
  const items = node.items;
  if (items !== undefined) list.forEach((v, i) => out.push(...validateValue(`${path}[${i}]`, v, items)));
  if (node.minItems !== undefined && list.length < node.minItems) {
    out.push({ code: 'other', path, message: `${path} in body should have at least ${node.minItems} items`, value: list.length });
  }
  if (node.maxItems !== undefined && list.length > node.maxItems) {
    const message = `${path} in body should have at most ${node.maxItems} items`;
    out.push({ code: 'maxItems', path, message, value: list.length, valid: node.maxItems });
  }
}

function validateObject(path: string, obj: Readonly<Record<string, unknown>>, node: Node, out: Errors): void {
  const size = Object.keys(obj).length;
  if (node.minProperties !== undefined && size < node.minProperties) {
    out.push({ code: 'other', path, message: `${path} in body should have at least ${node.minProperties} properties`, value: size });
  }
  if (node.maxProperties !== undefined && size > node.maxProperties) {
    const message = `${path} in body should have at most ${node.maxProperties} properties`;
    out.push({ code: 'maxProperties', path, message, value: size, valid: node.maxProperties });
  }
  if (typeof node.additional === 'object') {
    for (const [key, v] of Object.entries(obj)) {
      if (node.properties?.has(key) !== true) out.push(...validateValue(`${path}.${key}`, v, node.additional));
    }
  }
  for (const [key, prop] of node.properties ?? []) {
    if (key in obj) out.push(...validateValue(childPath(path, key), obj[key], prop));
  }
  for (const key of node.required) {
    if (!(key in obj)) out.push({ code: 'required', path: `${path}.${key}`, message: `${path}.${key} in body is required`, value: '' });
  }
}

/** Every schema error of `value` against `node`, at `path`. */
export function validateValue(path: string, value: unknown, node: Node): Errors {
  const out: Errors = [];
  const typeError = checkType(path, value, expectedTypes(node.type, node.intOrString), node.nullable, node.format);
  if (typeError !== undefined) out.push(typeError);
  if (value === null || value === undefined) {
    if (node.enum !== undefined && node.enum.length > 0) {
      const e = checkEnum(path, null, node.enum);
      if (e !== undefined) out.push(e);
    }
    return out;
  }
  validateComposites(path, value, node, out);
  if (typeof value === 'string') {
    out.push(...checkString(path, value, node));
  } else if (typeof value === 'number') out.push(...checkNumber(path, value, node));
  else if (Array.isArray(value)) validateArray(path, value, node, out);
  if (node.enum !== undefined && node.enum.length > 0) {
    const e = checkEnum(path, value, node.enum);
    if (e !== undefined) out.push(e);
  }
  if (isRecord(value)) validateObject(path, value, node, out);
  return out;
}

/** The field error apiextensions makes of a kube-openapi error (`kubeOpenAPIResultToFieldErrors`). */
export function toFieldCause(e: SchemaError, prefix = ''): FieldCause {
  const name = e.path.startsWith('.') ? e.path.slice(1) : e.path;
  const field = prefix === '' ? name : name === '' ? prefix : `${prefix}.${name}`;
  switch (e.code) {
    case 'required':
      return required(field);
    case 'enum':
      return notSupported(field, e.value, (e.valid as readonly unknown[] | undefined) ?? []);
    case 'tooLong':
      return tooLong(field, typeof e.valid === 'number' ? e.valid : -1);
    case 'maxItems':
    case 'maxProperties':
      return tooMany(field, typeof e.value === 'number' ? e.value : -1, typeof e.valid === 'number' ? e.valid : -1);
    case 'type':
      return typeInvalid(field, e.value ?? '', e.message);
    case 'composite':
      return invalid(prefix, '', e.message);
    case 'other':
      return invalid(field, e.value ?? '', e.message);
  }
}
