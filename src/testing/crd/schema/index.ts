export { admitCustomObject, defaultCustomObject } from './admit.js';
export { structuralReasons } from './structural.js';
export type { FieldCause } from './causes.js';
export type { StructuralSchemaInput } from './node.js';
