import { admitCustomObject, defaultCustomObject, structuralReasons, type StructuralSchemaInput } from './schema/index.js';
import type { FieldCause } from '../server/status.js';

// The one place the serving side meets the schema side (validation, defaults, pruning, CEL), so the two
// stay apart: serving decides when an object is admitted and how a refusal is answered, the schema side
// what is wrong with it.

type AnyObject = Record<string, unknown>;

/** The version's schema as the schema side takes it (the CRD's JSON, which it checks); a version without one admits anything. */
function schemaOf(schema: AnyObject | undefined): StructuralSchemaInput {
  return (schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as unknown as StructuralSchemaInput;
}

/**
 * Admits an object about to be stored under a version's `openAPIV3Schema`:
 * pruned, defaulted, and the field errors that refuse it (none: admitted).
 */
export function admit(schema: AnyObject | undefined, obj: AnyObject, old: AnyObject | undefined, subresource?: 'status'): { object: AnyObject; causes: readonly FieldCause[] } {
  // A /status write is judged on its status alone, in the server's words for it (`ready in body`).
  return admitCustomObject(schemaOf(schema), obj, old, subresource);
}

/** The defaults a stored object gets when read, for schemas that gained defaults after it was written. */
export function defaultOnRead(schema: AnyObject | undefined, obj: AnyObject): AnyObject {
  return schema === undefined ? obj : defaultCustomObject(schemaOf(schema), obj);
}

/**
 * Why a version's schema is not structural, as field errors under `at` (the
 * version's `schema` field), each with the reason the schema side gives it.
 */
export function structuralCauses(schema: AnyObject, at: string): FieldCause[] {
  return structuralReasons(schemaOf(schema)).map((c) => ({ ...c, field: `${at}.${c.field}` }));
}
