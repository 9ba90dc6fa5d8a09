// ArkType's JSON Schema read through the type's own toJsonSchema (CR-32): its Standard JSON Schema
// `input` describes the type's input projection, which has no defaults, and a CRD needs them.

/** Fallbacks for what JSON Schema cannot say: the input side of a morph and the JSON part of a narrowed type are kept, as ArkType's Standard JSON Schema keeps them; a Date or a default that is not JSON data has no form in a custom resource. */
const FALLBACK = {
  default: (ctx: { readonly base: unknown }): unknown => ctx.base,
  date: (): never => {
    throw new TypeError('a Date has no JSON form: a custom resource holds a time as a string (RFC 3339), so declare a string');
  },
  defaultValue: (ctx: { readonly value: unknown }): never => {
    const v = ctx.value;
    const what = typeof v === 'object' && v !== null ? `an object of class ${String((v as { constructor?: { name?: unknown } }).constructor?.name ?? 'none')}, or one holding a value JSON lacks` : `a ${typeof v}`;
    throw new TypeError(`a default that is not JSON data (${what}) cannot be written in a CRD; give a default made of strings, numbers, booleans, null, arrays and plain objects`);
  },
};

/**
 * The JSON Schema of an ArkType type with its defaults, or undefined when `schema` is not one (another
 * vendor, or an ArkType without `toJsonSchema`), so the caller reads Standard JSON Schema instead.
 */
export function arkTypeJsonSchema(schema: unknown, vendor: unknown): unknown {
  if (vendor !== 'arktype') return undefined;
  const toJsonSchema = (schema as { readonly toJsonSchema?: unknown }).toJsonSchema;
  if (typeof toJsonSchema !== 'function') return undefined;
  return (toJsonSchema as (options: object) => unknown).call(schema, { target: 'draft-2020-12', fallback: FALLBACK });
}
