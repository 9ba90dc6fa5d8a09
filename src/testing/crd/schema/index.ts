export { admitCustomObject, defaultCustomObject, checkStructural } from './admit.js';
export type { Admission, AdmitOptions } from './admit.js';
export type { FieldCause, FieldCauseReason } from './causes.js';
export type { StructuralSchemaInput, ValidationRuleInput } from './node.js';
