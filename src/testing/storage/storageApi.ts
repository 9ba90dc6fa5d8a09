import { jsonText } from '../../store/jsonText.js';
import type { StoredObject } from './storedObject.js';
import type { ResourceType } from './resources.js';
import { inServedVersion } from '../server/servedVersion.js';
import type { NamespaceLifecycle } from './namespaceLifecycle.js';
import { applyPatch } from '../writes/objectHandlers.js';
import type { ResourceName, ResourceRegistry } from './registry.js';
import type { Storage } from './storage.js';
import { describeValue } from '../../options/validate.js';

type AnyObject = Record<string, unknown>;

/**
 * The direct storage methods of a simulator: the REST verbs without HTTP,
 * with the same semantics and the same {@link StatusError}s, for tests that
 * set up or inspect state — except that they write the status of any
 * resource and record no `managedFields`, as a test setting a pod's phase
 * with no kubelet needs. {@link ApiServer} is the class to use.
 */
export class StorageApi {
  // The storage the HTTP side serves, so both see one state.
  readonly #storage: Storage;
  // Resolves the names tests use ('v1/pods') to resources.
  readonly #registry: ResourceRegistry;
  // Deletions go through it so a namespace deletion is the same as over HTTP.
  readonly #namespaces: NamespaceLifecycle;

  /**
   * Used by {@link ApiServer}; not constructed directly.
   * @param storage the simulator's storage.
   * @param registry its resources.
   * @param namespaces its deletion path.
   */
  constructor(storage: Storage, registry: ResourceRegistry, namespaces: NamespaceLifecycle) {
    this.#storage = storage;
    this.#registry = registry;
    this.#namespaces = namespaces;
  }

