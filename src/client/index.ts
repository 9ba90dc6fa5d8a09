export { objectClient } from './objectClient.js';
export type {
  ObjectClient,
  ObjectClientOptions,
  CallOptions,
  WriteOptions,
  PatchOptions,
  ApplyOptions,
  ApplyConfiguration,
  DeepPartial,
  DeleteOptions,
  ListCallOptions,
} from './types.js';
export { isApplyConflict, applyConflicts } from './conflicts.js';
export { recordWrite, type RecordWriteOptions } from './recordWrite.js';
export { ownerReference, type OwnerReferenceOptions } from './ownerReference.js';
