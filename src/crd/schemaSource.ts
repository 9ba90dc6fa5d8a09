import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { arkTypeJsonSchema } from './arkTypeSchema.js';
import { CustomResourceSchemaError } from './CustomResourceSchemaError.js';

/** A JSON Schema value: an object of keywords (`{ type: 'object', properties: {…} }`). */
export type JsonSchemaObject = { readonly [keyword: string]: unknown };

/**
 * What `spec` and `status` take: a schema that implements both Standard
 * Schema (to validate) and Standard JSON Schema (to emit its JSON Schema) —
 * zod ≥ 4.2, valibot through `toStandardJsonSchema`, ArkType — or a plain
 * JSON Schema value (TypeBox, or one typed by `jsonSchema<T>()`).
 */
export type SchemaLike = (StandardSchemaV1 & StandardJSONSchemaV1) | JsonSchemaObject;

/** The TypeScript type of the objects a schema describes, as read from the server (the output type: defaults applied). */
export type SchemaOutput<S> = S extends { readonly '~standard': { readonly types?: infer Types } }
  ? NonNullable<Types> extends { readonly output: infer O } ? O : unknown
  : S extends { readonly static: infer T }
    ? T
    : { [field: string]: unknown };

/**
 * `S` itself when it can be used as a schema; for a Standard Schema that
 * cannot emit JSON Schema (a bare valibot schema), a type naming the fix, so
 * the definition does not compile.
 */
export type CheckedSchema<S> = S extends { readonly '~standard': infer P }
  ? P extends { readonly jsonSchema: unknown } ? S : { readonly '~standard': { readonly jsonSchema: 'this schema cannot emit JSON Schema: wrap it, e.g. toStandardJsonSchema(schema) from @valibot/to-json-schema' } }
  : S;

/** A schema read once: its JSON Schema (input direction) and its validator, if it has one. */
export interface ResolvedSchema {
  readonly jsonSchema: JsonSchemaObject;
  readonly validate: ((value: unknown) => StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>) | undefined;
}

/**
 * Reads what a `spec` or `status` option gives: the JSON Schema of its input
 * (so a field with a default is optional and carries `default`) and the
 * library's own validator.
 */
export function resolveSchema(field: string, schema: unknown): ResolvedSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    if (typeof schema === 'function' && '~standard' in schema) return fromStandard(field, schema as { '~standard': unknown });
    throw new TypeError(`customResource: ${field} must be a schema (zod, valibot through toStandardJsonSchema, ArkType) or a JSON Schema object, got ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : typeof schema}`);
  }
  if ('~standard' in schema) return fromStandard(field, schema as { '~standard': unknown });
  return { jsonSchema: schema as JsonSchemaObject, validate: undefined };
}

function fromStandard(field: string, schema: { '~standard': unknown }): ResolvedSchema {
  const props = schema['~standard'] as Partial<StandardSchemaV1.Props & StandardJSONSchemaV1.Props> | null;
  if (typeof props !== 'object' || props === null || typeof props.validate !== 'function') {
    throw new TypeError(`customResource: ${field} has a '~standard' property that is not Standard Schema (no validate function)`);
  }
  const converter = props.jsonSchema;
  if (typeof converter !== 'object' || converter === null || typeof converter.input !== 'function') {
    const vendor = typeof props.vendor === 'string' ? props.vendor : 'this library';
    const hint = vendor === 'valibot' ? ' Wrap it: toStandardJsonSchema(schema) from @valibot/to-json-schema.' : ' Use a version of the library that implements Standard JSON Schema (@standard-schema/spec 1.1), or pass a JSON Schema value.';
    throw new TypeError(`customResource: ${field} is a ${vendor} schema that cannot emit JSON Schema, so no CRD can be made from it.${hint}`);
  }
  let emitted: unknown;
  try {
    emitted = arkTypeJsonSchema(schema, props.vendor) ?? converter.input({ target: 'draft-2020-12' });
  } catch (err) {
    throw new CustomResourceSchemaError(field, `the schema library could not emit JSON Schema for it: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof emitted !== 'object' || emitted === null) throw new CustomResourceSchemaError(field, 'the schema library emitted no JSON Schema object');
  const validate = props.validate.bind(props);
  return { jsonSchema: emitted as JsonSchemaObject, validate };
}
