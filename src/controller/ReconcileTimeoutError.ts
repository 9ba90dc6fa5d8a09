/**
 * A reconcile ran longer than the controller's `reconcileTimeoutMs`
 * (controller-runtime's `ReconciliationTimeout`): its `ctx.signal` aborts
 * with this error, and the reconcile counts as failed at that moment, with
 * this error in the outcome, whether or not it heeds the signal. The key
 * is not handed out again before that reconcile returns, and is listed in
 * `status().stuck` until it does.
 *
 * ## Example
 * ```ts
 * import { controller, ReconcileTimeoutError, type Informer, type Reconciler } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: Informer<V1Deployment>;
 * declare const reconcile: Reconciler<V1Deployment>;
 *
 * controller({ for: deployments, reconcile, reconcileTimeoutMs: 30_000 }).subscribe((o) => {
 *   if (o.type === 'failed' && o.error instanceof ReconcileTimeoutError) console.warn(`${o.key} timed out after ${o.error.timeoutMs} ms`);
 * });
 * ```
 */
export class ReconcileTimeoutError extends Error {
  override readonly name = 'ReconcileTimeoutError';
  /** The key whose reconcile timed out. */
  readonly key: string;
  /** The `reconcileTimeoutMs` it exceeded. */
  readonly timeoutMs: number;

  constructor(controller: string, key: string, timeoutMs: number) {
    super(`${controller}: the reconcile of ${key} ran longer than ${timeoutMs} ms (reconcileTimeoutMs); its signal was aborted`);
    this.key = key;
    this.timeoutMs = timeoutMs;
  }
}
