import type { InformerEvent } from '../operators/informerEvent.js';

/**
 * An InformerEvent on its way to handlers. `key` is the store key; `isSync`
 * marks an update that carries no change (a resync, or a relist that found
 * the same resourceVersion), which only handlers that asked for resync get.
 */
export interface Notification<T> {
  readonly event: InformerEvent<T>;
  readonly key: string;
  readonly isSync: boolean;
}
