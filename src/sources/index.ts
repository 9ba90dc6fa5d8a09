export type { CachedLookup } from './cachedParts.js';
export type { ListerWatcher, ListOptions, ListResponse, ObjectList, PartialObjectMetadata, ResourceRef, SourceIdentity, WatchBatch, WatchEvent, WatchOptions } from './types.js';
export { kubeSource, type KubeSource, type KubeSourceOptions } from './kubeSource.js';
export { listPages, listAll, type PagerOptions, type ListAllResult } from './pager.js';
export { ListDecoder, type ListEnvelope } from './listDecoder.js';
export { WatchDecoder } from './watchDecoder.js';
export { errorFromStatus, isTooLargeResourceVersion, connectionErrorFrom } from './httpErrors.js';
export { parseResourceRef, resourcePath, type ParsedResource } from './resourceRef.js';
export type { BuiltInResources, BuiltInResource, CustomResourceRef, ObjectOf, TypedResource } from './resources.js';
