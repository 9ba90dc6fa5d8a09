/**
 * A reconcile waited `readYourWritesTimeoutMs` for its caches to show this
 * process's own writes (RYW-2) and they still did not: the reconcile runs
 * from the cache as it is, and this error is reported (rate-limited) on the
 * controller's error channel. A cache that never catches up is usually a
 * watch that is stalled or failing; the informer's `status$` says why.
 *
 * ## Example
 * ```ts
 * import { controller, ReadYourWritesTimeoutError, type Informer, type Reconciler } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: Informer<V1Deployment>;
 * declare const reconcile: Reconciler<V1Deployment>;
 *
 * controller({
 *   for: deployments,
 *   reconcile,
 *   onError: (err) => {
 *     if (err instanceof ReadYourWritesTimeoutError) console.warn(`${err.cache} is behind ${err.key}'s write at ${err.resourceVersion ?? 'its deletion'}`);
 *   },
 * }).subscribe();
 * ```
 */
export class ReadYourWritesTimeoutError extends Error {
  override readonly name = 'ReadYourWritesTimeoutError';
  /** The key of the object whose write the cache did not show (the first of them). */
  readonly key: string;
  /** The resourceVersion the write got; `undefined` for a deletion. */
  readonly resourceVersion: string | undefined;
  /** The cache waited for, by its source's name or its resource. */
  readonly cache: string;
  /** The `readYourWritesTimeoutMs` it waited. */
  readonly timeoutMs: number;

  /**
   * @param message the whole message, naming the controller, the cache and the writes.
   * @param fields what the message says, for code to read.
   */
  constructor(message: string, fields: { key: string; resourceVersion: string | undefined; cache: string; timeoutMs: number }) {
    super(message);
    this.key = fields.key;
    this.resourceVersion = fields.resourceVersion;
    this.cache = fields.cache;
    this.timeoutMs = fields.timeoutMs;
  }
}
