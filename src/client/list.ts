import { kubeSource } from '../sources/kubeSource.js';
import { listAll, type ListAllResult } from '../sources/pager.js';
import type { CustomResourceRef } from '../sources/resources.js';
import type { KubeObject } from '../store/types.js';
import { timerDelay } from '../options/timerDelay.js';
import { describeValue } from '../options/validate.js';
import { checkSignal } from './checks.js';
import type { ClientContext } from './context.js';
import type { ListCallOptions } from './types.js';

/**
 * Lists the objects of a client's resource and namespace (internal): a
 * `kubeSource` with the call's selectors, read whole by the pager, so the
 * selectors are checked before any request exactly as an informer's are,
 * the pages share one connection, and an expired continue token restarts
 * the list as client-go's pager does (docs/semantics.md W-7).
 */
export function listObjects<T extends KubeObject>(ctx: ClientContext, o: ListCallOptions | undefined): Promise<ListAllResult<T>> {
  const signal = checkSignal(o);
  for (const key of ['labelSelector', 'fieldSelector'] as const) {
    const v = o?.[key];
    if (v !== undefined && typeof v !== 'string') throw new TypeError(`${key}: expected a string, got ${describeValue(v)}`);
  }
  const source = kubeSource<T>(ctx.kc, ctx.resource as CustomResourceRef, {
    ...(ctx.namespace !== undefined && { namespace: ctx.namespace }),
    ...(o?.labelSelector !== undefined && { labelSelector: o.labelSelector }),
    ...(o?.fieldSelector !== undefined && { fieldSelector: o.fieldSelector }),
    ...(o?.pageSize !== undefined && { pageSize: o.pageSize }),
    // A timer cannot wait longer than 2^31 - 1 ms (HI-31).
    idleTimeoutMs: Math.max(1, timerDelay(Math.ceil(ctx.timeoutMs))),
  });
  // The pager needs a signal of its own; the caller's aborts it.
  return listAll(source, {}, signal ?? new AbortController().signal, o?.pageSize === undefined ? {} : { pageSize: o.pageSize });
}
