import { KubeApiError, type StatusDetails } from './KubeApiError.js';

/**
 * The API server answered that the identity may not perform this request (403); retried with backoff unless made terminal.
 *
 * ## Example
 * ```ts
 * import { ForbiddenError } from 'rxkube';
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof ForbiddenError) console.error(err.status, err.serverMessage);
 * });
 * ```
 */
export class ForbiddenError extends KubeApiError {
  override readonly name = 'ForbiddenError';

  constructor(message: string, opts: { status?: number; reason?: string | undefined; serverMessage?: string | undefined; details?: StatusDetails | undefined; cause?: unknown } = {}) {
    super(opts.status ?? 403, message, opts);
  }
}
