export { informer } from './informer.js';
export type { FifoMode, Informer, InformerOptions, InformerStatus, HandlerStatus, InformerStore, WhenSyncedOptions } from './types.js';
export { InformerFactory, type InformerFactoryOptions, type InformerForOptions } from './InformerFactory.js';
export type { EventHandler, HandlerOptions, Registration } from './registration.js';
export type { BufferPolicy } from './handlerBuffer.js';
export type { InformerEvent } from '../operators/informerEvent.js';
export { BufferOverflowError } from './BufferOverflowError.js';
export { HandlerError } from './HandlerError.js';
export { CacheSyncError, type CacheSyncFailure } from './CacheSyncError.js';
