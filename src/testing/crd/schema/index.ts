// TEMPORARY pass-through stand-in for the schema part (src/testing/crd/schema/), replaced by the real
// module when the parts are merged. It admits everything unchanged and finds every schema structural,
// so nothing may be tested against it validating; only crd/admission.ts imports it.

/** A version's `openAPIV3Schema`, as the CRD holds it. */
export type StructuralSchemaInput = Record<string, unknown>;

/** One field error, as kube-apiserver's 422 Status lists it in `details.causes`. */
export interface FieldCause {
  readonly reason: string;
  readonly message: string;
  readonly field: string;
}

/** Stand-in: admits the object as it is. */
export function admitCustomObject(
  _schema: StructuralSchemaInput,
  obj: Record<string, unknown>,
  _old: Record<string, unknown> | undefined,
): { object: Record<string, unknown>; causes: FieldCause[] } {
  return { object: obj, causes: [] };
}

/** Stand-in: applies no defaults. */
export function defaultCustomObject(_schema: StructuralSchemaInput, obj: Record<string, unknown>): Record<string, unknown> {
  return obj;
}

/** Stand-in: finds nothing wrong. */
export function checkStructural(_schema: StructuralSchemaInput): string[] {
  return [];
}
