export type { Cluster, ClusterProvider, ClusterEvent, ClusterDeleteReason } from './types.js';
export { clusterKey, splitClusterKey } from './clusterKey.js';
export { ClusterError } from './ClusterError.js';
export type { ClusterStatus } from './clusterMember.js';
export type { MultiClusterStore } from './multiClusterStore.js';
export {
  multiClusterInformer,
  type MultiClusterInformer,
  type MultiClusterInformerOptions,
  type MultiClusterStatus,
  type ClusterInformer,
} from './multiClusterInformer.js';
export {
  multiClusterController,
  type MultiClusterControllerOptions,
  type ClusterReconcileContext,
  type ClusterReconciler,
} from './multiClusterController.js';
export type { ClusterSource } from './fleetSources.js';
export { kubeconfigClusters, type KubeconfigClustersOptions } from './kubeconfigClusters.js';
export { secretClusters, type SecretClustersOptions } from './secretClusters.js';
