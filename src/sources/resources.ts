import type {
  CoreV1Event,
  EventsV1Event,
  V1APIService,
  V1CSIDriver,
  V1CSINode,
  V1CSIStorageCapacity,
  V1CertificateSigningRequest,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1ControllerRevision,
  V1CronJob,
  V1CustomResourceDefinition,
  V1DaemonSet,
  V1Deployment,
  V1DeviceClass,
  V1EndpointSlice,
  V1Endpoints,
  V1FlowSchema,
  V1HorizontalPodAutoscaler,
  V1IPAddress,
  V1Ingress,
  V1IngressClass,
  V1Job,
  V1Lease,
  V1LimitRange,
  V1MutatingWebhookConfiguration,
  V1Namespace,
  V1NetworkPolicy,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodDisruptionBudget,
  V1PodTemplate,
  V1PriorityClass,
  V1PriorityLevelConfiguration,
  V1ReplicaSet,
  V1ReplicationController,
  ResourceV1ResourceClaim,
  V1ResourceQuota,
  V1ResourceSlice,
  V1Role,
  V1RoleBinding,
  V1RuntimeClass,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1ServiceCIDR,
  V1StatefulSet,
  V1StorageClass,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
  V1ValidatingWebhookConfiguration,
  V1VolumeAttachment,
  V1VolumeAttributesClass,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import type { KubeObject } from '../store/types.js';

/**
 * Every built-in resource rxkube knows the object type of, by the name
 * `kubeSource` and `InformerFactory.informerFor` take, so that
 * `kubeSource(kc, 'v1/pods')` is a source of `V1Pod` with no type argument
 * and a mismatch such as `informer<V1Pod>(kubeSource(kc, 'apps/v1/deployments'))`
 * does not compile. Models are client-node's.
 */
export interface BuiltInResources {
  'v1/pods': V1Pod;
  'v1/services': V1Service;
  'v1/configmaps': V1ConfigMap;
  'v1/secrets': V1Secret;
  'v1/namespaces': V1Namespace;
  'v1/nodes': V1Node;
  'v1/persistentvolumes': V1PersistentVolume;
  'v1/persistentvolumeclaims': V1PersistentVolumeClaim;
  'v1/serviceaccounts': V1ServiceAccount;
  'v1/endpoints': V1Endpoints;
  'v1/events': CoreV1Event;
  'v1/limitranges': V1LimitRange;
  'v1/resourcequotas': V1ResourceQuota;
  'v1/replicationcontrollers': V1ReplicationController;
  'v1/podtemplates': V1PodTemplate;
  'apps/v1/deployments': V1Deployment;
  'apps/v1/replicasets': V1ReplicaSet;
  'apps/v1/statefulsets': V1StatefulSet;
  'apps/v1/daemonsets': V1DaemonSet;
  'apps/v1/controllerrevisions': V1ControllerRevision;
  'batch/v1/jobs': V1Job;
  'batch/v1/cronjobs': V1CronJob;
  'autoscaling/v1/horizontalpodautoscalers': V1HorizontalPodAutoscaler;
  'autoscaling/v2/horizontalpodautoscalers': V2HorizontalPodAutoscaler;
  'policy/v1/poddisruptionbudgets': V1PodDisruptionBudget;
  'coordination.k8s.io/v1/leases': V1Lease;
  'discovery.k8s.io/v1/endpointslices': V1EndpointSlice;
  'events.k8s.io/v1/events': EventsV1Event;
  'networking.k8s.io/v1/ingresses': V1Ingress;
  'networking.k8s.io/v1/networkpolicies': V1NetworkPolicy;
  'networking.k8s.io/v1/ingressclasses': V1IngressClass;
  'networking.k8s.io/v1/servicecidrs': V1ServiceCIDR;
  'networking.k8s.io/v1/ipaddresses': V1IPAddress;
  'rbac.authorization.k8s.io/v1/roles': V1Role;
  'rbac.authorization.k8s.io/v1/rolebindings': V1RoleBinding;
  'rbac.authorization.k8s.io/v1/clusterroles': V1ClusterRole;
  'rbac.authorization.k8s.io/v1/clusterrolebindings': V1ClusterRoleBinding;
  'storage.k8s.io/v1/storageclasses': V1StorageClass;
  'storage.k8s.io/v1/csidrivers': V1CSIDriver;
  'storage.k8s.io/v1/csinodes': V1CSINode;
  'storage.k8s.io/v1/volumeattachments': V1VolumeAttachment;
  'storage.k8s.io/v1/csistoragecapacities': V1CSIStorageCapacity;
  'storage.k8s.io/v1/volumeattributesclasses': V1VolumeAttributesClass;
  'apiextensions.k8s.io/v1/customresourcedefinitions': V1CustomResourceDefinition;
  'apiregistration.k8s.io/v1/apiservices': V1APIService;
  'admissionregistration.k8s.io/v1/validatingwebhookconfigurations': V1ValidatingWebhookConfiguration;
  'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations': V1MutatingWebhookConfiguration;
  'admissionregistration.k8s.io/v1/validatingadmissionpolicies': V1ValidatingAdmissionPolicy;
  'admissionregistration.k8s.io/v1/validatingadmissionpolicybindings': V1ValidatingAdmissionPolicyBinding;
  'scheduling.k8s.io/v1/priorityclasses': V1PriorityClass;
  'node.k8s.io/v1/runtimeclasses': V1RuntimeClass;
  'certificates.k8s.io/v1/certificatesigningrequests': V1CertificateSigningRequest;
  'flowcontrol.apiserver.k8s.io/v1/flowschemas': V1FlowSchema;
  'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations': V1PriorityLevelConfiguration;
  'resource.k8s.io/v1/resourceclaims': ResourceV1ResourceClaim;
  'resource.k8s.io/v1/deviceclasses': V1DeviceClass;
  'resource.k8s.io/v1/resourceslices': V1ResourceSlice;
}

/** The name of a built-in resource: `'v1/pods'`, `'apps/v1/deployments'`, … */
export type BuiltInResource = keyof BuiltInResources;

/**
 * A custom (or aggregated) resource: `'group/version/plural'` whose group has
 * a dot, as every CRD group must (`'example.com/v1/widgets'`), or the parts as
 * an object. Its object type is the type argument you give.
 */
export type CustomResourceRef =
  | `${string}.${string}/${string}/${string}`
  | { readonly group?: string; readonly version: string; readonly plural: string; readonly namespaced?: boolean };

/**
 * A resource that carries the type of its objects, as a custom resource
 * definition (`customResource(…)`) does: `kubeSource(kc, Website)` is a
 * `KubeSource<Website>` with no type argument. At run time it is read as the
 * object form of {@link CustomResourceRef}.
 */
export interface TypedResource<T extends KubeObject> {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** The objects' type, for `typeof X.Type`; reading it at run time throws. */
  readonly Type: T;
}

/** The object type of a resource: the model of a built-in one, a definition's own type, `KubeObject` otherwise. */
export type ObjectOf<R> = R extends BuiltInResource ? BuiltInResources[R] : R extends TypedResource<infer T> ? T : KubeObject;

/** Built-in resources without a namespace: a `namespace` option on them is a mistake named at once. */
const CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  'v1/namespaces',
  'v1/nodes',
  'v1/persistentvolumes',
  'networking.k8s.io/v1/ingressclasses',
  'networking.k8s.io/v1/servicecidrs',
  'networking.k8s.io/v1/ipaddresses',
  'rbac.authorization.k8s.io/v1/clusterroles',
  'rbac.authorization.k8s.io/v1/clusterrolebindings',
  'storage.k8s.io/v1/storageclasses',
  'storage.k8s.io/v1/csidrivers',
  'storage.k8s.io/v1/csinodes',
  'storage.k8s.io/v1/volumeattachments',
  'storage.k8s.io/v1/volumeattributesclasses',
  'apiextensions.k8s.io/v1/customresourcedefinitions',
  'apiregistration.k8s.io/v1/apiservices',
  'admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/v1/validatingadmissionpolicies',
  'admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
  'scheduling.k8s.io/v1/priorityclasses',
  'node.k8s.io/v1/runtimeclasses',
  'certificates.k8s.io/v1/certificatesigningrequests',
  'flowcontrol.apiserver.k8s.io/v1/flowschemas',
  'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations',
  'resource.k8s.io/v1/deviceclasses',
  'resource.k8s.io/v1/resourceslices',
]);

