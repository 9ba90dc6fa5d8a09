import { Subject, type Observable } from 'rxjs';
import type { Indexer } from '../store/indexer.js';
import type { ReflectorEvent } from '../reflector/types.js';

/**
 * How far an informer's cache has read the server (S-40): after each
 * reflector event has been applied, the store's `lastSyncResourceVersion()`
 * is set to the resourceVersion every cached object is at least as new as,
 * and `resourceVersion$` tells whoever waits for it.
 *
 * The store alone would follow the last object written (I-15), which is
 * wrong twice for a reader that compares it with a write: a bookmark or a
 * watch event whose object the FIFO dropped would not move it, and the
 * pages of a relist would move it to their objects' resourceVersions,
 * older than the list and newer than the keys not yet relisted. Here a
 * watch event, a bookmark and a complete list move it to their
 * resourceVersion, and a relist page leaves it where the last complete
 * event put it, which every key still is at least as new as.
 */
export class CacheProgress {
  readonly #store: Indexer<unknown>;
  // Told after each applied event; only called when someone listens (a read-your-writes wait).
  readonly #changes = new Subject<string>();
  readonly resourceVersion$: Observable<string> = this.#changes.asObservable();
  // The resourceVersion of the last complete event (watch event, bookmark, whole list) of this lifetime.
  #applied = '';

  constructor(store: Indexer<unknown>) {
    this.#store = store;
  }

  /** After `event` was applied to the store. */
  applied(event: ReflectorEvent<unknown>): void {
    if (event.type === 'Resync') return;
    if (event.type !== 'ReplacePage') this.#applied = event.resourceVersion;
    if (this.#store.lastSyncResourceVersion() !== this.#applied) this.#store.bookmark(this.#applied);
    if (this.#changes.observed) this.#changes.next(this.#applied);
  }

  /** A new lifetime starts from an empty store. */
  reset(): void {
    this.#applied = '';
  }

  /** The informer stopped for good. */
  complete(): void {
    this.#changes.complete();
  }
}
