/**
 * The module `rxkube crd types` writes for a CRD: per version, the types of
 * `spec` and `status`, then one `customResource({...})` definition carrying
 * the CRD's names, scope and, per version, its schemas verbatim (through
 * `jsonSchema<T>(...)`), printer columns, subresources and selectable
 * fields, so generating a CRD from the module gives back an equivalent one
 * (semantics CR-99…CR-102).
 */
import { printable } from '../errors/printable.js';
import { Declarations, declareRoot, docComment, memberKey, pascal, tsString } from './schemaTypes.js';
import { UsageError } from './usage.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Source text kept as is by {@link literal}: a `jsonSchema<T>(...)` call. */
class Code {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** A value as a TypeScript expression, indented as a person would write it; strings in single quotes. */
function literal(value: unknown, indent: string): string {
  if (value instanceof Code) return value.text.replace(/\n/g, `\n${indent}`);
  if (typeof value === 'string') return tsString(value);
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'string')) return `[${value.map((v) => literal(v, indent)).join(', ')}]`;
    return `[\n${value.map((v) => `${indent}  ${literal(v, `${indent}  `)},`).join('\n')}\n${indent}]`;
  }
  if (isObject(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([k, v]) => `${indent}  ${memberKey(k)}: ${literal(v, `${indent}  `)},`).join('\n')}\n${indent}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** The fields of a custom resource's root that customResource() writes itself. */
const ROOT_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status']);

/** One version's options: its types declared, its schemas carried verbatim. */
function versionOptions(crdName: string, kind: string, version: Json, suffix: string, decls: Declarations, notes: string[]): Json {
  const name = String(version['name']);
  const root = (version['schema'] as { openAPIV3Schema?: unknown } | undefined)?.openAPIV3Schema;
  if (!isObject(root) || !isObject(root['properties'])) throw new UsageError(`${crdName}: version ${printable(name)} has no openAPIV3Schema with properties; there is nothing to type`);
  const properties = root['properties'];
  const foreign = Object.keys(properties).filter((k) => !ROOT_FIELDS.has(k));
  if (foreign.length > 0) {
    throw new UsageError(`${crdName}: version ${printable(name)} has top-level fields customResource() cannot carry (it types spec and status only): ${foreign.map((f) => printable(f)).join(', ')}`);
  }
  if (properties['spec'] === undefined) throw new UsageError(`${crdName}: version ${printable(name)} has no spec in its schema; customResource() needs one`);
  const extra = Object.keys(root).filter((k) => k !== 'type' && k !== 'properties' && k !== 'description');
  if (extra.length > 0) notes.push(`${name}: the schema's root also has ${extra.map((k) => `${k}: ${JSON.stringify(root[k])}`).join(', ')}; customResource() writes the root itself.`);
  const metadata = properties['metadata'];
  if (isObject(metadata) && Object.keys(metadata).some((k) => k !== 'type')) notes.push(`${name}: the schema of metadata, ${JSON.stringify(metadata)}; customResource() writes metadata's schema itself.`);
  if (typeof root['description'] === 'string' && !notes.some((n) => n.startsWith('about: '))) notes.unshift(`about: ${root['description']}`);
  const specType = declareRoot(properties['spec'], `${kind}Spec${suffix}`, decls);
  const sub = isObject(version['subresources']) ? version['subresources'] : undefined;
  // A status subresource needs a status schema in a definition (CR-7); a CRD may have the one without the other,
  // where the server prunes whatever status is written. An empty object schema keeps that: nothing under it survives.
  const statusSchema = properties['status'] ?? (sub?.['status'] !== undefined ? { type: 'object' } : undefined);
  if (properties['status'] === undefined && statusSchema !== undefined) notes.push(`${name}: a status subresource without a status schema; the definition gives status an empty object schema, which keeps nothing, as the server's pruning would.`);
  const statusType = statusSchema === undefined ? undefined : declareRoot(statusSchema, `${kind}Status${suffix}`, decls);
  const subresources =
    sub === undefined ? undefined : { ...(sub['status'] !== undefined ? { status: true } : {}), ...(isObject(sub['scale']) ? { scale: sub['scale'] } : {}) };
  return {
    spec: new Code(`jsonSchema<${specType}>(${literal(properties['spec'], '')})`),
    ...(statusType === undefined ? {} : { status: new Code(`jsonSchema<${statusType}>(${literal(statusSchema, '')})`) }),
    ...(Array.isArray(version['additionalPrinterColumns']) ? { printerColumns: version['additionalPrinterColumns'] } : {}),
    ...(subresources === undefined || Object.keys(subresources).length === 0 ? {} : { subresources }),
    ...(Array.isArray(version['selectableFields']) ? { selectableFields: version['selectableFields'] } : {}),
  };
}

