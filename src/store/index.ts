export type {
  KubeObject,
  ObjectMeta,
  OwnerReference,
  KeyFunc,
  IndexFunc,
  Indexers,
  KeyListerGetter,
  StoreListOptions,
  ReadonlyIndexer,
  Indexer,
} from './types.js';
export { DeletedFinalStateUnknown, unwrapTombstone } from './DeletedFinalStateUnknown.js';
export { metaNamespaceKey, deletionHandlingMetaNamespaceKey, splitMetaNamespaceKey } from './keys.js';
export { createIndexer, type IndexerOptions } from './indexer.js';
export { byNamespace, namespaceIndex, byLabel, byOwnerUid, byControllerUid, byField } from './indexFuncs.js';
export {
  parseLabelSelector,
  type LabelSelector,
  type LabelSelectorObject,
} from './labelSelector.js';
export { parseFieldSelector, type FieldSelector } from './fieldSelector.js';
export { SelectorParseError } from './errors/SelectorParseError.js';
export { KeyError } from './errors/KeyError.js';
export { IndexError } from './errors/IndexError.js';
export { IndexNotFoundError } from './errors/IndexNotFoundError.js';
export { IndexConflictError } from './errors/IndexConflictError.js';
