import { describeValue } from '../../options/validate.js';

/**
 * A resource the simulator serves. Built-in resources are registered at
 * start; custom resources are added with `server.registerResource()` or the
 * `resources` option.
 */
export interface ResourceDefinition {
  /** API group; `''` or omitted for the core group. @default '' */
  readonly group?: string;
  /** API version, e.g. `v1`. */
  readonly version: string;
  /** Lower-case plural used in URLs, e.g. `widgets`. */
  readonly plural: string;
  /** Kind of one object, e.g. `Widget`. */
  readonly kind: string;
  /** True when objects live in a namespace. @default true */
  readonly namespaced?: boolean;
  /** Kind of the list. @default `${kind}List` */
  readonly listKind?: string;
  /**
   * Fields usable in a field selector beyond `metadata.name` and
   * `metadata.namespace` (a CRD's `selectableFields`), as dotted paths.
   * @default []
   */
  readonly selectableFields?: readonly string[];
  /**
   * The subresources the resource serves, as a CRD declares them: with
   * `status`, writes to the object leave its status alone and writes to
   * `/status` change nothing else; without it `/status` is 404 and the
   * status is a field like any other.
   * @default {} (no status subresource)
   */
  readonly subresources?: { readonly status?: object };
}

/** A resource as the simulator uses it internally: names resolved once. */
export interface ResourceType {
  /** `v1/pods`, `apps/v1/deployments`: the name tests and faults use. */
  readonly id: string;
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly listKind: string;
  readonly apiVersion: string;
  readonly namespaced: boolean;
  readonly fields: ReadonlySet<string>;
  /** Server-side defaults applied on create, as the real server's registry strategy does for a few resources. */
  readonly defaults?: (obj: Record<string, unknown>) => void;
  /** Served by kube-apiserver itself (false: a custom resource), which decides the Go type named in some errors. */
  readonly builtIn: boolean;
  /**
   * A PUT without `metadata.resourceVersion` overwrites whatever is stored
   * (the registry strategy's AllowUnconditionalUpdate); false answers 422.
   */
  readonly unconditionalUpdate: boolean;
  /** A PUT of a missing object creates it (201) instead of 404 (the strategy's AllowCreateOnUpdate). */
  readonly createOnUpdate: boolean;
  /** Served with a `/status` subresource, which alone writes the status. */
  readonly statusSubresource: boolean;
  /** The resource's own validation of an object about to be stored (a 422 StatusError when it fails). */
  readonly validate?: (obj: Record<string, unknown>) => void;
  /**
   * Admission of an object about to be stored, given the stored one on an
   * update: returns what is stored instead (pruned, defaulted) or throws the
   * refusal (422). Runs before the generation is counted, so pruned changes
   * count for nothing.
   */
  readonly admit?: (next: Record<string, unknown>, old: Record<string, unknown> | undefined, subresource?: 'status') => Record<string, unknown>;
  /**
   * The object as the server decodes a request body, before admission:
   * pruned and defaulted by the schema, not validated (a copy). Absent: the
   * body is taken as sent.
   */
  readonly decode?: (obj: Record<string, unknown>) => Record<string, unknown>;
  /** What discovery says of the resource beyond its names, when a CRD declares it. */
  readonly discovery?: DiscoveryNames;
  /** The `/scale` subresource, when a CRD declares it. */
  readonly scale?: ScalePaths;
  /** The columns of the Table form, when the resource has them (custom resources). */
  readonly columns?: readonly PrinterColumn[];
  /**
   * The resource whose store holds this one's objects, for the versions of
   * one CRD: objects are kept in the storage version and served in this one.
   */
  readonly storage?: ResourceType;
}

/** The names discovery lists for a custom resource. */
export interface DiscoveryNames {
  readonly singularName: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
}

/** Where a CRD's scale subresource reads and writes, as simple JSON paths (`.spec.replicas`). */
export interface ScalePaths {
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  readonly labelSelectorPath: string | undefined;
}

/** One column of the Table form: a CRD's additionalPrinterColumns entry, or the implicit Name and Age. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  readonly priority: number;
  /** A simple JSON path into the object; undefined for the Name column. */
  readonly jsonPath: string | undefined;
  /** A date printed as the timestamp it is rather than as an age (a built-in printer's `Created At`). */
  readonly timestamp?: boolean;
}

/**
 * What differs between resources beyond their names, as kube-apiserver's registry strategies decide it: a
 * custom resource's (builtIn false) unless said otherwise; unconditionalUpdate follows builtIn.
 */
export type ResourcePolicy = Partial<
  Omit<ResourceType, keyof ResourceDefinition | 'id' | 'apiVersion' | 'fields' | 'statusSubresource'>
>;

const NAME_RE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

const ALL = ['all'];

/**
 * kube-apiserver 1.34's short names and categories of the built-in resources
 * the simulator serves, as its discovery lists them (`kubectl get deploy`,
 * `kubectl get all`): the one place they are written. A built-in resource
 * missing here has neither, as `secrets` and `leases` have none on a real server.
 */
const BUILT_IN_NAMES: Readonly<Record<string, { readonly shortNames: readonly string[]; readonly categories?: readonly string[] }>> = {
  'v1/pods': { shortNames: ['po'], categories: ALL },
  'v1/services': { shortNames: ['svc'], categories: ALL },
  'v1/configmaps': { shortNames: ['cm'] },
  'v1/namespaces': { shortNames: ['ns'] },
  'v1/nodes': { shortNames: ['no'] },
  'v1/events': { shortNames: ['ev'] },
  'events.k8s.io/v1/events': { shortNames: ['ev'] },
  'apps/v1/deployments': { shortNames: ['deploy'], categories: ALL },
  'apps/v1/replicasets': { shortNames: ['rs'], categories: ALL },
  'apiextensions.k8s.io/v1/customresourcedefinitions': { shortNames: ['crd', 'crds'], categories: ['api-extensions'] },
};

