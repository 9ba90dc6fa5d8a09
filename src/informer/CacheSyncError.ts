/**
 * `waitForCacheSync` gave up: some informers had not synced (or had failed).
 *
 * ## Example
 * ```ts
 * import { CacheSyncError } from 'rxkube';
 * try {
 *   await factory.waitForCacheSync(AbortSignal.timeout(60_000));
 * } catch (err) {
 *   if (err instanceof CacheSyncError) console.error('not synced:', err.unsynced);
 * }
 * ```
 */
export class CacheSyncError extends Error {
  override readonly name = 'CacheSyncError';
  /** Informer ids that synced. */
  readonly synced: readonly string[];
  /** Informer ids that did not. */
  readonly unsynced: readonly string[];

  constructor(synced: readonly string[], unsynced: readonly string[], cause?: unknown) {
    super(`failed to sync all caches: ${[...unsynced].sort().join(', ')}`, cause === undefined ? undefined : { cause });
    this.synced = synced;
    this.unsynced = unsynced;
  }
}
