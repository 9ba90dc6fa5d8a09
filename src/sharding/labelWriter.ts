import type { KubeConfig } from '@kubernetes/client-node';
import { isConflict, isNotFound } from '../errors/api/guards.js';
import { objectClient } from '../client/objectClient.js';
import type { ObjectClient } from '../client/types.js';
import type { CustomResourceRef } from '../sources/resources.js';
import type { ResourceRef } from '../sources/types.js';
import type { KubeObject } from '../store/types.js';

/** Writes shard labels: merge patches conditional on the resourceVersion each decision was made on. */
export class LabelWriter {
  readonly #kc: KubeConfig;
  readonly #resources: readonly ResourceRef[];
  readonly #timeoutMs: number;
  /** Label writers by resource (index into the resources) and namespace, made on first use. */
  readonly #clients = new Map<string, ObjectClient<KubeObject>>();

  constructor(kc: KubeConfig, resources: readonly ResourceRef[], timeoutMs: number) {
    this.#kc = kc;
    this.#resources = resources;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Sets (or, with `null`, removes) labels on `obj`, as it was when decided on.
   *
   * @param resource index into the resources of the object's resource
   * @returns whether it was written, else whether the object changed or went since
   */
  async patch(obj: KubeObject, set: Record<string, string | null>, signal: AbortSignal, resource = 0): Promise<'written' | 'changed' | 'gone'> {
    const md = obj.metadata!;
    try {
      await this.#clientFor(resource, md.namespace).patch(md.name!, { metadata: { resourceVersion: md.resourceVersion, labels: set } }, { type: 'merge', signal });
      return 'written';
    } catch (err) {
      if (isConflict(err)) return 'changed';
      if (isNotFound(err)) return 'gone';
      throw err;
    }
  }

  #clientFor(resource: number, ns: string | undefined): ObjectClient<KubeObject> {
    const k = `${resource}/${ns ?? ''}`;
    let client = this.#clients.get(k);
    if (client === undefined) {
      const ref = this.#resources[resource] as CustomResourceRef;
      client = objectClient<KubeObject>(this.#kc, ref, { ...(ns !== undefined && ns !== '' && { namespace: ns }), timeoutMs: this.#timeoutMs });
      this.#clients.set(k, client);
    }
    return client;
  }
}
