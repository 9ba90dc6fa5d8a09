export {
  informer,
  type Informer,
  type InformerOptions,
  type InformerStatus,
  type HandlerStatus,
  type InformerStore,
  type WhenSyncedOptions,
} from './informer.js';
export type { InformerMetrics } from './metrics.js';
export { InformerFactory, type InformerFactoryOptions, type InformerForOptions } from './InformerFactory.js';
export type { EventHandler, HandlerOptions, Registration } from './registration.js';
export type { BufferPolicy } from './handlerBuffer.js';
export type { InformerEvent } from './types.js';
export { BufferOverflowError } from './BufferOverflowError.js';
export { HandlerError } from './HandlerError.js';
export { InformerStoppedError } from './InformerStoppedError.js';
export { CacheSyncError, type CacheSyncFailure } from './CacheSyncError.js';
