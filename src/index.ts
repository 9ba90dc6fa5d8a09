// The everyday surface of rxkube, read in one place: what typical controller code imports.
// Informers and their factory, the source they read, the cache's keys and index functions, the
// operators controllers use, work queues, controllers, writing objects, leader election, the runner,
// sharding, many clusters, and the errors a user tells apart. Option and detail types, the reflector,
// DeltaFIFO, the bare store, the pager and decoders, the other rate limiters and the sharding pieces
// are in 'rxkube/core'; the API-server simulator is 'rxkube/testing'.
import './nodeVersion.js';

// informer
export {
  informer,
  InformerFactory,
  BufferOverflowError,
  HandlerError,
  CacheSyncError,
  type Informer,
  type InformerOptions,
  type FifoMode,
  type InformerStatus,
  type EventHandler,
  type HandlerOptions,
  type Registration,
  type InformerEvent,
} from './informer/index.js';

// sources
export {
  kubeSource,
  type KubeSource,
  type BuiltInResource,
  type ObjectOf,
  type ListerWatcher,
  type PartialObjectMetadata,
  type ResourceRef,
  type WatchBatch,
  type WatchEvent,
} from './sources/index.js';

// the API's errors: what a request can fail with, and the guards that tell them apart
export {
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
  ResourceNotServedError,
  type ApiStatus,
} from './errors/api/index.js';

// store: keys, index functions, tombstones
export {
  metaNamespaceKey,
  splitMetaNamespaceKey,
  byNamespace,
  byLabel,
  byOwnerUid,
  byControllerUid,
  byField,
  DeletedFinalStateUnknown,
  unwrapTombstone,
  type KubeObject,
  type IndexFunc,
  type Indexers,
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
  type Predicate,
} from './operators/index.js';

// work queues
export { workQueue, LOW_PRIORITY, defaultControllerRateLimiter, type WorkQueue, type WorkQueueOptions, type RateLimiter } from './workqueue/index.js';

// controllers
export {
  controller,
  finalizer,
  TerminalError,
  ReadYourWritesTimeoutError,
  ReconcileTimeoutError,
  type Controller,
  type ControllerOptions,
  type ReconcileResult,
  type ReconcileContext,
  type ReconcileOutcome,
  type Reconciler,
  type FinalizerHandlers,
} from './controller/index.js';

// writing objects
export {
  objectClient,
  ownerReference,
  recordWrite,
  isApplyConflict,
  applyConflicts,
  type ObjectClient,
  type ApplyOptions,
  type ApplyConfiguration,
} from './client/index.js';

// recording Events
export { recorder, type EventRecorder } from './events/index.js';

// how requests reach the cluster: one connection pool per cluster and TLS material, HTTP/2, compression
export { withTransport } from './transport/index.js';

// leader election
export { leaderElection, leaseLock, type LeaderElectionOptions, type Leadership } from './leaderelection/index.js';

// custom resources: one schema gives the type, the CRD, validation, typed sources and clients
export {
  customResource,
  jsonSchema,
  conditions,
  setCondition,
  CustomResourceSchemaError,
  type Condition,
  type CustomResource,
  type CustomObject,
  type CustomResourceDefinition,
} from './crd/index.js';

// admission webhooks: validating and mutating handlers typed for their resource, and the configurations that register them
export {
  admission,
  webhookManifests,
  type WebhookManifestsOptions,
  type Webhook,
  type WebhookAnswer,
  type AdmissionVerdict,
  type AdmissionContext,
  type AdmissionRequest,
  type AdmissionReview,
  type ValidatingWebhook,
  type MutatingWebhook,
  type WebhookOptions,
  type MutatingWebhookOptions,
} from './admission/index.js';

// running controllers in a pod: probes, metrics, leader election, in-cluster config, SIGTERM
export { manager, runManager, loadKubeConfig, type ManagerOptions, type ManagerEvent } from './manager/index.js';

// sharded controllers
export { shardedController, type ShardedControllerOptions } from './sharding/index.js';

// many clusters
export {
  multiClusterInformer,
  multiClusterController,
  kubeconfigClusters,
  secretClusters,
  clusterKey,
  splitClusterKey,
  type ClusterProvider,
  type MultiClusterInformer,
} from './multicluster/index.js';

// where an error goes when the thing that raised it has no listener for it (E-1)
export { setErrorReporter } from './errors/reportError.js';
