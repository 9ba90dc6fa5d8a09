import { checkOptionNames, describeValue, optionNames } from '../options/validate.js';
import type { CustomResourceOptions, MultiVersionOptions, NamesOptions, ServedVersionOptions, VersionOptions } from './options.js';
import { dns1035Label, groupName, kindName, pluralOf } from './names.js';
import { resolveSchema } from './schemaSource.js';
import { toStructural } from './structural.js';
import { checkStructural } from './structuralCheck.js';
import { checkPrinterColumns, checkSelectableFields, checkSubresources } from './versionChecks.js';
import type { Node } from './schemaNodes.js';
import { parseConversion, type Converters } from './conversion.js';
import type { StandardSchemaV1 } from '@standard-schema/spec';

// A definition's options read and checked once (CR-1…CR-7): every name derived or validated, every
// version's schema rewritten and checked, so the views and crd() only read the result.

type Validator = (value: unknown) => StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;

/** One version, checked: its structural schema and its validators. */
export interface ParsedVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly deprecated: boolean;
  readonly deprecationWarning: string | undefined;
  /** The version's `openAPIV3Schema`. */
  readonly schema: Node;
  readonly spec: { readonly structural: Node; readonly validate: Validator | undefined };
  readonly status: { readonly structural: Node; readonly validate: Validator | undefined } | undefined;
  readonly printerColumns: readonly Node[];
  readonly subresources: Node | undefined;
  readonly selectableFields: readonly Node[];
}

/** A definition's options, checked. */
export interface ParsedDefinition {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly versions: readonly ParsedVersion[];
  readonly storage: ParsedVersion;
  /** The converters of every version but the storage version, by version; undefined without `conversion`. */
  readonly conversion: Converters | undefined;
}

const NAMES: Record<keyof NamesOptions<string, string>, true> = { group: true, kind: true, plural: true, singular: true, listKind: true, scope: true, shortNames: true, categories: true };
const VERSION: Record<keyof VersionOptions, true> = { spec: true, status: true, printerColumns: true, subresources: true, selectableFields: true };
const SINGLE_OPTIONS = optionNames<CustomResourceOptions<string, string, string, unknown, unknown>>({ ...NAMES, version: true, ...VERSION });
const MULTI_OPTIONS = optionNames<MultiVersionOptions<string, string, unknown> & { readonly conversion?: unknown }>({ ...NAMES, versions: true, conversion: true });
const SERVED_OPTIONS = optionNames<ServedVersionOptions>({ ...VERSION, served: true, storage: true, deprecated: true, deprecationWarning: true });

/** Reads and checks `customResource`'s options. */
export function parseDefinition(options: unknown): ParsedDefinition {
  if (typeof options !== 'object' || options === null) throw new TypeError(`customResource: options must be an object, got ${describeValue(options)}`);
  const multi = 'versions' in options;
  const record = checkOptionNames('customResource', options, multi ? MULTI_OPTIONS : SINGLE_OPTIONS);
  const group = groupName(record['group']);
  const kind = kindName('kind', record['kind']);
  const plural = record['plural'] === undefined ? pluralOf(kind.toLowerCase()) : dns1035Label('plural', record['plural']);
  const singular = record['singular'] === undefined ? kind.toLowerCase() : dns1035Label('singular', record['singular']);
  const listKind = record['listKind'] === undefined ? `${kind}List` : kindName('listKind', record['listKind']);
  if (listKind === kind) throw new TypeError(`customResource: listKind must differ from kind, got ${describeValue(listKind)}`);
  if (plural === singular && record['plural'] !== undefined) throw new TypeError(`customResource: plural and singular must differ, both are ${describeValue(plural)}`);
  const scope = record['scope'] ?? 'Namespaced';
  if (scope !== 'Namespaced' && scope !== 'Cluster') throw new TypeError(`customResource: scope must be "Namespaced" or "Cluster", got ${describeValue(scope)}`);
  const shortNames = labels('shortNames', record['shortNames']);
  const categories = labels('categories', record['categories']);
  if (`${plural}.${group}`.length > 253) throw new TypeError(`customResource: the CRD's name ${plural}.${group} is longer than 253 characters`);
  const versions = multi ? parseVersions(record['versions']) : [parseVersion(String(dns1035Label('version', record['version'])), record, true)];
  const storage = versions.filter((v) => v.storage);
  if (storage.length !== 1) {
    throw new TypeError(`customResource: exactly one version must say storage: true, got ${storage.length === 0 ? 'none' : storage.map((v) => v.name).join(', ')}`);
  }
  const storageVersion = storage[0] as ParsedVersion;
  const conversion = record['conversion'] === undefined ? undefined : parseConversion(record['conversion'], versions.map((v) => v.name), storageVersion.name);
  return { group, kind, plural, singular, listKind, namespaced: scope === 'Namespaced', shortNames, categories, versions, storage: storageVersion, conversion };
}

