// A CRD's openAPIV3Schema arrives as posted JSON: any field may be missing or of the wrong type. It
// is read once into a Node whose fields are all of the right type (a wrong-typed field reads as
// absent; structuralReasons reports it), so the pruning, defaulting and validation walks never check
// types again.

/** A version's `openAPIV3Schema` as it appears in a CustomResourceDefinition (JSONSchemaProps). */
export interface StructuralSchemaInput {
  readonly type?: string;
  readonly format?: string;
  readonly nullable?: boolean;
  readonly properties?: Readonly<Record<string, StructuralSchemaInput>>;
  readonly additionalProperties?: StructuralSchemaInput | boolean;
  readonly items?: StructuralSchemaInput;
  readonly required?: readonly string[];
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: boolean;
  readonly exclusiveMaximum?: boolean;
  readonly multipleOf?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems?: boolean;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  readonly allOf?: readonly StructuralSchemaInput[];
  readonly anyOf?: readonly StructuralSchemaInput[];
  readonly oneOf?: readonly StructuralSchemaInput[];
  readonly not?: StructuralSchemaInput;
  readonly description?: string;
  readonly title?: string;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-map-type'?: 'atomic' | 'granular';
  readonly 'x-kubernetes-validations'?: readonly ValidationRuleInput[];
}

/** One `x-kubernetes-validations` entry. */
export interface ValidationRuleInput {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

/** A schema node with every field read and typed. */
export interface Node {
  readonly raw: Readonly<Record<string, unknown>>;
  readonly type: string;
  readonly format: string;
  readonly nullable: boolean;
  readonly properties: ReadonlyMap<string, Node> | undefined;
  /** `additionalProperties`: a schema, or `false`/`true` as written, or undefined. */
  readonly additional: Node | boolean | undefined;
  readonly items: Node | undefined;
  readonly required: readonly string[];
  readonly hasDefault: boolean;
  readonly default: unknown;
  readonly enum: readonly unknown[] | undefined;
  readonly minimum: number | undefined;
  readonly maximum: number | undefined;
  readonly exclusiveMinimum: boolean;
  readonly exclusiveMaximum: boolean;
  readonly multipleOf: number | undefined;
  readonly minLength: number | undefined;
  readonly maxLength: number | undefined;
  readonly pattern: string | undefined;
  readonly minItems: number | undefined;
  readonly maxItems: number | undefined;
  readonly uniqueItems: boolean;
  readonly minProperties: number | undefined;
  readonly maxProperties: number | undefined;
  readonly allOf: readonly Node[];
  readonly anyOf: readonly Node[];
  readonly oneOf: readonly Node[];
  readonly not: Node | undefined;
  readonly preserveUnknown: boolean;
  readonly embedded: boolean;
  readonly intOrString: boolean;
  readonly listType: string | undefined;
  readonly listMapKeys: readonly string[];
  readonly validations: readonly ValidationRuleInput[];
}

const cache = new WeakMap<object, Node>();

function isRecord(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const strings = (v: unknown): readonly string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
const nodes = (v: unknown): readonly Node[] => (Array.isArray(v) ? v.filter(isRecord).map(readNode) : []);

function readProperties(v: unknown): ReadonlyMap<string, Node> | undefined {
  if (!isRecord(v)) return undefined;
  return new Map(Object.entries(v).flatMap(([k, s]) => (isRecord(s) ? [[k, readNode(s)] as const] : [])));
}

function readValidations(v: unknown): readonly ValidationRuleInput[] {
  if (!Array.isArray(v)) return [];
  return v.filter((r): r is ValidationRuleInput => isRecord(r) && typeof r['rule'] === 'string');
}

function read(raw: Readonly<Record<string, unknown>>): Node {
  const additional = raw['additionalProperties'];
  return {
    raw,
    type: str(raw['type']) ?? '',
    format: str(raw['format']) ?? '',
    nullable: raw['nullable'] === true,
    properties: readProperties(raw['properties']),
    additional: typeof additional === 'boolean' ? additional : isRecord(additional) ? readNode(additional) : undefined,
    items: isRecord(raw['items']) ? readNode(raw['items']) : undefined,
    required: strings(raw['required']),
    hasDefault: Object.hasOwn(raw, 'default') && raw['default'] !== undefined && raw['default'] !== null,
    default: raw['default'],
    enum: Array.isArray(raw['enum']) ? raw['enum'] : undefined,
    minimum: num(raw['minimum']),
    maximum: num(raw['maximum']),
    exclusiveMinimum: raw['exclusiveMinimum'] === true,
    exclusiveMaximum: raw['exclusiveMaximum'] === true,
    multipleOf: num(raw['multipleOf']),
    minLength: num(raw['minLength']),
    maxLength: num(raw['maxLength']),
    pattern: str(raw['pattern']),
    minItems: num(raw['minItems']),
    maxItems: num(raw['maxItems']),
    uniqueItems: raw['uniqueItems'] === true,
    minProperties: num(raw['minProperties']),
    maxProperties: num(raw['maxProperties']),
    allOf: nodes(raw['allOf']),
    anyOf: nodes(raw['anyOf']),
    oneOf: nodes(raw['oneOf']),
    not: isRecord(raw['not']) ? readNode(raw['not']) : undefined,
    preserveUnknown: raw['x-kubernetes-preserve-unknown-fields'] === true,
    embedded: raw['x-kubernetes-embedded-resource'] === true,
    intOrString: raw['x-kubernetes-int-or-string'] === true,
    listType: str(raw['x-kubernetes-list-type']),
    listMapKeys: strings(raw['x-kubernetes-list-map-keys']),
    validations: readValidations(raw['x-kubernetes-validations']),
  };
}

/** The Node of a schema object, read once per object (schemas are immutable once a CRD is stored). */
export function readNode(raw: Readonly<Record<string, unknown>>): Node {
  let node = cache.get(raw);
  if (node === undefined) {
    node = read(raw);
    cache.set(raw, node);
  }
  return node;
}

/** The Node of a whole `openAPIV3Schema`, or an empty one when it is not an object. */
export function rootNode(schema: unknown): Node {
  return readNode(isRecord(schema) ? schema : {});
}

/** The schema of a map entry: the named property, else `additionalProperties` when it is a schema. */
export function childOf(node: Node | undefined, key: string): Node | undefined {
  if (node === undefined) return undefined;
  const prop = node.properties?.get(key);
  if (prop !== undefined) return prop;
  return typeof node.additional === 'object' ? node.additional : undefined;
}

/**
 * A deep copy of a decoded JSON value in which no two places share an object, as two decodes of
 * the same text would not (structuredClone keeps shared references, so pruning one place would
 * prune the other).
 */
export function jsonCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(jsonCopy) as T;
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonCopy(v)])) as T;
  return value;
}

/** Sets an own property, even one named `__proto__` (a plain assignment would set the prototype). */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

export { isRecord };
