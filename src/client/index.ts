export { objectClient } from './objectClient.js';
export type {
  ObjectClient,
  ObjectClientOptions,
  CallOptions,
  WriteOptions,
  PatchOptions,
  PatchType,
  ApplyOptions,
  ApplyConfiguration,
  DeepPartial,
  DeleteOptions,
  DeletePreconditions,
  ListCallOptions,
} from './types.js';
export { isApplyConflict, applyConflicts, type ApplyConflict } from './conflicts.js';
export { recordWrite, type RecordWriteOptions } from './recordWrite.js';
export { ownerReference, type OwnerReferenceOptions, type OwnedObject } from './ownerReference.js';
