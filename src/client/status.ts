import type { KubeObject } from '../store/types.js';
import { applyRequest } from './apply.js';
import { checkObject, patchContentType } from './checks.js';
import type { ClientContext } from './objectClient.js';
import type { ObjectClient } from './types.js';

/**
 * The status subresource methods of an object client (internal). A resource
 * with a status subresource keeps its status out of writes to the object and
 * everything but the status out of writes to `/status`, which bump the
 * resourceVersion and not the generation (docs/semantics.md W-6).
 */
export function statusMethods<T extends KubeObject>(ctx: ClientContext): Pick<ObjectClient<T>, 'getStatus' | 'replaceStatus' | 'patchStatus' | 'applyStatus'> {
  return {
    getStatus: (name, o) => ctx.read<T>(ctx.itemUrl(name, 'status'), ctx.describe('get status of', name), o),
    replaceStatus: (obj, o) => {
      checkObject(obj, 'replaceStatus', true);
      const name = obj.metadata?.name as string;
      return ctx.write<T>({ verb: 'PUT', url: ctx.itemUrl(name, 'status'), what: ctx.describe('replace status of', name), body: obj, opts: o });
    },
    patchStatus: (name, body, o) => {
      const contentType = patchContentType(o?.type, body);
      return ctx.write<T>({ verb: 'PATCH', url: ctx.itemUrl(name, 'status'), what: ctx.describe('patch status of', name), body, contentType, opts: o });
    },
    applyStatus: (config, o) => applyRequest<T>(ctx, config, o, 'status'),
  };
}
