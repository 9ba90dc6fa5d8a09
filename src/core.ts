// rxkube's building blocks and detail types, for those who compose their own informer or source, tune
// an option beyond the defaults, or name a type that 'rxkube' leaves to inference: the reflector
// (list → watch loop), the DeltaFIFO operator, the bare indexed store and selectors, the pager and the
// streaming decoders, every rate limiter, the sharding pieces, and the option, status and metric types
// of the everyday functions. Everyday use needs only 'rxkube'.
import './nodeVersion.js';

// informer: options, status and metrics detail
export {
  type InformerStore,
  type HandlerStatus,
  type WhenSyncedOptions,
  type CacheSyncFailure,
  type InformerFactoryOptions,
  type InformerForOptions,
  type BufferPolicy,
} from './informer/index.js';

// reflector; its errors arrive on an informer's errors$ as notices: the informer retries on its own (E-1)
export {
  reflect,
  VeryShortWatchError,
  InitialEventsIncompleteError,
  WatchStalledError,
  WatchDeadlineExceededError,
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

// DeltaFIFO and the transform hook
export { deltaFifo, TransformError, type Delta, type Deltas, type DeltaFifoOptions } from './operators/index.js';
export { orderedFifo, type OrderedFifoOptions, type OrderedFifoItem, type ReplacedAll, type SyncAll } from './operators/index.js';

// operators: option and detail types
export { type OwnerKeysOptions, type OwnerJoin } from './operators/index.js';

// store
export {
  createIndexer,
  deletionHandlingMetaNamespaceKey,
  namespaceIndex,
  parseLabelSelector,
  parseFieldSelector,
  SelectorParseError,
  KeyError,
  IndexError,
  IndexNotFoundError,
  IndexConflictError,
  type Indexer,
  type IndexerOptions,
  type KeyFunc,
  type KeyListerGetter,
  type StoreListOptions,
  type ObjectMeta,
  type OwnerReference,
  type LabelSelector,
  type LabelSelectorObject,
  type FieldSelector,
} from './store/index.js';

// sources
export {
  listPages,
  listAll,
  ListDecoder,
  WatchDecoder,
  isTooLargeResourceVersion,
  type KubeSourceOptions,
  type BuiltInResources,
  type CustomResourceRef,
  type TypedResource,
  type ListOptions,
  type ListResponse,
  type ObjectList,
  type SourceIdentity,
  type WatchOptions,
  type CachedLookup,
  type ParsedResource,
  type PagerOptions,
  type ListAllResult,
  type ListEnvelope,
} from './sources/index.js';

// work queues: options, results, metrics, and every rate limiter
export {
  itemExponentialFailureRateLimiter,
  itemFastSlowRateLimiter,
  bucketRateLimiter,
  maxOfRateLimiter,
  withMaxWaitRateLimiter,
  defaultItemBasedRateLimiter,
  type WorkQueueAddOptions,
  type WorkQueueGetOptions,
  type WorkQueueItemsOptions,
  type WorkQueueProcessOptions,
  type WorkOutcome,
  type WorkQueueMetrics,
  type DurationHistogram,
  type ItemExponentialFailureRateLimiterOptions,
  type ItemFastSlowRateLimiterOptions,
  type BucketRateLimiterOptions,
  type DefaultControllerRateLimiterOptions,
} from './workqueue/index.js';

// controllers: sources, outcomes, error policy, status, metrics, finalizer detail
export {
  FinalizerError,
  type ControllerSource,
  type ControllerStatus,
  type ErrorAction,
  type ErrorPolicy,
  type OwnsSource,
  type ForSource,
  type ReconcileAction,
  type WatchesSource,
  type FinalizerClient,
  type FinalizerOptions,
  type FinalizerPhase,
} from './controller/index.js';

// writing objects: call options and apply detail
export {
  type RecordWriteOptions,
  type ObjectClientOptions,
  type CallOptions,
  type WriteOptions,
  type PatchOptions,
  type DeepPartial,
  type DeleteOptions,
  type ListCallOptions,
  type OwnerReferenceOptions,
} from './client/index.js';

// recording Events: options and detail
export { type EventRecorderOptions, type EventDetails } from './events/index.js';

// transport options
export { type TransportOptions } from './transport/index.js';

// leader election: the Lease lock's options, and the lock contract for a lock other than a Lease
export {
  type Lease,
  type LeaseLockOptions,
  type ResourceLock,
  type LockObservation,
  type LeaderElectionRecord,
} from './leaderelection/index.js';

// custom resources: the options of a definition, the types it is made of, and the CRD's parts
export type {
  CustomResourceOptions,
  MultiVersionOptions,
  ServedVersionOptions,
  PrinterColumn,
  Subresources,
  SchemaLike,
  SchemaOutput,
  CheckedSchema,
  JsonSchemaObject,
  TypedJsonSchema,
  VersionObjects,
  StorageVersion,
  CrdOptions,
  CrdArguments,
  ConversionOptions,
} from './crd/index.js';
// Tells this copy of rxkube's definitions from look-alikes (tooling that loads users' modules).
export { isCustomResource } from './crd/index.js';

// the runner: options and events
export {
  type ManagerLeaderElection,
  type ManagerMetrics,
  type ManagerServerLimits,
  type RunManagerOptions,
  type LoadKubeConfigOptions,
  // serving certificates read from a directory (--webhook-cert-dir), for a webhook server of one's own
  certDirPairs,
  type CertDirOptions,
  type ManagerMetricsSecure,
  type WebhookServerMetrics,
  // the runner's certificates: generated for webhooks and tests, and read back
  generateCa,
  issueServing,
  selfSigned,
  describePair,
  CertificateError,
  type TlsPair,
  type IssuedPair,
  type GenerateCaOptions,
  type ServingOptions,
  type PairDescription,
  CertificateProvisionError,
  type WebhookCertificates,
} from './manager/index.js';

// sharding: the sharder, its hash ring, labels and membership, for a layout shardedController does not cover
export {
  sharder,
  hashRing,
  type HashRing,
  type HashRingOptions,
  shardLabels,
  ownerRingKey,
  type ShardEvent,
  type ShardedOwns,
  type SharderOptions,
  type ShardingEvent,
  type ShardLabels,
  type ShardMembers,
  type ObservedShardLease,
} from './sharding/index.js';

// many clusters: keys, cluster events and status, options and per-cluster detail
export {
  ClusterError,
  type Cluster,
  type ClusterEvent,
  type ClusterDeleteReason,
  type ClusterStatus,
  type ClusterInformer,
  type MultiClusterInformerOptions,
  type MultiClusterStatus,
  type MultiClusterStore,
  type MultiClusterControllerOptions,
  type ClusterSource,
  type ClusterReconciler,
  type ClusterReconcileContext,
  type KubeconfigClustersOptions,
  type SecretClustersOptions,
} from './multicluster/index.js';

// error reporting: sending an error to the default reporter (E-1), and the stderr reporter it starts with
export { reportError, createStderrReporter, type ErrorSink, type StderrReporterOptions } from './errors/reportError.js';
export { CallbackError } from './errors/CallbackError.js';
export { MalformedDocumentError } from './errors/MalformedDocumentError.js';
export { printable, type PrintableOptions } from './errors/printable.js';

// admission webhooks: the guard that finds them in a module, the error a failing handler reports, detail types
export {
  isWebhook,
  AdmissionWebhookError,
  type OperationContexts,
  type AdmissionContextBase,
  type ParsedWebhookOptions,
  type WebhookClientConfig,
  type ValidatingHandler,
  type MutatingHandler,
  type OperationsOf,
  type AdmissionResource,
  type WebhookTarget,
  type AllowOptions,
  type DenyOptions,
  type AdmissionOperation,
  type AdmissionResponse,
  type AdmissionStatus,
  type UserInfo,
  type GroupVersionKind,
  type GroupVersionResource,
} from './admission/index.js';
// conversion webhooks: ConversionReviews answered with a definition's converters (attached as admission.conversion)
export { conversionWebhook, type ConversionWebhook, type ConversionWebhookOptions } from './admission/conversion.js';
