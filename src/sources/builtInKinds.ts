import type { BuiltInResource } from './resources.js';

// The kind of each built-in resource, checked complete by the compiler: admission builds paths, default names and
// its review checks from it, and the CLI names what it shows with it.
const KINDS = {
  'v1/pods': 'Pod',
  'v1/services': 'Service',
  'v1/configmaps': 'ConfigMap',
  'v1/secrets': 'Secret',
  'v1/namespaces': 'Namespace',
  'v1/nodes': 'Node',
  'v1/persistentvolumes': 'PersistentVolume',
  'v1/persistentvolumeclaims': 'PersistentVolumeClaim',
  'v1/serviceaccounts': 'ServiceAccount',
  'v1/endpoints': 'Endpoints',
  'v1/events': 'Event',
  'v1/limitranges': 'LimitRange',
  'v1/resourcequotas': 'ResourceQuota',
  'v1/replicationcontrollers': 'ReplicationController',
  'v1/podtemplates': 'PodTemplate',
  'apps/v1/deployments': 'Deployment',
  'apps/v1/replicasets': 'ReplicaSet',
  'apps/v1/statefulsets': 'StatefulSet',
  'apps/v1/daemonsets': 'DaemonSet',
  'apps/v1/controllerrevisions': 'ControllerRevision',
  'batch/v1/jobs': 'Job',
  'batch/v1/cronjobs': 'CronJob',
  'autoscaling/v1/horizontalpodautoscalers': 'HorizontalPodAutoscaler',
  'autoscaling/v2/horizontalpodautoscalers': 'HorizontalPodAutoscaler',
  'policy/v1/poddisruptionbudgets': 'PodDisruptionBudget',
  'coordination.k8s.io/v1/leases': 'Lease',
  'discovery.k8s.io/v1/endpointslices': 'EndpointSlice',
  'events.k8s.io/v1/events': 'Event',
  'networking.k8s.io/v1/ingresses': 'Ingress',
  'networking.k8s.io/v1/networkpolicies': 'NetworkPolicy',
  'networking.k8s.io/v1/ingressclasses': 'IngressClass',
  'networking.k8s.io/v1/servicecidrs': 'ServiceCIDR',
  'networking.k8s.io/v1/ipaddresses': 'IPAddress',
  'rbac.authorization.k8s.io/v1/roles': 'Role',
  'rbac.authorization.k8s.io/v1/rolebindings': 'RoleBinding',
  'rbac.authorization.k8s.io/v1/clusterroles': 'ClusterRole',
  'rbac.authorization.k8s.io/v1/clusterrolebindings': 'ClusterRoleBinding',
  'storage.k8s.io/v1/storageclasses': 'StorageClass',
  'storage.k8s.io/v1/csidrivers': 'CSIDriver',
  'storage.k8s.io/v1/csinodes': 'CSINode',
  'storage.k8s.io/v1/volumeattachments': 'VolumeAttachment',
  'storage.k8s.io/v1/csistoragecapacities': 'CSIStorageCapacity',
  'storage.k8s.io/v1/volumeattributesclasses': 'VolumeAttributesClass',
  'apiextensions.k8s.io/v1/customresourcedefinitions': 'CustomResourceDefinition',
  'apiregistration.k8s.io/v1/apiservices': 'APIService',
  'admissionregistration.k8s.io/v1/validatingwebhookconfigurations': 'ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations': 'MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1/validatingadmissionpolicies': 'ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/v1/validatingadmissionpolicybindings': 'ValidatingAdmissionPolicyBinding',
  'scheduling.k8s.io/v1/priorityclasses': 'PriorityClass',
  'node.k8s.io/v1/runtimeclasses': 'RuntimeClass',
  'certificates.k8s.io/v1/certificatesigningrequests': 'CertificateSigningRequest',
  'flowcontrol.apiserver.k8s.io/v1/flowschemas': 'FlowSchema',
  'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations': 'PriorityLevelConfiguration',
  'resource.k8s.io/v1/resourceclaims': 'ResourceClaim',
  'resource.k8s.io/v1/deviceclasses': 'DeviceClass',
  'resource.k8s.io/v1/resourceslices': 'ResourceSlice',
} as const satisfies Record<BuiltInResource, string>;

/**
 * The kind of a built-in resource (`'apps/v1/deployments'` → `Deployment`), or
 * `undefined` for a name rxkube does not know.
 *
 * @param name `group/version/plural` or `version/plural`.
 * @returns the kind when known.
 */
export function builtInKind(name: string): string | undefined {
  return Object.hasOwn(KINDS, name) ? KINDS[name as BuiltInResource] : undefined;
}
