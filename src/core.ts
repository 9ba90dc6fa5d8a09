// rxkube's building blocks, for those who compose their own informer or source: the reflector
// (list → watch loop), the DeltaFIFO operator, the bare indexed store, the pager and the streaming
// decoders. Everyday use needs only 'rxkube'.
import './engine.js';

// reflector
export {
  reflect,
  VeryShortWatchError,
  InitialEventsIncompleteError,
  WatchStalledError,
  type RetryKind,
  type StallOptions,
  type BackoffOptions,
  type ReflectorEvent,
  type ReflectOptions,
  type ReflectorCounters,
  type ReflectorState,
  type ReflectorStatus,
  type RelistReason,
} from './reflector/index.js';

// DeltaFIFO
export { deltaFifo, type Delta, type DeltaType, type Deltas, type DeltaFifoOptions } from './operators/index.js';

// store
export {
  createIndexer,
  parseLabelSelector,
  labelSelectorFromObject,
  parseFieldSelector,
  escapeFieldValue,
  type Indexer,
  type IndexerOptions,
  type KeyListerGetter,
  type LabelSelector,
  type LabelSelectorObject,
  type LabelRequirement,
  type LabelOperator,
  type FieldSelector,
  type FieldRequirement,
  type FieldOperator,
} from './store/index.js';

// sources
export {
  randomWatchTimeoutSeconds,
  listPages,
  listAll,
  ListDecoder,
  WatchDecoder,
  ListItemStream,
  isTooLargeResourceVersion,
  parseResourceRef,
  resourcePath,
  type ParsedResource,
  type ListPage,
  type PagerOptions,
  type ListAllResult,
  type ListEnvelope,
} from './sources/index.js';

// leader election's lock, for a lock other than a Lease
export { JITTER_FACTOR, type ResourceLock, type LockObservation, type LeaderElectionRecord } from './leaderelection/index.js';
