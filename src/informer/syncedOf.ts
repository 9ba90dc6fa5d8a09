import { distinctUntilChanged, map, type Observable } from 'rxjs';

/** Anything whose status says whether its cache is complete: an informer, a cluster's view, a controller source. */
export interface SyncStatusSource {
  /** The current status, then each change. */
  readonly status$: Observable<{ readonly synced: boolean }>;
}

/**
 * Whether `source`'s cache is complete, now and at each change: the one
 * reading of sync state from a status stream (S-2), for the code that waits
 * on it (controllers, the manager, the sharder).
 */
export function syncedOf(source: SyncStatusSource): Observable<boolean> {
  return source.status$.pipe(
    map((s) => s.synced),
    distinctUntilChanged(),
  );
}
