import { KubeApiError, type StatusDetails } from './KubeApiError.js';

/**
 * The API server answered that the requested resourceVersion is too old or a continue token expired (410 Gone / Expired); the reflector relists.
 *
 * ## Example
 * ```ts
 * import { ExpiredError } from 'rxkube';
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof ExpiredError) console.error(err.status, err.serverMessage);
 * });
 * ```
 */
export class ExpiredError extends KubeApiError {
  override readonly name = 'ExpiredError';

  constructor(message: string, opts: { status?: number; reason?: string | undefined; serverMessage?: string | undefined; details?: StatusDetails | undefined; cause?: unknown } = {}) {
    super(opts.status ?? 410, message, opts);
  }
}
