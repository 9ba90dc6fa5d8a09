import type { KubeObject, ObjectMeta } from '../store/types.js';
import type { TypedResource } from '../sources/resources.js';
import { buildCrd, type CustomResourceDefinition } from './crdObject.js';
import { crdFor, type CrdOptions } from './crdConversion.js';
import { registerConversion, type ConversionOptions, type DefinitionConversion } from './conversion.js';
import { parseDefinition, type ParsedDefinition, type ParsedVersion } from './definition.js';
import type { CustomResourceOptions, MultiVersionOptions, ServedVersionOptions } from './options.js';
import type { CheckedSchema, SchemaOutput } from './schemaSource.js';
import { validateObject, type ValidationResult } from './validateObject.js';

/**
 * The type of an object of a custom resource: `apiVersion` and `kind` as
 * literals, the metadata every object has, `spec` and (when the definition
 * has one) an optional `status` of the schemas' output types.
 */
export type CustomObject<ApiVersion extends string, Kind extends string, Spec, Status> = {
  apiVersion: ApiVersion;
  kind: Kind;
  metadata: ObjectMeta;
  spec: Spec;
} & ([Status] extends [undefined] ? unknown : { status?: Status });

/**
 * A custom resource defined once, by {@link customResource}: its names, its
 * objects' TypeScript type (`typeof Website.Type`), its CRD and a validator.
 * Pass it wherever a resource is asked for — `kubeSource(kc, Website)`,
 * `objectClient(kc, Website)`, `factory.informerFor(Website)` — and the
 * source, client or informer has the objects' type with no type argument.
 *
 * A definition with several versions reads as its storage version; each
 * version's view is `forVersion('v1')`.
 *
 * ## Example
 * ```ts
 * import { z } from 'zod';
 * import { customResource, type CustomResource } from 'rxkube';
 *
 * const Website = customResource({ group: 'example.com', version: 'v1', kind: 'Website', spec: z.object({ image: z.string() }) });
 * type Website = typeof Website.Type;
 * const same: CustomResource<Website> = Website;
 * console.log(same.apiVersion, same.plural); // example.com/v1 websites
 * ```
 */
export interface CustomResource<T extends KubeObject = KubeObject, Versions extends Record<string, KubeObject> = Record<string, T>, Conversion extends boolean = boolean>
  extends TypedResource<T> {
  /** The API group: `example.com`. */
  readonly group: string;
  /** This view's version. */
  readonly version: string;
  /** `group/version`: what the objects' `apiVersion` says, as the literal type of the objects' field. */
  readonly apiVersion: T extends { readonly apiVersion: infer A extends string } ? A : string;
  /** The objects' kind, as the literal type of their field. */
  readonly kind: T extends { readonly kind: infer K extends string } ? K : string;
  /** The name in URLs: `websites`. */
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  /** Whether objects live in namespaces (scope `Namespaced`). */
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Every version of the definition, in the CRD's order. */
  readonly versions: readonly string[];
  /** The objects' type, for `typeof Website.Type` only: reading it at run time throws. */
  readonly Type: T;
  /** Whether the definition has converters (its `conversion` option), so that its CRD needs a conversion webhook. */
  readonly hasConversion: Conversion;
  /**
   * The `apiextensions.k8s.io/v1` CustomResourceDefinition, as plain frozen
   * JSON. Without `conversion`, called with no argument (anything else is a
   * TypeError), and the same object on every call. With `conversion`,
   * `options.conversionWebhook` is required (a TypeError naming it
   * otherwise): the CRD's `spec.conversion` sends ConversionReviews there.
   */
  crd(...options: CrdArguments<Conversion>): CustomResourceDefinition;
  /**
   * Validates an object of this view's version: `apiVersion`, `kind` and
   * the metadata's shape, then `spec` and `status` by the schema library's
   * own validator (synchronously; a schema with async refinements throws a
   * TypeError). The answer has Standard Schema's shape: the object as the
   * schemas read it (defaults and transforms applied), or the issues, each a
   * field named as kube-apiserver names it (`spec.replicas`,
   * `spec.ports[0].name`) and what is wrong with it.
   */
  validate(obj: unknown): { readonly value: T; readonly issues?: undefined } | { readonly issues: readonly { readonly path: string; readonly message: string }[] };
  /** The view of another version of the definition: the same CRD, that version's type and validator. */
  forVersion<V extends keyof Versions & string>(version: V): CustomResource<Versions[V], Versions, Conversion>;
}

