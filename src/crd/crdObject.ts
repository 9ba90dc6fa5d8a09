import type { ParsedDefinition, ParsedVersion } from './definition.js';
import { deepFreeze } from '../store/deepFreeze.js';

/**
 * An `apiextensions.k8s.io/v1` CustomResourceDefinition as plain JSON, as
 * `kubectl apply` and the API server take it. Made by a definition's `crd()`.
 */
export interface CustomResourceDefinition {
  readonly apiVersion: 'apiextensions.k8s.io/v1';
  readonly kind: 'CustomResourceDefinition';
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly group: string;
    readonly names: {
      readonly kind: string;
      readonly listKind: string;
      readonly plural: string;
      readonly singular: string;
      readonly shortNames?: readonly string[];
      readonly categories?: readonly string[];
    };
    readonly scope: 'Namespaced' | 'Cluster';
    readonly versions: readonly {
      readonly name: string;
      readonly served: boolean;
      readonly storage: boolean;
      readonly deprecated?: boolean;
      readonly deprecationWarning?: string;
      readonly schema: { readonly openAPIV3Schema: Readonly<Record<string, unknown>> };
      readonly subresources?: { readonly status?: Readonly<Record<string, never>>; readonly scale?: Readonly<Record<string, string>> };
      readonly additionalPrinterColumns?: readonly Readonly<Record<string, unknown>>[];
      readonly selectableFields?: readonly { readonly jsonPath: string }[];
    }[];
    /**
     * How the API server converts objects between versions; absent means `None` (only apiVersion changes).
     * A definition's `crd(options)` writes a webhook here.
     */
    readonly conversion?: {
      readonly strategy: 'Webhook';
      readonly webhook: {
        readonly conversionReviewVersions: readonly ['v1'];
        readonly clientConfig: {
          readonly service?: { readonly namespace: string; readonly name: string; readonly path: string; readonly port: number };
          readonly url?: string;
          /** Base64 of the PEM certificates the API server trusts for the webhook. */
          readonly caBundle?: string;
        };
      };
    };
  };
}

/** One version of a CRD. */
type CustomResourceDefinitionVersion = CustomResourceDefinition['spec']['versions'][number];

/** A CRD's `spec.conversion` with a webhook, as a definition's `crd(options)` writes it. */
export type CustomResourceConversion = NonNullable<CustomResourceDefinition['spec']['conversion']>;

/** The CRD of a checked definition, deep-frozen. */
export function buildCrd(def: ParsedDefinition): CustomResourceDefinition {
  const crd: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${def.group}` },
    spec: {
      group: def.group,
      names: {
        kind: def.kind,
        listKind: def.listKind,
        plural: def.plural,
        singular: def.singular,
        ...(def.shortNames.length > 0 ? { shortNames: def.shortNames } : {}),
        ...(def.categories.length > 0 ? { categories: def.categories } : {}),
      },
      scope: def.namespaced ? 'Namespaced' : 'Cluster',
      versions: def.versions.map(versionOf),
    },
  };
  return deepFreeze(structuredClone(crd));
}

function versionOf(v: ParsedVersion): CustomResourceDefinitionVersion {
  return {
    name: v.name,
    served: v.served,
    storage: v.storage,
    ...(v.deprecated ? { deprecated: true } : {}),
    ...(v.deprecationWarning !== undefined ? { deprecationWarning: v.deprecationWarning } : {}),
    schema: { openAPIV3Schema: v.schema },
    ...(v.subresources !== undefined ? { subresources: v.subresources as CustomResourceDefinitionVersion['subresources'] } : {}),
    ...(v.printerColumns.length > 0 ? { additionalPrinterColumns: v.printerColumns } : {}),
    ...(v.selectableFields.length > 0 ? { selectableFields: v.selectableFields as CustomResourceDefinitionVersion['selectableFields'] } : {}),
  };
}