function labels(option: string, value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`customResource: ${option} must be an array of names, got ${describeValue(value)}`);
  value.forEach((v, i) => dns1035Label(`${option}[${i}]`, v));
  if (new Set(value).size !== value.length) throw new TypeError(`customResource: ${option} holds a name twice`);
  return [...(value as string[])];
}

function parseVersions(value: unknown): ParsedVersion[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length === 0) {
    throw new TypeError(`customResource: versions must be an object of versions by name ({ v1: {…} }), got ${describeValue(value)}`);
  }
  return Object.entries(value).map(([name, v]) => {
    dns1035Label(`versions key ${JSON.stringify(name)}`, name);
    if (typeof v !== 'object' || v === null) throw new TypeError(`customResource: versions.${name} must be an object, got ${describeValue(v)}`);
    return parseVersion(name, v as Record<string, unknown>, false);
  });
}

function parseVersion(name: string, record: Record<string, unknown>, single: boolean): ParsedVersion {
  const where = single ? 'customResource' : `customResource: versions.${name}`;
  if (!single) checkOptionNames(where, record, SERVED_OPTIONS);
  const flag = (option: string, fallback: boolean): boolean => {
    const v = record[option];
    if (v === undefined) return fallback;
    if (typeof v !== 'boolean') throw new TypeError(`${where}: ${option} must be a boolean, got ${describeValue(v)}`);
    return v;
  };
  const deprecated = flag('deprecated', false);
  const warning = record['deprecationWarning'];
  if (warning !== undefined && (typeof warning !== 'string' || !deprecated || warning.length > 256)) {
    throw new TypeError(`${where}: deprecationWarning must be a string of at most 256 characters on a version with deprecated: true, got ${describeValue(warning)}`);
  }
  if (record['spec'] === undefined) throw new TypeError(`${where}: spec is required (a schema of the object's spec)`);
  const spec = schemaOf('spec', record['spec']);
  const status = record['status'] === undefined ? undefined : schemaOf('status', record['status']);
  const schema: Node = {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: spec.structural,
      ...(status === undefined ? {} : { status: status.structural }),
    },
    required: ['spec'],
  };
  const subresources = checkSubresources(where, record['subresources'], schema, status !== undefined);
  return {
    name,
    served: flag('served', true),
    storage: single ? true : flag('storage', false),
    deprecated,
    deprecationWarning: warning as string | undefined,
    schema,
    spec,
    status,
    printerColumns: checkPrinterColumns(where, record['printerColumns']),
    subresources,
    selectableFields: checkSelectableFields(where, record['selectableFields'], schema),
  };
}

function schemaOf(field: string, value: unknown): { structural: Node; validate: Validator | undefined } {
  const resolved = resolveSchema(field, value);
  const structural = toStructural(field, resolved.jsonSchema);
  if (structural['type'] !== 'object') throw new TypeError(`customResource: ${field} must be a schema of an object, got one of type ${String(structural['type'] ?? 'any')}`);
  checkStructural(field, structural);
  return { structural, validate: resolved.validate };
}
