/**
 * The informer was stopped before what was awaited could happen (e.g. `whenSynced`).
 *
 * ## Example
 * ```ts
 * import { InformerStoppedError } from 'rxkube';
 * await pods.whenSynced().catch((err) => {
 *   if (err instanceof InformerStoppedError) return; // shutting down
 *   throw err;
 * });
 * ```
 */
export class InformerStoppedError extends Error {
  override readonly name = 'InformerStoppedError';

  constructor(message = 'informer stopped before it synced') {
    super(message);
  }
}
