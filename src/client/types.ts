import type { ParsedResource } from '../sources/resourceRef.js';
import type { ApiStatus } from '../errors/api/KubeApiError.js';
import type { ListAllResult } from '../sources/pager.js';
import type { KubeObject } from '../store/types.js';

/**
 * Options every call of an {@link ObjectClient} takes.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const pod = await objectClient(kc, 'v1/pods', { namespace: 'default' }).get('web', { signal: AbortSignal.timeout(5_000) });
 * ```
 */
export interface CallOptions {
  /** Aborts the request; the call then rejects with the signal's reason. @default undefined (no abort) */
  readonly signal?: AbortSignal;
}

/**
 * Options of every write (create, replace, patch, apply and their status forms).
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const cms = objectClient(kc, 'v1/configmaps', { namespace: 'default', fieldManager: 'my-controller' });
 * const wouldBe = await cms.create({ metadata: { name: 'cfg' }, data: { a: '1' } }, { dryRun: true });
 * ```
 */
export interface WriteOptions extends CallOptions {
  /**
   * Ask the server to check and answer the write without storing it (`dryRun=All`).
   * @default the client's `dryRun` (false)
   */
  readonly dryRun?: boolean;
  /**
   * The name the server records as the owner of the fields this write sets (`metadata.managedFields`).
   * @default the client's `fieldManager` ('rxkube')
   */
  readonly fieldManager?: string;
}

/**
 * Options of {@link ObjectClient.patch}.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * await objectClient(kc, 'v1/pods', { namespace: 'default' }).patch('web', { metadata: { labels: { shard: '3' } } }, { type: 'merge' });
 * ```
 */
export interface PatchOptions extends WriteOptions {
  /**
   * How the server reads the body: `merge` (RFC 7386 JSON merge patch: objects merge, `null` deletes, lists are
   * replaced), `json` (RFC 6902 JSON patch: an array of operations) or `strategic` (Kubernetes' strategic merge
   * patch, built-in types only: lists merge by key). Server-side apply has its own method, {@link ObjectClient.apply}.
   * @default 'merge'
   */
  readonly type?: 'merge' | 'json' | 'strategic';
}

/**
 * Options of {@link ObjectClient.apply} and {@link ObjectClient.applyStatus}.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * await objectClient(kc, 'v1/configmaps', { namespace: 'default' }).apply(
 *   { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { mode: 'fast' } },
 *   { fieldManager: 'my-controller', force: true },
 * );
 * ```
 */
export interface ApplyOptions extends WriteOptions {
  /**
   * Take over fields another field manager owns instead of failing with a conflict (`isApplyConflict`).
   * Controllers usually apply with `force: true`: they are the authority on the fields they set.
   * @default false
   */
  readonly force?: boolean;
}

/**
 * Options of {@link ObjectClient.delete}.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * await objectClient(kc, 'apps/v1/deployments', { namespace: 'default' }).delete('web', { propagationPolicy: 'Foreground' });
 * ```
 */
