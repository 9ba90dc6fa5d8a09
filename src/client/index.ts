export {
  objectClient,
  type ObjectClient,
  type ObjectClientOptions,
  type CallOptions,
  type PatchOptions,
  type PatchType,
  type DeleteOptions,
  type DeletePreconditions,
} from './objectClient.js';
export { isConflict, isAlreadyExists } from './conflicts.js';
export { recordWrite, type RecordWriteOptions } from './recordWrite.js';
