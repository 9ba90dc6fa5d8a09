import type { CheckedSchema } from './schemaSource.js';

/** A column `kubectl get` prints for the resource (a CRD version's `additionalPrinterColumns`). */
export interface PrinterColumn {
  /** The column's header. */
  readonly name: string;
  /** How the value is shown: `integer`, `number`, `string`, `boolean` or `date` (an age). */
  readonly type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  /** A simple JSONPath into the object: `.status.readyReplicas`. */
  readonly jsonPath: string;
  /** What the column means (kubectl's `--help` of the resource). */
  readonly description?: string;
  /** A format of the type: `int32`, `int64`, `float`, `double`, `byte`, `date`, `date-time`, `password`. */
  readonly format?: string;
  /**
   * 0 shows the column in the standard view; more only with `-o wide`.
   * @default 0
   */
  readonly priority?: number;
}

/** The subresources a version serves. */
export interface Subresources {
  /** Serve `/status`: writes of the main resource ignore status, writes of `/status` ignore the rest. */
  readonly status?: true;
  /** Serve `/scale`: where the desired and observed replica counts live. */
  readonly scale?: {
    /** `.spec.replicas`: an integer field under `.spec`. */
    readonly specReplicasPath: string;
    /** `.status.replicas`: an integer field under `.status`. */
    readonly statusReplicasPath: string;
    /** `.status.selector`: a string field holding the label selector, for the HorizontalPodAutoscaler. */
    readonly labelSelectorPath?: string;
  };
}

/** What one version of a custom resource declares. */
export interface VersionOptions<S = unknown, St = unknown> {
  /** The schema of `spec`. */
  readonly spec: S & CheckedSchema<S>;
  /** The schema of `status`; none means the resource has no status. */
  readonly status?: St & CheckedSchema<St>;
  /** Columns `kubectl get` prints. */
  readonly printerColumns?: readonly PrinterColumn[];
  /** The `/status` and `/scale` subresources. */
  readonly subresources?: Subresources;
  /** Fields field selectors may use (at most 8), each a string, integer or boolean field (`{ jsonPath: '.spec.color' }`). */
  readonly selectableFields?: readonly { readonly jsonPath: string }[];
}

/** How a custom resource is named, and where it lives: the options every definition shares. */
export interface NamesOptions<G extends string, K extends string> {
  /** The API group, a DNS subdomain with a dot: `example.com`. */
  readonly group: G;
  /** The kind, UpperCamelCase: `Website`. */
  readonly kind: K;
  /**
   * The resource name in URLs.
   * @default the lower-case kind made plural by the English rules (`websites`, `policies`, `classes`)
   */
  readonly plural?: string;
  /**
   * @default the lower-case kind
   */
  readonly singular?: string;
  /**
   * @default the kind followed by `List`
   */
  readonly listKind?: string;
  /**
   * @default 'Namespaced'
   */
  readonly scope?: 'Namespaced' | 'Cluster';
  /**
   * Short names kubectl accepts (`ws`).
   * @default []
   */
  readonly shortNames?: readonly string[];
  /**
   * Categories the resource belongs to (`all` makes `kubectl get all` list it).
   * @default []
   */
  readonly categories?: readonly string[];
}

/** The options of a custom resource with one version. */
export interface CustomResourceOptions<G extends string, V extends string, K extends string, S, St> extends NamesOptions<G, K>, VersionOptions<S, St> {
  /** The version: `v1`, `v1beta1`. */
  readonly version: V;
}

/** One entry of `versions`: a version's schema and what the server does with it. */
export interface ServedVersionOptions<S = unknown, St = unknown> extends VersionOptions<S, St> {
  /**
   * Whether the server serves this version.
   * @default true
   */
  readonly served?: boolean;
  /** The one version objects are stored in: exactly one version says `storage: true`. */
  readonly storage?: boolean;
  /**
   * Whether clients get a deprecation warning when they use this version.
   * @default false
   */
  readonly deprecated?: boolean;
  /** The warning's text, instead of the server's own. Only with `deprecated: true`. */
  readonly deprecationWarning?: string;
}

/** The options of a custom resource with several versions. */
export interface MultiVersionOptions<G extends string, K extends string, Vs> extends NamesOptions<G, K> {
  /** The versions by name: `{ v1: {…}, v2: { …, storage: true } }`, in the order the CRD lists them. */
  readonly versions: Vs;
}