/** The names part of the options, and the exported constant's name. */
function namesOf(crd: Json): { readonly crdName: string; readonly kind: string; readonly options: Json } {
  const crdName = printable(String((crd['metadata'] as { name?: unknown } | undefined)?.name));
  const spec = crd['spec'];
  if (!isObject(spec) || !isObject(spec['names']) || typeof spec['group'] !== 'string' || !Array.isArray(spec['versions'])) {
    throw new UsageError(`${crdName}: not a complete CustomResourceDefinition (spec.group, spec.names and spec.versions are needed)`);
  }
  const names = spec['names'];
  const kind = String(names['kind']);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) throw new UsageError(`${crdName}: spec.names.kind ${JSON.stringify(printable(kind))} is not a kind name`);
  const list = (v: unknown): string[] | undefined => (Array.isArray(v) && v.length > 0 ? v.map(String) : undefined);
  return {
    crdName,
    kind,
    options: {
      group: spec['group'],
      kind,
      plural: names['plural'],
      singular: names['singular'],
      listKind: names['listKind'],
      scope: spec['scope'],
      shortNames: list(names['shortNames']),
      categories: list(names['categories']),
    },
  };
}

/** One CRD's declarations and definition. */
function crdSection(crd: Json, decls: Declarations): string {
  const { crdName, kind, options } = namesOf(crd);
  // Taken before the version's types, so a nested type never takes the kind's own name.
  const constName = decls.name(kind);
  const versions = (crd['spec'] as { versions: unknown[] }).versions.filter(isObject);
  if (versions.length === 0) throw new UsageError(`${crdName}: spec.versions is empty`);
  const notes: string[] = [];
  const per = versions.map((v) => {
    const suffix = versions.length === 1 ? '' : pascal(String(v['name']));
    return [String(v['name']), v, versionOptions(crdName, kind, v, suffix, decls, notes)] as const;
  });
  const conversion = (crd['spec'] as Json)['conversion'];
  if (isObject(conversion) && conversion['strategy'] !== undefined && conversion['strategy'] !== 'None') notes.push(`the conversion, ${JSON.stringify(conversion)}.`);
  let definition: Json;
  if (per.length === 1) {
    const [name, v, opts] = per[0] as (typeof per)[number];
    definition = { ...options, version: name, ...versionFlags(v, false), ...opts };
  } else {
    definition = { ...options, versions: Object.fromEntries(per.map(([name, v, opts]) => [name, { ...versionFlags(v, true), ...opts }])) };
  }
  // The root's description (the first version's to carry one) says what the resource is; the other notes say what the definition leaves out.
  const about = notes.filter((n) => n.startsWith('about: ')).map((n) => n.slice('about: '.length));
  const left = notes.filter((n) => !n.startsWith('about: '));
  const header = docComment(
    [`${kind} (${crdName}), as its CustomResourceDefinition declares it.`, ...about, ...left.map((n) => `Not carried: ${n}`)].join('\n\n'),
    '',
  ).trimEnd();
  return `${header}\nexport const ${constName} = customResource(${literal(definition, '')});\nexport type ${constName} = typeof ${constName}.Type;`;
}

/** served, storage and deprecation, written only where they differ from a definition's defaults. */
function versionFlags(v: Json, several: boolean): Json {
  return {
    ...(v['served'] === false ? { served: false } : {}),
    ...(several && v['storage'] === true ? { storage: true } : {}),
    ...(v['deprecated'] === true ? { deprecated: true } : {}),
    ...(typeof v['deprecationWarning'] === 'string' ? { deprecationWarning: v['deprecationWarning'] } : {}),
  };
}

/**
 * The TypeScript module for CRDs: their types, then a definition for each.
 *
 * @param crds the CustomResourceDefinitions (a file may hold several).
 * @returns the module's text.
 * @throws {UsageError} for a CRD that cannot be typed (no schema, no spec, fields beside spec and status).
 */
export function crdTypesModule(crds: readonly Json[]): string {
  const decls = new Declarations();
  // The definitions' names are taken first, so a nested type never takes `Certificate` from its kind.
  const definitions = crds.map((crd) => crdSection(crd, decls));
  const names = crds.map((crd) => printable(String((crd['metadata'] as { name?: unknown } | undefined)?.name))).join(', ');
  return [
    `/**\n * Types and definitions for ${names.replace(/\*\//g, '*\\/')}, written by \`rxkube crd types\` from ${crds.length === 1 ? 'its' : 'their'} CustomResourceDefinition${crds.length === 1 ? '' : 's'}.\n * Regenerate rather than edit: the schemas below are the CRD's own.\n */`,
    "import { customResource, jsonSchema } from 'rxkube';",
    decls.text(),
    ...definitions,
  ].join('\n\n') + '\n';
}
