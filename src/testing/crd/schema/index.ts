export { admitCustomObject, defaultCustomObject, checkStructural } from './admit.js';
export type { FieldCause } from './causes.js';
export type { StructuralSchemaInput } from './node.js';
