export { customResource, isCustomResource, type CustomResource, type CustomObject, type VersionObjects, type StorageVersion } from './customResource.js';
export { CustomResourceSchemaError } from './CustomResourceSchemaError.js';
export { jsonSchema, type TypedJsonSchema } from './jsonSchema.js';
export type { CustomResourceDefinition, CustomResourceDefinitionVersion } from './crdObject.js';
export type { ValidationIssue, ValidationResult } from './validateObject.js';
export type { CustomResourceOptions, MultiVersionOptions, NamesOptions, ServedVersionOptions, VersionOptions, PrinterColumn, ScaleSubresource, SelectableField, Subresources } from './options.js';
export type { SchemaLike, SchemaOutput, CheckedSchema, JsonSchemaObject } from './schemaSource.js';
export { conditions, setCondition, type ConditionUpdate } from './conditions.js';
export type { Condition } from './conditionRules.js';