  /**
   * Creates an object as POST would: assigns uid, resourceVersion,
   * creationTimestamp and generation (and `generateName`).
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * const pod = await server.create('v1/pods', { metadata: { name: 'a', namespace: 'default' }, spec: { nodeName: 'n1' } });
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param obj the object; it is copied, never kept.
   * @returns the stored object (a copy).
   * @throws StatusError 409 AlreadyExists, 422 Invalid, 400 BadRequest.
   */
  async create<T extends object>(resource: ResourceName, obj: T): Promise<T> {
    const type = this.#registry.resolve(resource, 'create');
    return copyOut<T>(this.#storage.create(type, copyIn(obj, 'create'), undefined), type);
  }

  /**
   * Replaces an object as PUT would. A non-empty `metadata.resourceVersion`
   * must be the current one, else 409 Conflict. Without one the update is
   * unconditional, except for leases and custom resources (422 Invalid, as
   * kube-apiserver answers); a missing lease is created.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * import type { V1Pod } from '@kubernetes/client-node';
   * declare const server: ApiServer;
   *
   * const pod = server.get<V1Pod>('v1/pods', 'default', 'a')!;
   * await server.update('v1/pods', { ...pod, metadata: { ...pod.metadata, labels: { app: 'web' } } });
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param obj the new state; it is copied, never kept.
   * @returns the stored object (a copy).
   * @throws StatusError 409 Conflict, 404 NotFound, 422 Invalid.
   */
  async update<T extends object>(resource: ResourceName, obj: T): Promise<T> {
    const type = this.#registry.resolve(resource, 'update');
    return copyOut<T>(this.#storage.update(type, copyIn(obj, 'update'), undefined), type);
  }

  /**
   * Applies a JSON merge patch (RFC 7386) as PATCH with
   * `application/merge-patch+json` would.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * await server.patch('v1/pods', 'default', 'a', { status: { phase: 'Running' } });
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param namespace the namespace (`''` or undefined for cluster-scoped).
   * @param name the object's name.
   * @param patch the merge patch.
   * @returns the stored object (a copy).
   * @throws StatusError 404 NotFound, 409 Conflict when the patch carries a stale resourceVersion.
   */
  async patch<T extends object = Record<string, unknown>>(resource: ResourceName, namespace: string | undefined, name: string, patch: object): Promise<T> {
    const type = this.#registry.resolve(resource, 'patch');
    const stored = applyPatch(this.#storage, type, namespace ?? '', name, 'application/merge-patch+json', copyIn(patch, 'patch'), undefined);
    return copyOut<T>(stored, type);
  }

  /**
   * Deletes an object as DELETE would. An object with finalizers only gets
   * a deletionTimestamp and goes when they are removed. A namespace is
   * marked `Terminating` (deletionTimestamp set, a MODIFIED event); on the
   * next tick the emulated namespace controller deletes everything in it
   * and then the namespace.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * import type { V1Pod } from '@kubernetes/client-node';
   * declare const server: ApiServer;
   *
   * const gone = await server.delete<V1Pod>('v1/pods', 'default', 'a');
   * gone.metadata?.resourceVersion; // the deletion's resourceVersion
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param namespace the namespace (`''` or undefined for cluster-scoped).
   * @param name the object's name.
   * @param preconditions optional uid / resourceVersion the object must have.
   * @returns the deleted object (a copy) stamped with the deletion's resourceVersion.
   * @throws StatusError 404 NotFound, 409 Conflict on a failed precondition.
   */
  async delete<T extends object = Record<string, unknown>>(resource: ResourceName, namespace: string | undefined, name: string, preconditions?: { readonly uid?: string; readonly resourceVersion?: string }): Promise<T> {
    const type = this.#registry.resolve(resource, 'delete');
    return copyOut<T>(this.#namespaces.delete(type, namespace ?? '', name, preconditions), type);
  }

  /**
   * Reads one object.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * const pod = server.get('v1/pods', 'default', 'a');
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param namespace the namespace (`''` or undefined for cluster-scoped).
   * @param name the object's name.
   * @returns a copy of the object, or undefined.
   */
  get<T extends object = Record<string, unknown>>(resource: ResourceName, namespace: string | undefined, name: string): T | undefined {
    const type = this.#registry.resolve(resource, 'get');
    const o = this.#storage.get(type, namespace ?? '', name);
    return o === undefined ? undefined : copyOut<T>(o, type);
  }

  /**
   * Lists the current objects of a resource, in key order.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * import type { V1Pod } from '@kubernetes/client-node';
   * declare const server: ApiServer;
   *
   * const names = server.list<V1Pod>('v1/pods', 'default').map((p) => p.metadata?.name);
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param namespace only this namespace; @default every namespace
   * @returns copies of the objects.
   */
  list<T extends object = Record<string, unknown>>(resource: ResourceName, namespace?: string): T[] {
    const type = this.#registry.resolve(resource, 'list');
    return this.#storage.list(type, namespace).map((o) => copyOut<T>(o, type));
  }

  /**
   * The current global resourceVersion.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * const before = Number(server.resourceVersion());
   * ```
   *
   * @returns the resourceVersion as a string of an increasing integer.
   */
  resourceVersion(): string {
    return String(this.#storage.resourceVersion);
  }

  /**
   * Drops the event history up to `rv` (default: everything). Watches from
   * an older resourceVersion get a 410 ERROR event; continue tokens and
   * Exact lists at or below it get 410 Expired. This is how a resource
   * without a watch cache behaves; a real resource with one keeps serving
   * that history from the cache after etcd compacts, so a test that needs a
   * 410 from the simulator should call this.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * server.compact(); // every continue token issued so far is now expired
   * ```
   *
   * @param rv the resourceVersion to compact to; @default the current one
   * @returns the resourceVersion compacted to.
   */
  compact(rv?: string | number): string {
    const target = rv === undefined ? undefined : Number(rv);
    if (target !== undefined && !(Number.isSafeInteger(target) && target >= 1)) throw new TypeError(`compact: rv must be a positive integer, got ${describeValue(rv)}`);
    return String(this.#storage.compact(target));
  }
}

function copyIn(obj: unknown, method: string): AnyObject {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new TypeError(`${method}: the object must be a plain object, got ${describeValue(obj)}`);
  // A JSON round trip gives the storage its own copy and turns client-node's Date fields into wire strings.
  return JSON.parse(jsonText(obj)) as AnyObject;
}

/** A copy of a stored object, in the version `type` serves. */
function copyOut<T>(o: StoredObject, type: ResourceType): T {
  return JSON.parse(inServedVersion(o.json, type)) as T;
}
