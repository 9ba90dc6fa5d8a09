import type { InformerEvent } from '../operators/informerEvent.js';

/**
 * A handler threw or its promise rejected; `event` is the one that failed.
 *
 * ## Example
 * ```ts
 * import { HandlerError, type Informer } from 'rxkube';
 * declare const informer: Informer<unknown>;
 *
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof HandlerError) console.error(`handler #${err.handlerId} failed on`, err.event.type, err.cause);
 * });
 * ```
 */
export class HandlerError<T = unknown> extends Error {
  override readonly name = 'HandlerError';
  /** The event whose handling failed. */
  readonly event: InformerEvent<T>;
  /** Id of the registration whose handler failed. */
  readonly handlerId: number;

  constructor(handlerId: number, event: InformerEvent<T>, cause: unknown) {
    super(`handler #${handlerId} failed on ${event.type}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.event = event;
    this.handlerId = handlerId;
  }
}
