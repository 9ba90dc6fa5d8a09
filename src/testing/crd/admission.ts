import { admitCustomObject, checkStructural, defaultCustomObject, type FieldCause } from './schema/index.js';

// The one place the serving side meets the schema side (validation, defaults, pruning, CEL), so the two
// stay apart: serving decides when an object is admitted and how a refusal is answered, the schema side
// what is wrong with it.

/** One field error of a 422 Invalid. */
export type { FieldCause };

type AnyObject = Record<string, unknown>;

/** The version's schema as the schema side takes it; a CRD version without one admits anything. */
function schemaOf(schema: AnyObject | undefined): AnyObject {
  return schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
}

/**
 * Admits an object about to be stored under a version's `openAPIV3Schema`:
 * pruned, defaulted, and the field errors that refuse it (none: admitted).
 */
export function admit(schema: AnyObject | undefined, obj: AnyObject, old: AnyObject | undefined): { object: AnyObject; causes: readonly FieldCause[] } {
  return admitCustomObject(schemaOf(schema), obj, old);
}

/** The defaults a stored object gets when read, for schemas that gained defaults after it was written. */
export function defaultOnRead(schema: AnyObject | undefined, obj: AnyObject): AnyObject {
  return schema === undefined ? obj : defaultCustomObject(schema, obj);
}

/** Why a version's schema is not structural, one message each (none: it is). */
export function structuralErrors(schema: AnyObject): readonly string[] {
  return checkStructural(schema);
}