/** Built-in resources that live in namespaces. */
const NAMESPACED: ReadonlySet<string> = new Set([
  'v1/pods',
  'v1/services',
  'v1/configmaps',
  'v1/secrets',
  'v1/persistentvolumeclaims',
  'v1/serviceaccounts',
  'v1/endpoints',
  'v1/events',
  'v1/limitranges',
  'v1/resourcequotas',
  'v1/replicationcontrollers',
  'v1/podtemplates',
  'apps/v1/deployments',
  'apps/v1/replicasets',
  'apps/v1/statefulsets',
  'apps/v1/daemonsets',
  'apps/v1/controllerrevisions',
  'batch/v1/jobs',
  'batch/v1/cronjobs',
  'autoscaling/v1/horizontalpodautoscalers',
  'autoscaling/v2/horizontalpodautoscalers',
  'policy/v1/poddisruptionbudgets',
  'coordination.k8s.io/v1/leases',
  'discovery.k8s.io/v1/endpointslices',
  'events.k8s.io/v1/events',
  'networking.k8s.io/v1/ingresses',
  'networking.k8s.io/v1/networkpolicies',
  'rbac.authorization.k8s.io/v1/roles',
  'rbac.authorization.k8s.io/v1/rolebindings',
  'storage.k8s.io/v1/csistoragecapacities',
  'resource.k8s.io/v1/resourceclaims',
]);

/**
 * Whether a built-in resource lives in namespaces: `true`, `false`, or
 * `undefined` for a name rxkube does not know.
 *
 * @param name `group/version/plural` or `version/plural`.
 * @returns the scope when known.
 */
export function builtInScope(name: string): boolean | undefined {
  if (NAMESPACED.has(name)) return true;
  if (CLUSTER_SCOPED.has(name)) return false;
  return undefined;
}
