/** Why a wait for a cache to sync gave up. */
export type CacheSyncFailure = 'timeout' | 'aborted' | 'stopped' | 'failed' | 'not-running';

/**
 * A cache did not sync: an informer's or a factory's `whenSynced` gave up. `cause`
 * holds the last error the informer met (a 404 `KubeApiError` for a resource
 * that does not exist, a `ConnectionError` for a server that is down, …), so
 * the rejection says why, not only that it took too long.
 *
 * ## Example
 * ```ts
 * import { CacheSyncError, type Informer } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const pods: Informer<V1Pod>;
 *
 * try {
 *   await pods.whenSynced({ timeout: 30_000 });
 * } catch (err) {
 *   if (err instanceof CacheSyncError) console.error(err.message, 'because', err.cause);
 * }
 * ```
 */
export class CacheSyncError extends Error {
  override readonly name = 'CacheSyncError';
  /** Informer names that synced. */
  readonly synced: readonly string[];
  /** Informer names that did not. */
  readonly unsynced: readonly string[];
  /** Why the wait ended. */
  readonly reason: CacheSyncFailure;

  constructor(synced: readonly string[], unsynced: readonly string[], cause?: unknown, reason: CacheSyncFailure = 'failed', detail?: string) {
    const why = cause instanceof Error ? `; last error: ${cause.name}: ${cause.message}` : '';
    super(`${[...unsynced].sort().join(', ')} did not sync${detail === undefined ? '' : ` (${detail})`}${why}`, cause === undefined ? undefined : { cause });
    this.synced = synced;
    this.unsynced = unsynced;
    this.reason = reason;
  }
}
