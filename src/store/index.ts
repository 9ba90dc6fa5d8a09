export type { KubeObject, ObjectMeta, OwnerReference, KeyFunc, IndexFunc, Indexers, KeyListerGetter } from './types.js';
export { DeletedFinalStateUnknown, unwrapTombstone } from './DeletedFinalStateUnknown.js';
export { metaNamespaceKey, deletionHandlingMetaNamespaceKey, splitMetaNamespaceKey } from './keys.js';
export { parseLabelSelector, type LabelSelector, type LabelRequirement, type LabelOperator } from './labelSelector.js';
export { parseFieldSelector, escapeFieldValue, type FieldSelector, type FieldRequirement, type FieldOperator } from './fieldSelector.js';
export { SelectorParseError } from './errors/SelectorParseError.js';
