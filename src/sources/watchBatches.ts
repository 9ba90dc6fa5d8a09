import type { WatchEvent } from './types.js';

/**
 * The method under which a watch iterable can also hand over its events a
 * chunk at a time (internal). The reflector reads a watch through it when it
 * is there, so the events that arrived together cost one asynchronous step
 * instead of one each; any other `AsyncIterable<WatchEvent>` is read event by
 * event as before.
 */
export const WATCH_BATCHES: unique symbol = Symbol('rxkube.watchBatches');

/** A watch iterable with the batch view: each step yields the (non-empty) events decoded from one chunk of the body. */
export interface BatchedWatch<T> extends AsyncIterable<WatchEvent<T>> {
  [WATCH_BATCHES](): AsyncIterator<readonly WatchEvent<T>[], void, undefined>;
}

/** Whether `iterable` offers the batch view. */
export function isBatchedWatch<T>(iterable: AsyncIterable<WatchEvent<T>>): iterable is BatchedWatch<T> {
  return typeof (iterable as Partial<BatchedWatch<T>>)[WATCH_BATCHES] === 'function';
}
