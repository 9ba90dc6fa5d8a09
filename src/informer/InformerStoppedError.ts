/**
 * The informer was stopped (or failed): it takes no new handler or
 * subscriber. `cause` is the error that ended it, when one did.
 *
 * ## Example
 * ```ts
 * import type { Informer } from 'rxkube';
 * import { InformerStoppedError } from 'rxkube/core';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const pods: Informer<V1Pod>;
 *
 * try {
 *   pods.addHandler({ add: console.log });
 * } catch (err) {
 *   if (err instanceof InformerStoppedError) console.error('too late:', err.cause);
 * }
 * ```
 */
export class InformerStoppedError extends Error {
  override readonly name = 'InformerStoppedError';

  constructor(message = 'the informer has stopped', opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}
