// Small helpers over JSON Schema nodes shared by the structural rewrite, its check and the defaults check.

/** A JSON Schema node being built or read. */
export type Node = Record<string, unknown>;

/** Whether a value is a plain object (not an array, not null). */
export function isRecord(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Structural equality of JSON values. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (!isRecord(a) || !isRecord(b)) return false;
  const keys = Object.keys(a).filter((k) => a[k] !== undefined);
  return keys.length === Object.keys(b).filter((k) => b[k] !== undefined).length && keys.every((k) => deepEqual(a[k], b[k]));
}

/** The keywords that only restrict values, allowed inside anyOf/oneOf/allOf/not of a structural schema. */
export const VALUE_VALIDATIONS: ReadonlySet<string> = new Set([
  'enum', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'multipleOf', 'maxLength', 'minLength', 'pattern', 'format',
  'maxItems', 'minItems', 'maxProperties', 'minProperties', 'required', 'properties', 'items', 'anyOf', 'oneOf', 'allOf', 'not',
]);

/** A value's JSON type as a schema names it (`integer` for a whole number). */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