/** What discovery lists of a built-in resource beyond its plural and kind. */
function builtInNames(id: string, kind: string): DiscoveryNames {
  const names = BUILT_IN_NAMES[id];
  return { singularName: kind.toLowerCase(), shortNames: names?.shortNames ?? [], categories: names?.categories ?? [] };
}

/**
 * Builds the internal form of a definition, checking every field. Without a
 * policy it is a custom resource: kube-apiserver requires a resourceVersion
 * on every PUT of one and never creates one on PUT.
 */
export function toResourceType(def: ResourceDefinition, policy: ResourcePolicy = {}): ResourceType {
  if (def === null || typeof def !== 'object') throw new TypeError(`resource definition must be an object, got ${describeValue(def)}`);
  const group = def.group ?? '';
  if (typeof group !== 'string' || (group !== '' && !NAME_RE.test(group))) {
    throw new TypeError(`resource definition: invalid group ${JSON.stringify(def.group)}`);
  }
  for (const field of ['version', 'plural', 'kind'] as const) {
    const v = def[field];
    if (typeof v !== 'string' || v === '' || v.includes('/')) {
      throw new TypeError(`resource definition: invalid ${field} ${JSON.stringify(v)}`);
    }
  }
  if (!NAME_RE.test(def.plural)) throw new TypeError(`resource definition: invalid plural ${JSON.stringify(def.plural)}`);
  if (def.namespaced !== undefined && typeof def.namespaced !== 'boolean') {
    throw new TypeError(`resource definition: invalid namespaced ${JSON.stringify(def.namespaced)}`);
  }
  if (def.subresources !== undefined && (def.subresources === null || typeof def.subresources !== 'object')) {
    throw new TypeError(`resource definition: invalid subresources ${JSON.stringify(def.subresources)}`);
  }
  const selectable = def.selectableFields ?? [];
  if (!Array.isArray(selectable) || selectable.some((f) => typeof f !== 'string' || f === '')) {
    throw new TypeError(`resource definition: invalid selectableFields ${JSON.stringify(def.selectableFields)}`);
  }
  const id = group === '' ? `${def.version}/${def.plural}` : `${group}/${def.version}/${def.plural}`;
  const { builtIn = false, unconditionalUpdate = builtIn, createOnUpdate = false, ...rest } = policy;
  const discovery = rest.discovery ?? (builtIn ? builtInNames(id, def.kind) : undefined);
  return {
    id,
    group,
    version: def.version,
    plural: def.plural,
    kind: def.kind,
    listKind: def.listKind ?? `${def.kind}List`,
    apiVersion: group === '' ? def.version : `${group}/${def.version}`,
    namespaced: def.namespaced ?? true,
    fields: new Set(['metadata.name', 'metadata.namespace', ...selectable]),
    builtIn,
    unconditionalUpdate,
    createOnUpdate,
    statusSubresource: def.subresources?.status !== undefined && def.subresources.status !== null,
    ...rest,
    ...(discovery === undefined ? {} : { discovery }),
  };
}

function ensureObject(obj: Record<string, unknown>, field: string): Record<string, unknown> {
  const v = obj[field];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  obj[field] = fresh;
  return fresh;
}

/** The subresources of a built-in resource whose status only `/status` writes. */
const WITH_STATUS = { status: {} };

/** The resources every simulator serves from the start, with the field selectors kube-apiserver supports for them. */
export function builtInResources(): ResourceType[] {
  const builtIn = true;
  return [
    toResourceType(
      {
        version: 'v1',
        plural: 'pods',
        kind: 'Pod',
        subresources: WITH_STATUS,
        selectableFields: [
          'spec.nodeName',
          'spec.restartPolicy',
          'spec.schedulerName',
          'spec.serviceAccountName',
          'spec.hostNetwork',
          'status.phase',
          'status.podIP',
          'status.nominatedNodeName',
        ],
      },
      {
        builtIn,
        defaults: (obj) => {
          const status = ensureObject(obj, 'status');
          if (status['phase'] === undefined) status['phase'] = 'Pending';
        },
      },
    ),
    toResourceType({ version: 'v1', plural: 'configmaps', kind: 'ConfigMap' }, { builtIn }),
    toResourceType(
      { version: 'v1', plural: 'secrets', kind: 'Secret', selectableFields: ['type'] },
      {
        builtIn,
        defaults: (obj) => {
          if (obj['type'] === undefined) obj['type'] = 'Opaque';
        },
      },
    ),
    toResourceType({ version: 'v1', plural: 'services', kind: 'Service', subresources: WITH_STATUS }, { builtIn }),
    toResourceType(
      { version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false, selectableFields: ['status.phase'], subresources: WITH_STATUS },
      {
        builtIn,
        defaults: (obj) => {
          const status = ensureObject(obj, 'status');
          if (status['phase'] === undefined) status['phase'] = 'Active';
        },
      },
    ),
    toResourceType({ version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, selectableFields: ['spec.unschedulable'], subresources: WITH_STATUS }, { builtIn }),
    toResourceType({ group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', subresources: WITH_STATUS }, { builtIn }),
    toResourceType(
      { group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', selectableFields: ['status.replicas'], subresources: WITH_STATUS },
      { builtIn },
    ),
    // kube-apiserver's lease strategy refuses unconditional updates and creates a lease on PUT.
    toResourceType(
      { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease' },
      { builtIn, unconditionalUpdate: false, createOnUpdate: true },
    ),
  ];
}
