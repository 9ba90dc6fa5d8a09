/**
 * Thrown (or rejected with) by a reconcile to fail for good, as
 * controller-runtime's `reconcile.TerminalError`: retrying cannot help
 * (an invalid spec, a reference the user must fix). The failure is
 * recorded and reported like any other — outcome `failed` with
 * `terminal: true`, counted in `status().terminalErrors` — but the key is
 * not requeued (no backoff, no resync), its failures are forgotten, and
 * the error policy is not asked: it runs again only when its object (or
 * something mapped to it) changes. A `TerminalError` anywhere in an
 * error's `cause` chain counts.
 *
 * ## Example
 * ```ts
 * import { controller, TerminalError, type Informer } from 'rxkube';
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 * declare const configMaps: Informer<V1ConfigMap>;
 * declare function resize(cm: V1ConfigMap, size: number): Promise<void>;
 *
 * controller<V1ConfigMap>({
 *   for: configMaps,
 *   reconcile: async (cm) => {
 *     const size = Number(cm.data?.['size']);
 *     if (!Number.isInteger(size)) throw new TerminalError(`data.size must be an integer, got ${cm.data?.['size']}`);
 *     await resize(cm, size);
 *   },
 * }).subscribe();
 * ```
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';

  /**
   * @param message what is wrong, for the user who must fix it.
   * @param options the error that made it terminal, as `cause`.
   */
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
  }
}

/** Whether `err`, or an error in its `cause` chain, is a {@link TerminalError}. */
export function isTerminal(err: unknown): boolean {
  // A bounded walk: a cause chain that loops must not hang the worker.
  for (let e = err, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) {
    if (e instanceof TerminalError) return true;
  }
  return false;
}
