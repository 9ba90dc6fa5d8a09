import type { ObjectClient } from '../client/types.js';
import { explainFrozenWrite } from '../errors/frozenObject.js';
import type { KubeObject } from '../store/types.js';
import type { ReconcileAction, ReconcileContext } from './types.js';
import { describeValue } from '../options/validate.js';
import { printable } from '../errors/printable.js';

/** Which step of {@link finalizer} failed. */
export type FinalizerPhase = 'add' | 'apply' | 'cleanup' | 'remove';

/**
 * A step of {@link finalizer} failed: adding or removing the finalizer (for
 * instance 409 Conflict because the object changed since it was read), or
 * the user's `apply` or `cleanup`. The original error is the `cause`; the
 * controller's error policy decides the retry as for any reconcile failure.
 *
 * ## Example
 * ```ts
 * import { isConflict } from 'rxkube';
 * import { FinalizerError } from 'rxkube/core';
 *
 * const errorPolicy = (err: Error) =>
 *   err instanceof FinalizerError && isConflict(err.cause) ? { requeueAfter: 0 } : 'backoff';
 * ```
 */
export class FinalizerError extends Error {
  override readonly name = 'FinalizerError';
  /** The step that failed. */
  readonly phase: FinalizerPhase;
  /** The finalizer's name. */
  readonly finalizer: string;

