import { KubeApiError, type StatusDetails } from './KubeApiError.js';

/**
 * The API server answered that the server failed (5xx); retried with backoff.
 *
 * ## Example
 * ```ts
 * import { ServerError } from 'rxkube';
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof ServerError) console.error(err.status, err.serverMessage);
 * });
 * ```
 */
export class ServerError extends KubeApiError {
  override readonly name = 'ServerError';

  constructor(message: string, opts: { status?: number; reason?: string | undefined; serverMessage?: string | undefined; details?: StatusDetails | undefined; cause?: unknown } = {}) {
    super(opts.status ?? 500, message, opts);
  }
}
