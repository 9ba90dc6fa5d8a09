import { RE2JS } from '@bufbuild/re2';
import { OMIT } from './causes.js';
import { formatCheck, isSupportedFormat } from './formats.js';
import { goNumber, goQuote, goValue, isGoInt } from './goText.js';
// The simulator's one deep equality, which walks with a stack, as user objects may nest 10,000 deep.
import { jsonEqual } from '../../writes/objectRules.js';

export { jsonEqual };

// The single-value checks of kube-openapi's validator (type, string, format, number, enum), each
// returning the error it would: the path in the message's words ("spec.replicas in body …") and the
// code the apiextensions conversion turns into a field error.

/** One error as kube-openapi reports it, before it becomes a field error. */
export interface SchemaError {
  readonly code: 'type' | 'required' | 'enum' | 'tooLong' | 'maxItems' | 'maxProperties' | 'composite' | 'other';
  /** The value path ("spec.replicas", "spec.ports[0]"; "" for the object). */
  readonly path: string;
  readonly message: string;
  readonly value: unknown;
  /** The allowed values, for `enum`; the limit, for `tooLong`/`maxItems`/`maxProperties`. */
  readonly valid?: unknown;
}

/** What kube-openapi calls a value's type: the schema type it would satisfy. */
export function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return isGoInt(value) ? 'integer' : 'number';
  if (Array.isArray(value)) return 'array';
  return 'object';
}

/** The type(s) a node accepts, as kube-openapi joins them. */
export function expectedTypes(type: string, intOrString: boolean): readonly string[] {
  if (intOrString) return ['integer', 'string'];
  return type === '' ? [] : [type];
}

const err = (code: SchemaError['code'], path: string, message: string, value: unknown, valid?: unknown): SchemaError =>
  valid === undefined ? { code, path, message, value } : { code, path, message, value, valid };

/** The format kube-openapi reads off a value's Go type: int64 or float64 for numbers, none otherwise. */
function valueFormat(value: unknown): string {
  if (typeof value !== 'number') return '';
  return isGoInt(value) ? 'int64' : 'float64';
}

/**
 * The type check: null only where nullable, an integral number counts as an integer, an integer as
 * a number. With a (supported) format, kube-openapi first compares formats for values that are
 * neither strings nor lists, and lets a list through a non-numeric formatted schema unchecked.
 */
export function checkType(
  path: string,
  value: unknown,
  types: readonly string[],
  nullable: boolean,
  format = '',
): SchemaError | undefined {
  const fmt = format !== '' && isSupportedFormat(format) ? format : '';
  if (types.length === 0 && fmt === '') return undefined;
  const name = typeName(value);
  if (name === 'null') {
    if (nullable || types.length === 0) return undefined;
    return err('type', path, `${path} in body must be of type ${types.join(',')}: "null"`, 'null');
  }
  const floatInt = name === 'number' && Number.isInteger(value) && types.includes('integer');
  const intFloat = name === 'integer' && types.includes('number');
  const fits = types.includes(name) || floatInt || intFloat;
  const stringOrList = name === 'string' || name === 'array';
  if (!stringOrList && fmt !== '' && !(fits || valueFormat(value) === fmt)) {
    const own = valueFormat(value);
    return err('type', path, `${path} in body must be of type ${fmt}: ${goQuote(own)}`, own);
  }
  if (!types.includes('number') && !types.includes('integer') && fmt !== '' && stringOrList) return undefined;
  if (fits) return undefined;
  return err('type', path, `${path} in body must be of type ${types.join(',')}: "${name}"`, name);
}

const compiled = new Map<string, RE2JS | string>();

