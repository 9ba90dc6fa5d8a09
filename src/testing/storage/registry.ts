import { toResourceType, type ResourceDefinition, type ResourceType } from './resources.js';
import type { Storage } from './storage.js';

/** A resource as tests name it: `'v1/pods'`, `'apps/v1/deployments'`, or the parts. */
export type ResourceName = string | { readonly group?: string; readonly version: string; readonly plural: string };

/** The resources a simulator serves, found by id (`v1/pods`) or by the parts of a URL. */
export class ResourceRegistry {
  // By id (`apps/v1/deployments`), which names the URL's group, version and plural too.
  readonly #byId = new Map<string, ResourceType>();
  // Every resource gets its table in the storage as it is registered.
  readonly #storage: Storage;

  constructor(storage: Storage) {
    this.#storage = storage;
  }

  /** Every registered resource, in registration order. */
  values(): IterableIterator<ResourceType> {
    return this.#byId.values();
  }

  byId(id: string): ResourceType | undefined {
    return this.#byId.get(id);
  }

  byPath(group: string, version: string, plural: string): ResourceType | undefined {
    // A '/' decoded from %2F in a part would join into another resource's id (`/api/apps%2Fv1/deployments`): 404, as kube-apiserver.
    if (group.includes('/') || version.includes('/') || plural.includes('/')) return undefined;
    return this.#byId.get(group === '' ? `${version}/${plural}` : `${group}/${version}/${plural}`);
  }

  add(type: ResourceType): void {
    this.#byId.set(type.id, type);
    this.#storage.addResource(type.storage ?? type);
  }

  /** Stops serving a resource (its CRD was deleted); its storage table stays, empty, for history. */
  remove(id: string): void {
    this.#byId.delete(id);
  }

  /** Registers a definition; the same one twice is harmless, a different one under the same name throws. */
  register(def: ResourceDefinition): string {
    const type = toResourceType(def);
    const existing = this.#byId.get(type.id);
    if (existing === undefined) this.add(type);
    else if (existing.kind !== type.kind || existing.namespaced !== type.namespaced) {
      throw new TypeError(`registerResource: ${type.id} is already registered as ${existing.kind} (namespaced: ${existing.namespaced})`);
    }
    return type.id;
  }

  /** The resource a direct method names, or a TypeError naming the method. */
  resolve(resource: ResourceName, method: string): ResourceType {
    const id =
      typeof resource === 'string'
        ? resource
        : resource !== null && typeof resource === 'object'
          ? [resource.group, resource.version, resource.plural].filter((p) => p !== undefined && p !== '').join('/')
          : undefined;
    const type = id === undefined ? undefined : this.#byId.get(id);
    if (type === undefined) throw new TypeError(`${method}: unknown resource ${JSON.stringify(resource)}; register it with registerResource()`);
    return type;
  }
}
