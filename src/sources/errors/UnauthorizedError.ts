import { KubeApiError, type StatusDetails } from './KubeApiError.js';

/**
 * The API server answered that the credentials were rejected (401); retried with backoff since credentials can be rotated.
 *
 * ## Example
 * ```ts
 * import { UnauthorizedError } from 'rxkube';
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof UnauthorizedError) console.error(err.status, err.serverMessage);
 * });
 * ```
 */
export class UnauthorizedError extends KubeApiError {
  override readonly name = 'UnauthorizedError';

  constructor(message: string, opts: { status?: number; reason?: string | undefined; serverMessage?: string | undefined; details?: StatusDetails | undefined; cause?: unknown } = {}) {
    super(opts.status ?? 401, message, opts);
  }
}