/** The pattern compiled with Go's RE2 syntax, or the parse error's text. */
function re2(pattern: string): RE2JS | string {
  let re = compiled.get(pattern);
  if (re === undefined) {
    try {
      re = RE2JS.compile(pattern);
    } catch (e) {
      re = e instanceof Error ? e.message : String(e);
    }
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/** Whether `pattern` is a regular expression Go's regexp package accepts, or why not. */
export function patternError(pattern: string): string | undefined {
  const re = re2(pattern);
  return typeof re === 'string' ? re : undefined;
}

interface StringRules {
  readonly maxLength: number | undefined;
  readonly minLength: number | undefined;
  readonly pattern: string | undefined;
  readonly format: string;
}

/** maxLength, minLength (in code points, as Go's utf8.RuneCount), pattern, in that order; the first failure only. */
export function checkString(path: string, s: string, rules: StringRules): SchemaError[] {
  const out: SchemaError[] = [];
  const length = [...s].length;
  if (rules.maxLength !== undefined && length > rules.maxLength) {
    out.push(err('tooLong', path, `${path} in body should be at most ${rules.maxLength} chars long`, s, rules.maxLength));
  } else if (rules.minLength !== undefined && length < rules.minLength) {
    out.push(err('other', path, `${path} in body should be at least ${rules.minLength} chars long`, s));
  } else if (rules.pattern !== undefined) {
    const re = re2(rules.pattern);
    if (typeof re === 'string') {
      out.push(err('other', path, `${path} in body should match '${rules.pattern}, but pattern is invalid: ${re}'`, s));
    } else if (!re.test(s)) out.push(err('other', path, `${path} in body should match '${rules.pattern}'`, s));
  }
  const check = rules.format === '' ? undefined : formatCheck(rules.format);
  if (check !== undefined && !check(s)) {
    out.push(err('type', path, `${path} in body must be of type ${rules.format}: ${goQuote(s)}`, s));
  }
  return out;
}

interface NumberRules {
  readonly multipleOf: number | undefined;
  readonly minimum: number | undefined;
  readonly maximum: number | undefined;
  readonly exclusiveMinimum: boolean;
  readonly exclusiveMaximum: boolean;
}

/** A bound as it reads in the message: truncated to an integer when the value is one (Go compares int64s then). */
const bound = (n: number, asInt: boolean): number => (asInt ? Math.trunc(n) : n);

/**
 * go-openapi's IsFloat64AJSONInteger: whole within 2^53, or a positive number within a relative
 * 1e-9 of its truncation (Go converts a negative to uint64 by wrapping, so a negative fraction
 * never passes).
 */
function isJsonInteger(f: number): boolean {
  if (!Number.isFinite(f) || Math.abs(f) > 2 ** 53 - 1) return false;
  if (Number.isInteger(f)) return true;
  const g = Math.trunc(f);
  if (f < 0 || g === 0) return false;
  return (f - g) / (f + g) < 1e-9;
}

function checkMultipleOf(path: string, n: number, factor: number, asInt: boolean): SchemaError | undefined {
  const f = bound(factor, asInt);
  if (f <= 0) return err('other', path, `factor MultipleOf declared for ${path} must be positive: ${goNumber(f)}`, f);
  const ok = asInt ? n % f === 0 : isJsonInteger(factor < 1 ? (1 / factor) * n : n / factor);
  return ok ? undefined : err('other', path, `${path} in body should be a multiple of ${goNumber(f)}`, n);
}

/** multipleOf, minimum, maximum: each checked, all failures kept, in the server's order. */
export function checkNumber(path: string, n: number, rules: NumberRules): SchemaError[] {
  const asInt = isGoInt(n);
  const out: SchemaError[] = [];
  if (rules.multipleOf !== undefined) {
    const e = checkMultipleOf(path, n, rules.multipleOf, asInt);
    if (e !== undefined) out.push(e);
  }
  if (rules.minimum !== undefined) {
    const min = bound(rules.minimum, asInt);
    if (rules.exclusiveMinimum ? n <= min : n < min) {
      const words = rules.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      out.push(err('other', path, `${path} in body should be ${words} ${goNumber(min)}`, n));
    }
  }
  if (rules.maximum !== undefined) {
    const max = bound(rules.maximum, asInt);
    if (rules.exclusiveMaximum ? n >= max : n > max) {
      const words = rules.exclusiveMaximum ? 'less than' : 'less than or equal to';
      out.push(err('other', path, `${path} in body should be ${words} ${goNumber(max)}`, n));
    }
  }
  return out;
}


/** enum: the value must equal one of the listed values. */
export function checkEnum(path: string, value: unknown, allowed: readonly unknown[]): SchemaError | undefined {
  if (allowed.some((v) => jsonEqual(v, value))) return undefined;
  return err('enum', path, `${path} in body should be one of ${goValue(allowed)}`, value === undefined ? OMIT : value, allowed);
}
