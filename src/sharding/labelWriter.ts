import type { KubeConfig } from '@kubernetes/client-node';
import { isConflict, isNotFound } from '../errors/api/guards.js';
import { objectClient } from '../client/objectClient.js';
import type { ObjectClient } from '../client/types.js';
import type { CustomResourceRef } from '../sources/resources.js';
import type { ResourceRef } from '../sources/types.js';
import type { KubeObject } from '../store/types.js';

/** Sets (or, with `null`, removes) labels on an object of `resources[resource]`, as it was when decided on. */
export type LabelWrite = (obj: KubeObject, set: Record<string, string | null>, signal: AbortSignal, resource?: number) => Promise<'written' | 'changed' | 'gone'>;

/**
 * Writes shard labels: merge patches conditional on the resourceVersion each decision was made on, answering
 * whether it was written, else whether the object changed or went since. A client per resource and namespace
 * is made on first use.
 */
export function labelWriter(kc: KubeConfig, resources: readonly ResourceRef[], timeoutMs: number): LabelWrite {
  const clients = new Map<string, ObjectClient<KubeObject>>();
  return async (obj, set, signal, resource = 0) => {
    const md = obj.metadata!;
    const ns = md.namespace ?? '';
    let client = clients.get(`${resource}/${ns}`);
    if (client === undefined) {
      client = objectClient<KubeObject>(kc, resources[resource] as CustomResourceRef, { ...(ns !== '' && { namespace: ns }), timeoutMs });
      clients.set(`${resource}/${ns}`, client);
    }
    try {
      await client.patch(md.name!, { metadata: { resourceVersion: md.resourceVersion, labels: set } }, { type: 'merge', signal });
      return 'written';
    } catch (err) {
      if (isConflict(err)) return 'changed';
      if (isNotFound(err)) return 'gone';
      throw err;
    }
  };
}