/** What `crd()` takes: options with a conversion webhook when the definition has converters, nothing when it has none. */
export type CrdArguments<Conversion extends boolean> = boolean extends Conversion ? [options?: CrdOptions] : Conversion extends true ? [options: CrdOptions] : [];

/** The object type of every version of a multi-version definition. */
export type VersionObjects<G extends string, K extends string, Vs> = {
  [V in keyof Vs & string]: CustomObject<`${G}/${V}`, K, Vs[V] extends { readonly spec: infer S } ? SchemaOutput<S> : never,
    Vs[V] extends { readonly status?: infer St } ? ([St] extends [undefined] ? undefined : SchemaOutput<St>) : undefined
  >;
};

/** The name of the version whose options say `storage: true`. */
export type StorageVersion<Vs> = { [V in keyof Vs & string]: Vs[V] extends { readonly storage: true } ? V : never }[keyof Vs & string];

const definitions = new WeakSet<object>();

/**
 * Defines a custom resource from one schema: its TypeScript type, its
 * structural CRD, validation, and typed sources and clients.
 *
 * `spec` and `status` take any schema implementing Standard Schema with
 * Standard JSON Schema (zod ≥ 4.2; valibot through `toStandardJsonSchema`
 * of `@valibot/to-json-schema`; ArkType) or a plain JSON Schema value
 * (TypeBox, {@link jsonSchema}). The objects' type uses the schemas' output
 * types, since objects read from the server have their defaults applied;
 * the CRD uses their input JSON Schema, so a field with a default is
 * optional there and carries the default.
 *
 * Everything is checked now: names as apiextensions validation checks them
 * (a `TypeError` naming the option), and each schema rewritten into the
 * structural form kube-apiserver requires, what has none refused with a
 * `CustomResourceSchemaError` naming the field. `plural` (English rules),
 * `singular` and `listKind` are derived from `kind` unless given.
 *
 * Several versions: `versions: { v1: {…}, v2: { …, storage: true } }`, one
 * of them the storage version; the definition then reads as its storage
 * version, and `forVersion('v1')` gives each version's view. With
 * `conversion: { v1: { toStorage, fromStorage } }` — converters typed from
 * the version schemas, for every version but the storage version — the
 * versions differ in shape: `admission.conversion(definition)` serves them as
 * the conversion webhook, and `crd({ conversionWebhook })` points the CRD at it.
 *
 * ## Example
 * ```ts
 * import { z } from 'zod';
 * import { customResource, objectClient } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * export const Website = customResource({
 *   group: 'example.com', version: 'v1', kind: 'Website', shortNames: ['ws'],
 *   spec: z.object({ image: z.string().min(1), replicas: z.number().int().min(0).max(50).default(1) }),
 *   status: z.object({ readyReplicas: z.number().int().optional() }),
 *   printerColumns: [{ name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' }],
 *   subresources: { status: true, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas' } },
 * });
 * export type Website = typeof Website.Type;
 *
 * console.log(Website.crd().metadata.name); // websites.example.com
 * await objectClient(kc, Website, { namespace: 'default' }).apply({ apiVersion: Website.apiVersion, kind: 'Website', metadata: { name: 'home' }, spec: { image: 'nginx' } });
 * ```
 *
 * @param options `group`, `version` (or `versions`), `kind`, `spec`, `status` and the CRD's other fields.
 * @returns The definition.
 * @throws TypeError naming an option that kube-apiserver would refuse.
 * @throws CustomResourceSchemaError naming a field whose schema cannot be structural.
 */
