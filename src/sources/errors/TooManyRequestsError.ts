import { KubeApiError, type StatusDetails } from './KubeApiError.js';

/**
 * The API server asked the client to slow down (429), possibly with `Retry-After`.
 *
 * ## Example
 * ```ts
 * import { TooManyRequestsError } from 'rxkube';
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof TooManyRequestsError) console.warn(`throttled; retrying in ${err.retryAfterSeconds ?? '?'} s`);
 * });
 * ```
 */
export class TooManyRequestsError extends KubeApiError {
  override readonly name = 'TooManyRequestsError';
  /** Seconds the server asked to wait, from `Retry-After` or the Status details. */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, opts: { retryAfterSeconds?: number | undefined; reason?: string | undefined; serverMessage?: string | undefined; details?: StatusDetails | undefined; cause?: unknown } = {}) {
    super(429, message, opts);
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
}