  constructor(phase: FinalizerPhase, finalizer: string, object: string, cause: unknown) {
    const step = { add: 'adding it to the object', apply: 'the apply handler', cleanup: 'the cleanup handler', remove: 'removing it from the object' }[phase];
    super(`finalizer ${JSON.stringify(printable(finalizer))} of ${object}: ${step} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.phase = phase;
    this.finalizer = finalizer;
  }
}

/**
 * What {@link finalizer} runs: `apply` while the object lives (with the
 * finalizer in place), `cleanup` once it is being deleted (before the
 * finalizer is removed). Each is given the object and the context passed to
 * `finalizer` — the reconcile's own `ctx`, with its `signal`, `key`,
 * `retries` and `store` — and returns what a reconcile returns.
 *
 * ## Example
 * ```ts
 * import type { FinalizerHandlers } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare function ensureConfigMap(d: V1Deployment, signal: AbortSignal): Promise<void>;
 * declare function deleteConfigMap(d: V1Deployment, signal: AbortSignal): Promise<void>;
 *
 * const handlers: FinalizerHandlers<V1Deployment> = {
 *   apply: async (d, ctx) => ensureConfigMap(d, ctx.signal),
 *   cleanup: async (d, ctx) => deleteConfigMap(d, ctx.signal),
 * };
 * ```
 */
export interface FinalizerHandlers<T, C extends FinalizerOptions = ReconcileContext<T>> {
  /** Brings the world in line with a live object that carries the finalizer. */
  apply(obj: T, ctx: C): ReconcileAction | Promise<ReconcileAction>;
  /** Undoes what `apply` made, for an object being deleted; the finalizer is removed when it returns. Must be idempotent. */
  cleanup(obj: T, ctx: C): ReconcileAction | Promise<ReconcileAction>;
}

/**
 * What {@link finalizer} is given beside the handlers: the reconcile's
 * context (a `ReconcileContext` is one), or just a signal. Its `signal`
 * aborts the finalizer's own writes; the whole object is handed to the
 * handlers.
 *
 * ## Example
 * ```ts
 * import { finalizer, objectClient, type FinalizerHandlers, type ReconcileContext } from 'rxkube';
 * import type { KubeConfig, V1Deployment } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * declare const handlers: FinalizerHandlers<V1Deployment>;
 *
 * async function reconcile(obj: V1Deployment, ctx: ReconcileContext<V1Deployment>) {
 *   const clientFor = (namespace?: string) => objectClient(kc, 'apps/v1/deployments', { namespace });
 *   return finalizer(clientFor, 'example.com/cleanup', obj, handlers, ctx);
 * }
 * ```
 */
export interface FinalizerOptions {
  /** Aborts the patch requests. @default undefined */
  readonly signal?: AbortSignal;
}

/** The client of the object's resource: one client, or one per namespace. */
export type FinalizerClient<T extends KubeObject> = ObjectClient<T> | ((namespace: string | undefined) => ObjectClient<T>);

function finalizersOf(obj: KubeObject): readonly string[] {
  const list = (obj.metadata as { finalizers?: unknown } | undefined)?.finalizers;
  return Array.isArray(list) ? (list as string[]) : [];
}

function clientScope(namespace: string | undefined): string {
  return namespace === undefined ? 'the client has no namespace' : `the client has namespace ${JSON.stringify(printable(namespace))}`;
}

/** A 404 from the API server; read by its status so a client from another copy of the library is understood too. */
function isNotFound(err: unknown): boolean {
  return err instanceof Error && (err as { status?: unknown }).status === 404;
}

/** The object's `namespace/name`, escaped: it came from the server. */
function describe(obj: KubeObject): string {
  const m = obj.metadata;
  return printable((m?.namespace ? `${m.namespace}/${m.name ?? '?'}` : (m?.name ?? '?')).slice(0, 400));
}

/**
 * Runs a reconcile under a finalizer, as kube-rs's `finalizer()`: the
 * object cannot disappear before your cleanup ran.
 *
 * - Not being deleted, no finalizer yet: adds it and returns (the write
 *   triggers the next reconcile, which runs `apply`).
 * - Not being deleted, finalizer present: runs `apply(obj, ctx)`.
 * - Being deleted (`deletionTimestamp` set), finalizer present: runs
 *   `cleanup(obj, ctx)`, then removes the finalizer, after which the server
 *   completes the deletion.
 *
 * `ctx` is what you pass last: the reconcile's own context, so the
 * handlers get its `signal` (and `key`, `retries`, `store`) without closing
 * over it; its signal also aborts the finalizer's writes.
 * - Being deleted without the finalizer: does nothing.
 *
 * Both writes are merge patches carrying the object's
 * `metadata.resourceVersion`, so if the object changed since it was read
 * the server refuses with 409 Conflict and nothing is lost: the failure goes
 * to the controller's error policy and the next reconcile sees the new
 * object. A 404 on either write means the object is gone already (the
 * cache was behind) and counts as done. `cleanup` may run more than once,
 * for instance on a cached copy that still shows the finalizer just
 * removed; make it idempotent (a 404 on what it deletes is success).
 *
 * ## Example
 * ```ts
 * import { controller, finalizer, objectClient, type Informer } from 'rxkube';
 * import type { KubeConfig, V1Deployment } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * declare const deployments: Informer<V1Deployment>;
 * declare function deleteInfo(d: V1Deployment): Promise<void>;
 *
 * declare function ensureInfo(d: V1Deployment, signal: AbortSignal): Promise<void>;
 *
 * const clientFor = (namespace?: string) => objectClient(kc, 'apps/v1/deployments', { namespace });
 * controller({
 *   for: deployments,
 *   reconcile: (d, ctx) =>
 *     finalizer(clientFor, 'example.com/info', d, {
 *       apply: (d, ctx) => ensureInfo(d, ctx.signal),
 *       cleanup: (d) => deleteInfo(d),
 *     }, ctx),
 * }).subscribe();
 * ```
 *
 * @param client the object's resource client, or a function giving one per namespace.
 * @param name the finalizer, a qualified name such as `example.com/cleanup`.
 * @param obj the object, as read from the informer's store.
 * @param handlers `apply` and `cleanup`.
 * @param ctx the reconcile's context (or `{ signal }`): handed to the handlers, and its signal aborts the writes.
 * @returns what `apply` or `cleanup` returned, or undefined after adding the finalizer or when there was nothing to do.
 * @throws {TypeError} when `name`, `obj` or `handlers` is invalid (synchronously).
 * @throws {FinalizerError} (as a rejection) when a step failed.
 */
export function finalizer<T extends KubeObject, C extends FinalizerOptions = ReconcileContext<T>>(
  client: FinalizerClient<T>,
  name: string,
  obj: T,
  handlers: FinalizerHandlers<T, C>,
  ctx: C = {} as C,
): Promise<ReconcileAction> {
  if (typeof name !== 'string' || name === '' || /\s/.test(name)) throw new TypeError(`finalizer: name must be a finalizer name such as "example.com/cleanup", got ${describeValue(name)}`);
  if (typeof obj !== 'object' || obj === null || typeof obj.metadata?.name !== 'string') throw new TypeError('finalizer: obj must be an object with metadata.name');
  if (typeof handlers !== 'object' || handlers === null || typeof handlers.apply !== 'function' || typeof handlers.cleanup !== 'function') {
    throw new TypeError('finalizer: handlers must be { apply(obj, ctx), cleanup(obj, ctx) }');
  }
  if (typeof client !== 'function' && (typeof client !== 'object' || client === null || typeof client.patch !== 'function')) {
    throw new TypeError('finalizer: client must be an ObjectClient or a function of the namespace giving one');
  }
  if (ctx === null || typeof ctx !== 'object') throw new TypeError(`finalizer: ctx must be the reconcile's context or { signal }, got ${describeValue(ctx)}`);
  const signal = ctx.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError(`finalizer: ctx.signal must be an AbortSignal, got ${describeValue(signal)}`);
  return run(client, name, obj, handlers, ctx);
}

async function run<T extends KubeObject, C extends FinalizerOptions>(
  client: FinalizerClient<T>,
  name: string,
  obj: T,
  handlers: FinalizerHandlers<T, C>,
  ctx: C,
): Promise<ReconcileAction> {
  const signal = ctx.signal;
  const meta = obj.metadata ?? {};
  const objName = meta.name as string;
  const current = finalizersOf(obj);
  const has = current.includes(name);
  const deleting = meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
  const step = async <R>(phase: FinalizerPhase, fn: () => R | Promise<R>): Promise<R> => {
    try {
      return await fn();
    } catch (err) {
      throw new FinalizerError(phase, name, describe(obj), explainFrozenWrite(err));
    }
  };
  // A 404 means the object is gone already (the cache was behind): there is no finalizer left to add or remove.
  const patch = (phase: FinalizerPhase, finalizers: readonly string[] | null): Promise<unknown> =>
    step(phase, async () => {
      const rv = meta.resourceVersion;
      if (typeof rv !== 'string' || rv === '') throw new TypeError('the object has no metadata.resourceVersion to guard the write with');
      const c = typeof client === 'function' ? client(meta.namespace || undefined) : client;
      const objectNamespace = meta.namespace || undefined;
      if (c.namespace !== objectNamespace) throw new TypeError(`${clientScope(c.namespace)}, the object ${objectNamespace === undefined ? 'none' : `namespace ${JSON.stringify(printable(objectNamespace))}`}: pass a client of the object's namespace, or a function (namespace) => objectClient(kc, resource, { namespace })`);
      try {
        return await c.patch(objName, { metadata: { resourceVersion: rv, finalizers } }, { type: 'merge', ...(signal !== undefined && { signal }) });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });

  if (!deleting) {
    if (!has) {
      await patch('add', [...current, name]);
      return undefined;
    }
    return step('apply', () => handlers.apply(obj, ctx));
  }
  if (!has) return undefined;
  const action = await step('cleanup', () => handlers.cleanup(obj, ctx));
  const rest = current.filter((f) => f !== name);
  await patch('remove', rest.length === 0 ? null : rest);
  return action;
}
