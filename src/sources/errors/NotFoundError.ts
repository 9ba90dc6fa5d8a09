import { KubeApiError, type StatusDetails } from './KubeApiError.js';

/**
 * The API server answered that the resource or its API group does not exist (404).
 *
 * ## Example
 * ```ts
 * import { NotFoundError } from 'rxkube';
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof NotFoundError) console.error(err.status, err.serverMessage);
 * });
 * ```
 */
export class NotFoundError extends KubeApiError {
  override readonly name = 'NotFoundError';

  constructor(message: string, opts: { status?: number; reason?: string | undefined; serverMessage?: string | undefined; details?: StatusDetails | undefined; cause?: unknown } = {}) {
    super(opts.status ?? 404, message, opts);
  }
}