export function customResource<const G extends string, const K extends string, const Vs extends Record<string, ServedVersionOptions<any, any>>>(
  options: MultiVersionOptions<G, K, Vs> & {
    readonly versions: { readonly [V in keyof Vs]: { readonly spec: CheckedSchema<Vs[V]['spec']> } };
    /**
     * Converters between versions, hub and spoke: for every version but the storage version, `toStorage` and
     * `fromStorage`, served by `admission.conversion(definition)`. None: the API server only rewrites apiVersion.
     * @default none
     */
    readonly conversion: NoInfer<ConversionOptions<VersionObjects<G, K, Vs>, StorageVersion<Vs>>>;
  },
): CustomResource<VersionObjects<G, K, Vs>[StorageVersion<Vs>], VersionObjects<G, K, Vs>, true>;
export function customResource<const G extends string, const K extends string, const Vs extends Record<string, ServedVersionOptions<any, any>>>(
  options: MultiVersionOptions<G, K, Vs> & { readonly versions: { readonly [V in keyof Vs]: { readonly spec: CheckedSchema<Vs[V]['spec']> } }; readonly conversion?: undefined },
): CustomResource<VersionObjects<G, K, Vs>[StorageVersion<Vs>], VersionObjects<G, K, Vs>, false>;
export function customResource<const G extends string, const V extends string, const K extends string, S, St = undefined>(
  options: CustomResourceOptions<G, V, K, S, St>,
): CustomResource<CustomObject<`${G}/${V}`, K, SchemaOutput<S>, [St] extends [undefined] ? undefined : SchemaOutput<St>>, Record<string, CustomObject<`${G}/${V}`, K, SchemaOutput<S>, [St] extends [undefined] ? undefined : SchemaOutput<St>>>, false>;
export function customResource(options: unknown): CustomResource {
  const def = parseDefinition(options);
  const crd = buildCrd(def);
  const views = new Map<string, CustomResource>();
  const conversion: DefinitionConversion | undefined =
    def.conversion === undefined
      ? undefined
      : Object.freeze({ group: def.group, kind: def.kind, storage: def.storage.name, versions: Object.freeze(def.versions.map((v) => v.name)), converters: def.conversion });
  for (const version of def.versions) {
    const made = view(def, version, crd, views);
    if (conversion !== undefined) registerConversion(made, conversion);
    views.set(version.name, made);
  }
  return views.get(def.storage.name) as CustomResource;
}

/**
 * Whether a value is a definition made by {@link customResource}.
 *
 * ## Example
 * ```ts
 * import { isCustomResource } from 'rxkube/core';
 *
 * declare const loaded: Record<string, unknown>; // a module's exports: await import(path)
 * const definitions = Object.values(loaded).filter(isCustomResource);
 * for (const d of definitions) console.log(d.crd().metadata.name);
 * ```
 *
 * @param value Anything.
 * @returns true for a definition (or one of its version views).
 */
export function isCustomResource(value: unknown): value is CustomResource {
  return typeof value === 'object' && value !== null && definitions.has(value);
}

function view(def: ParsedDefinition, version: ParsedVersion, crd: CustomResourceDefinition, views: ReadonlyMap<string, CustomResource>): CustomResource {
  const resource = {
    group: def.group,
    version: version.name,
    apiVersion: `${def.group}/${version.name}`,
    kind: def.kind,
    plural: def.plural,
    singular: def.singular,
    listKind: def.listKind,
    namespaced: def.namespaced,
    shortNames: Object.freeze([...def.shortNames]),
    categories: Object.freeze([...def.categories]),
    versions: Object.freeze(def.versions.map((v) => v.name)),
    hasConversion: def.conversion !== undefined,
    crd: (options?: unknown): CustomResourceDefinition => crdFor(def.kind, crd, def.conversion !== undefined, options),
    validate: (obj: unknown): ValidationResult<KubeObject> => validateObject(def, version, obj) as ValidationResult<KubeObject>,
    forVersion: (name: string): CustomResource => {
      const found = views.get(name);
      if (found === undefined) throw new TypeError(`${def.kind}.forVersion: no version ${JSON.stringify(name)}; the versions are ${def.versions.map((v) => v.name).join(', ')}`);
      return found;
    },
  };
  Object.defineProperty(resource, 'Type', {
    enumerable: false,
    get(): never {
      throw new TypeError(`${def.kind}.Type is a type, for \`typeof ${def.kind}.Type\`; it has no value at run time`);
    },
  });
  Object.freeze(resource);
  definitions.add(resource);
  return resource as unknown as CustomResource;
}
