import type { JsonSchemaObject } from './schemaSource.js';

/**
 * A plain JSON Schema that carries the TypeScript type `T` of the values it
 * describes, read as TypeBox's schemas are (a `static` property that exists
 * for the type checker only).
 */
export type TypedJsonSchema<T> = JsonSchemaObject & { readonly static: T };

/**
 * Gives a plain JSON Schema value the TypeScript type of what it describes,
 * so `customResource({ spec: jsonSchema<WebsiteSpec>({...}) })` types its
 * objects without a schema library. The schema is not checked against `T`:
 * you keep the two in step (a schema from TypeBox already carries its type).
 * Validation of a plain schema is rxkube's own (types, enums, bounds,
 * lengths, patterns, required fields); a schema library validates more.
 *
 * ## Example
 * ```ts
 * import { customResource, jsonSchema } from 'rxkube';
 *
 * interface WebsiteSpec { image: string; replicas?: number }
 * const Website = customResource({
 *   group: 'example.com', version: 'v1', kind: 'Website',
 *   spec: jsonSchema<WebsiteSpec>({ type: 'object', properties: { image: { type: 'string' }, replicas: { type: 'integer' } }, required: ['image'] }),
 * });
 * ```
 *
 * @param schema The JSON Schema (draft 2020-12, draft-07 or OpenAPI 3.0 keywords).
 * @returns The same schema, typed.
 */
export function jsonSchema<T>(schema: JsonSchemaObject): TypedJsonSchema<T> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new TypeError(`jsonSchema: expected a JSON Schema object, got ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : typeof schema}`);
  }
  return schema as TypedJsonSchema<T>;
}
