import type { KubeObject } from '../store/types.js';
import { applyRequest } from './apply.js';
import { checkObject, patchContentType } from './checks.js';
import type { ClientContext } from './context.js';
import type { ObjectClient } from './types.js';

/**
 * The status subresource methods of an object client (internal). A resource
 * with a status subresource keeps its status out of writes to the object and
 * everything but the status out of writes to `/status`, which bump the
 * resourceVersion and not the generation (docs/semantics.md W-6).
 */
export function statusMethods<T extends KubeObject>(ctx: ClientContext): Pick<ObjectClient<T>, 'getStatus' | 'replaceStatus' | 'patchStatus' | 'applyStatus'> {
  return {
    getStatus: (name, o) => {
      const ns = ctx.namespaceByName('get status of', name);
      return ctx.read<T>(ctx.itemUrl(name, ns, 'status'), ctx.describe('get status of', name, ns), o);
    },
    replaceStatus: (obj, o) => {
      checkObject(obj, 'replaceStatus', true);
      const name = obj.metadata?.name as string;
      const ns = ctx.namespaceOf('replace status of', name, obj.metadata?.namespace);
      return ctx.write<T>({ verb: 'PUT', url: ctx.itemUrl(name, ns, 'status'), what: ctx.describe('replace status of', name, ns), body: obj, opts: o, namespace: ns });
    },
    patchStatus: (name, body, o) => {
      const ns = ctx.namespaceByName('patch status of', name);
      const contentType = patchContentType(o?.type, body);
      return ctx.write<T>({ verb: 'PATCH', url: ctx.itemUrl(name, ns, 'status'), what: ctx.describe('patch status of', name, ns), body, contentType, opts: o, namespace: ns });
    },
    applyStatus: (config, o) => applyRequest<T>(ctx, config, o, 'status'),
  };
}
