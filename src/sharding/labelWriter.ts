import { isConflict, isNotFound } from '../errors/api/guards.js';
import { objectClient } from '../client/objectClient.js';
import type { ObjectClient } from '../client/types.js';
import type { CustomResourceRef } from '../sources/resources.js';
import type { KubeObject } from '../store/types.js';
import type { ResolvedSharderOptions } from './sharderOptions.js';

/** Writes the sharder's labels: merge patches conditional on the resourceVersion each decision was made on. */
export class LabelWriter<T extends KubeObject> {
  readonly #c: ResolvedSharderOptions<T>;
  /** Label writers by resource (index into owns, or -1 for the sharded resource) and namespace, made on first use. */
  readonly #clients = new Map<string, ObjectClient<KubeObject>>();

  constructor(c: ResolvedSharderOptions<T>) {
    this.#c = c;
  }

  /**
   * Sets (or, with `null`, removes) labels on `obj`, as it was when decided on.
   *
   * @param owned index into `owns` of the object's resource, -1 for the sharded resource
   * @returns false when the object changed or went since (its new version is judged when the informer delivers it)
   */
  async patch(obj: KubeObject, set: Record<string, string | null>, signal: AbortSignal, owned = -1): Promise<boolean> {
    const md = obj.metadata!;
    try {
      await this.#clientFor(owned, md.namespace).patch(md.name!, { metadata: { resourceVersion: md.resourceVersion, labels: set } }, { type: 'merge', signal });
      return true;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return false;
      throw err;
    }
  }

  #clientFor(owned: number, ns: string | undefined): ObjectClient<KubeObject> {
    const c = this.#c;
    const k = `${owned}/${ns ?? ''}`;
    let client = this.#clients.get(k);
    if (client === undefined) {
      const resource = owned < 0 ? c.resource : c.owns[owned]!.resource;
      client = objectClient<KubeObject>(c.kc, resource as CustomResourceRef, { ...(ns !== undefined && ns !== '' && { namespace: ns }), timeoutMs: c.requestTimeoutMs });
      this.#clients.set(k, client);
    }
    return client;
  }
}