export interface DeleteOptions extends CallOptions {
  /**
   * Delete only if the object still has this uid and/or resourceVersion; the server refuses with 409 Conflict
   * when it no longer matches (`{ preconditions: { uid: cm.metadata?.uid } }`). @default undefined (unconditional)
   */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  /** What happens to dependents: `Orphan`, `Background` or `Foreground`. @default undefined (the resource's default) */
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** Seconds of grace before the object is removed (pods). @default undefined (the object's own) */
  readonly gracePeriodSeconds?: number;
  /** Check the delete without deleting (`dryRun=All`). @default the client's `dryRun` (false) */
  readonly dryRun?: boolean;
}

/**
 * Options of {@link ObjectClient.list}.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const { items } = await objectClient(kc, 'v1/pods', { namespace: 'default' }).list({ labelSelector: 'app=web', fieldSelector: 'status.phase=Running' });
 * ```
 */
export interface ListCallOptions extends CallOptions {
  /** Only objects whose labels match (`app=web,tier!=db`); checked before any request. @default undefined (all) */
  readonly labelSelector?: string;
  /** Only objects whose fields match (`status.phase=Running`); checked before any request. @default undefined (all) */
  readonly fieldSelector?: string;
  /** Objects per page: the list is read page by page and answered whole. @default 500 */
  readonly pageSize?: number;
}

/**
 * Options of `objectClient`.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const secrets = objectClient(kc, 'v1/secrets', { namespace: 'prod', timeoutMs: 5_000, fieldManager: 'secret-rotator' });
 * ```
 */
export interface ObjectClientOptions {
  /**
   * The namespace every call acts in; left out for cluster-scoped resources. Without it, a client of a
   * namespaced resource writes each object to its own `metadata.namespace` (create, replace, apply, the status
   * writes, delete of an object), lists every namespace, and refuses calls by name alone with a TypeError.
   * With it, an object whose `metadata.namespace` says otherwise is refused (CR-110…CR-112).
   * @default undefined (cluster scope; or each object's namespace, and every namespace for `list`)
   */
  readonly namespace?: string;
  /**
   * Milliseconds a call may take, from sending to the last byte of the answer; past it the call rejects with a
   * `ConnectionError` of code `TIMEOUT`. For `list`, the longest a page may go without a byte.
   * @default 30_000
   */
  readonly timeoutMs?: number;
  /**
   * The field manager of every write (`?fieldManager=`), unless a call names its own: the owner the server
   * records for the fields a write sets, and the applier of {@link ObjectClient.apply}. Name it after your
   * controller, so its fields are told apart from everyone else's.
   * @default 'rxkube'
   */
  readonly fieldManager?: string;
  /**
   * Every write of this client is a dry run unless a call says otherwise.
   * @default false
   */
  readonly dryRun?: boolean;
}

/**
 * `T` with every field optional, at every depth: what a server-side apply configuration may say.
 *
 * ## Example
 * ```ts
 * import type { DeepPartial } from 'rxkube/core';
 * import type { V1DeploymentSpec } from '@kubernetes/client-node';
 *
 * const spec: DeepPartial<V1DeploymentSpec> = { template: { spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } };
 * ```
 */
export type DeepPartial<T> = T extends string | number | boolean | bigint | symbol | null | undefined | Date
  ? T
  : T extends readonly (infer U)[]
    ? readonly DeepPartial<U>[]
    : { readonly [K in keyof T]?: DeepPartial<T[K]> };

/**
 * What {@link ObjectClient.apply} sends: the fields you have an opinion on, and nothing else, with the
 * type metadata and name that say which object it is. Fields of `T` are checked; a client of plain
 * `KubeObject` (a custom resource without a type) takes any field.
 *
 * ## Example
 * ```ts
 * import { objectClient, type ApplyConfiguration } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const scale: ApplyConfiguration<V1Deployment> = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3 } };
 * await objectClient(kc, 'apps/v1/deployments', { namespace: 'default' }).apply(scale, { fieldManager: 'scaler' });
 * ```
 */
export type ApplyConfiguration<T extends KubeObject> = {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: DeepPartial<Omit<NonNullable<T['metadata']>, 'name'>> & { readonly name: string } & ([Exclude<keyof T, keyof KubeObject>] extends [never] ? { readonly [field: string]: unknown } : unknown);
  // A T that declares nothing beyond KubeObject has fields nobody knows, so any is accepted.
} & ([Exclude<keyof T, keyof KubeObject>] extends [never] ? { readonly [field: string]: unknown } : DeepPartial<Omit<T, 'apiVersion' | 'kind' | 'metadata'>>);

/**
 * Reads and writes objects of one resource, in one namespace or in each object's own. Created by {@link objectClient}.
 *
 * Each method but `list` sends one request and resolves the object the server answered (with its new
 * `metadata.resourceVersion`), or rejects with a typed error.
 *
 * ## Example
 * ```ts
 * import { objectClient, type ObjectClient } from 'rxkube';
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const cms: ObjectClient<V1ConfigMap> = objectClient(kc, 'v1/configmaps', { namespace: 'default' });
 * const created = await cms.create({ metadata: { name: 'cfg' } });
 * ```
 */
export interface ObjectClient<T extends KubeObject = KubeObject> {
  /** The resource this client acts on, parsed. */
  readonly resource: ParsedResource;
  /** The namespace, or undefined for cluster scope and for a client that takes each object's own `metadata.namespace`. */
  readonly namespace: string | undefined;
  /** GET one object by name. */
  get(name: string, opts?: CallOptions): Promise<T>;
  /** LIST the objects (of the namespace, or every namespace), page by page, matching the selectors. */
  list(opts?: ListCallOptions): Promise<ListAllResult<T>>;
  /** POST a new object; 409 AlreadyExists when the name is taken. */
  create(obj: T, opts?: WriteOptions): Promise<T>;
  /** PUT the whole object; a `metadata.resourceVersion` makes it conditional (409 Conflict when stale). */
  replace(obj: T, opts?: WriteOptions): Promise<T>;
  /** PATCH one object by name. */
  patch(name: string, body: unknown, opts?: PatchOptions): Promise<T>;
  /**
   * Server-side apply: the fields of `config` become what its field manager owns (creating the object if
   * missing); fields that manager applied before and left out now are removed. Changing a field another
   * manager owns fails with a 409 that `isApplyConflict` recognises, unless `force`.
   */
  apply(config: ApplyConfiguration<T>, opts?: ApplyOptions): Promise<T>;
  /**
   * DELETE one object, by name or given the object (its name, and its namespace when the client has none);
   * answers the object (being deleted, or gone) or the server's Status.
   */
  delete(target: string | T, opts?: DeleteOptions): Promise<T | ApiStatus>;
  /** GET the `/status` subresource: the object, as the status subresource serves it. */
  getStatus(name: string, opts?: CallOptions): Promise<T>;
  /** PUT `/status`: only the status of `obj` is written; a `metadata.resourceVersion` makes it conditional. */
  replaceStatus(obj: T, opts?: WriteOptions): Promise<T>;
  /** PATCH `/status`: only changes to the status are kept. */
  patchStatus(name: string, body: unknown, opts?: PatchOptions): Promise<T>;
  /** Server-side apply of `config.status` through `/status`, with the field ownership of {@link ObjectClient.apply}. */
  applyStatus(config: ApplyConfiguration<T>, opts?: ApplyOptions): Promise<T>;
}
