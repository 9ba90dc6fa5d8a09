// The everyday surface of rxkube, read in one place: informers and their factory, the source they read,
// the cache, the operators controllers use, work queues, and the errors a user catches.
// Building blocks (reflect, deltaFifo, the pager and decoders, createIndexer) are in 'rxkube/core';
// the API-server simulator is 'rxkube/testing'.
import './engine.js';

// informer
export {
  informer,
  InformerFactory,
  BufferOverflowError,
  HandlerError,
  InformerStoppedError,
  CacheSyncError,
  type Informer,
  type InformerOptions,
  type InformerStatus,
  type InformerMetrics,
  type InformerStore,
  type HandlerStatus,
  type WhenSyncedOptions,
  type CacheSyncFailure,
  type InformerFactoryOptions,
  type InformerForOptions,
  type EventHandler,
  type HandlerOptions,
  type Registration,
  type BufferPolicy,
  type InformerEvent,
} from './informer/index.js';

// sources
export {
  kubeSource,
  KubeApiError,
  isNotFound,
  isConflict,
  isAlreadyExists,
  isExpired,
  isTooManyRequests,
  isUnauthorized,
  isForbidden,
  isInvalid,
  isServerError,
  DecodeError,
  ConnectionError,
  type KubeSource,
  type KubeSourceOptions,
  type BuiltInResources,
  type BuiltInResource,
  type CustomResourceRef,
  type ObjectOf,
  type ListerWatcher,
  type PartialObjectMetadata,
  type ListOptions,
  type ObjectList,
  type ResourceRef,
  type SourceIdentity,
  type WatchEvent,
  type WatchEventType,
  type WatchOptions,
  type StatusDetails,
} from './sources/index.js';

// store
export {
  metaNamespaceKey,
  deletionHandlingMetaNamespaceKey,
  splitMetaNamespaceKey,
  byNamespace,
  namespaceIndex,
  byLabel,
  byOwnerUid,
  byControllerUid,
  byField,
  DeletedFinalStateUnknown,
  unwrapTombstone,
  SelectorParseError,
  KeyError,
  IndexError,
  IndexNotFoundError,
  IndexConflictError,
  type KubeObject,
  type ObjectMeta,
  type OwnerReference,
  type KeyFunc,
  type IndexFunc,
  type Indexers,
  type StoreListOptions,
  type ReadonlyIndexer,
} from './store/index.js';

// operators for controllers
export {
  appliedObjects,
  touchedObjects,
  predicateFilter,
  generationChanged,
  labelsChanged,
  annotationsChanged,
  resourceVersionChanged,
  ownerKeys,
  joinOwner,
  debounceByKey,
  TransformError,
  WatchStalledError,
  type RetryKind,
  type Predicate,
  type PredicateValue,
  type OwnerKeysOptions,
  type OwnerJoin,
  type OwnerSource,
  type ReflectorStatus,
  type ReflectorState,
  type ReflectorCounters,
  type RelistReason,
} from './operators/index.js';

// work queues
export {
  workQueue,
  LOW_PRIORITY,
  itemExponentialFailureRateLimiter,
  itemFastSlowRateLimiter,
  bucketRateLimiter,
  maxOfRateLimiter,
  withMaxWaitRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  type WorkQueue,
  type WorkQueueOptions,
  type WorkQueueAddOptions,
  type WorkQueueGetOptions,
  type WorkQueueGetResult,
  type WorkQueueItemsOptions,
  type WorkQueueProcessOptions,
  type WorkQueueWorker,
  type WorkOutcome,
  type WorkQueueMetrics,
  type WorkQueueHistogram,
  type DurationHistogram,
  type RateLimiter,
  type ItemExponentialFailureRateLimiterOptions,
  type ItemFastSlowRateLimiterOptions,
  type BucketRateLimiterOptions,
  type DefaultControllerRateLimiterOptions,
} from './workqueue/index.js';

// controllers
export {
  controller,
  finalizer,
  FinalizerError,
  TerminalError,
  ReconcileTimeoutError,
  type Controller,
  type ControllerOptions,
  type ControllerSource,
  type ControllerStatus,
  type ControllerMetrics,
  type ReconcileResult,
  type ErrorAction,
  type ErrorPolicy,
  type OwnsSource,
  type ReconcileAction,
  type ReconcileContext,
  type ReconcileOutcome,
  type Reconciler,
  type WatchesSource,
  type FinalizerClient,
  type FinalizerHandlers,
  type FinalizerOptions,
  type FinalizerPhase,
} from './controller/index.js';

// writing objects
export {
  objectClient,
  recordWrite,
  type RecordWriteOptions,
  isApplyConflict,
  applyConflicts,
  type ApplyConflict,
  type ObjectClient,
  type ObjectClientOptions,
  type CallOptions,
  type WriteOptions,
  type PatchOptions,
  type PatchType,
  type ApplyOptions,
  type ApplyConfiguration,
  type DeepPartial,
  type DeleteOptions,
  type DeletePreconditions,
  type ListCallOptions,
} from './client/index.js';

// recording Events
export { recorder, type EventRecorder, type EventRecorderOptions, type EventRecorderStatus, type EventDetails } from './events/index.js';

// how requests reach the cluster: one connection pool per cluster and TLS material, HTTP/2, compression
export { withTransport, type TransportOptions } from './transport/index.js';

// leader election
export { leaderElection, leaseLock, type LeaderElectionOptions, type Leadership, type Lease, type LeaseLockOptions } from './leaderelection/index.js';

// running controllers in a pod: probes, metrics, leader election, in-cluster config, SIGTERM
export {
  manager,
  runManager,
  loadKubeConfig,
  type ManagerOptions,
  type ManagerEvent,
  type ManagerLeaderElection,
  type ManagerMetrics,
  type RunManagerOptions,
  type LoadKubeConfigOptions,
} from './manager/index.js';

// sharded controllers
export {
  shardedController,
  sharder,
  hashRing,
  shardLabels,
  ownerRingKey,
  liveShards,
  shardMembers,
  type ShardedControllerOptions,
  type ShardEvent,
  type ShardedOwns,
  type SharderOptions,
  type SharderSource,
  type ShardingEvent,
  type HashRing,
  type HashRingOptions,
  type ShardLabels,
  type LiveShardsOptions,
  type ShardMembers,
  type ShardMembersOptions,
  type ObservedShardLease,
} from './sharding/index.js';

// many clusters
export {
  multiClusterInformer,
  multiClusterController,
  kubeconfigClusters,
  secretClusters,
  clusterKey,
  splitClusterKey,
  ClusterError,
  type Cluster,
  type ClusterProvider,
  type ClusterEvent,
  type ClusterDeleteReason,
  type ClusterState,
  type ClusterStatus,
  type ClusterInformer,
  type MultiClusterInformer,
  type MultiClusterInformerOptions,
  type MultiClusterStatus,
  type MultiClusterStore,
  type MultiClusterController,
  type MultiClusterControllerOptions,
  type ClusterSource,
  type ClusterReconciler,
  type ClusterReconcileContext,
  type ClusterReconcileOutcome,
  type ClusterControllerMetrics,
  type ClusterControllerStatus,
  type KubeconfigClustersOptions,
  type SecretClustersOptions,
} from './multicluster/index.js';

// errors nobody else took
export { reportError, setErrorReporter, createStderrReporter, type ErrorSink, type StderrReporterOptions } from './errors/reportError.js';
export { CallbackError } from './errors/CallbackError.js';
