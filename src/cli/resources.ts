/**
 * What `rxkube watch <resource>` accepts: kubectl's plural, singular and
 * short names for built-in resources (`pods`, `po`, `deploy`), the full
 * `version/plural` or `group/version/plural` names, and custom resources as
 * `group/version/plural` whose group has a dot (`example.com/v1/widgets`).
 * A name that is none of these is refused before anything starts, or (on a
 * cluster) resolved through discovery by watchResource.ts.
 */
import { builtInScope } from '../sources/resources.js';
import type { PrinterColumn } from './printerColumns.js';

/** A resource the command can watch. */
export interface CliResource {
  /** The name kubeSource takes: `v1/pods`, `apps/v1/deployments`, `example.com/v1/widgets`. */
  readonly ref: string;
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** The kind of one object (`Pod`), guessed from the plural for custom resources. */
  readonly kind: string;
  /** True for namespaced resources (custom resources are taken to be namespaced). */
  readonly namespaced: boolean;
  /** True for a resource rxkube knows the model of. */
  readonly builtIn: boolean;
  /** A custom resource's printer columns (priority 0), when its CRD could be read. */
  readonly columns?: readonly PrinterColumn[];
}

/** Built-in resources by full name: kind, then kubectl's other names for it. */
const BUILT_IN: Readonly<Record<string, readonly [kind: string, ...aliases: string[]]>> = {
  'v1/pods': ['Pod', 'pod', 'po'],
  'v1/services': ['Service', 'service', 'svc'],
  'v1/configmaps': ['ConfigMap', 'configmap', 'cm'],
  'v1/secrets': ['Secret', 'secret'],
  'v1/namespaces': ['Namespace', 'namespace', 'ns'],
  'v1/nodes': ['Node', 'node', 'no'],
  'v1/persistentvolumes': ['PersistentVolume', 'persistentvolume', 'pv'],
  'v1/persistentvolumeclaims': ['PersistentVolumeClaim', 'persistentvolumeclaim', 'pvc'],
  'v1/serviceaccounts': ['ServiceAccount', 'serviceaccount', 'sa'],
  'v1/endpoints': ['Endpoints', 'ep'],
  'v1/events': ['Event', 'event', 'ev'],
  'v1/limitranges': ['LimitRange', 'limitrange', 'limits'],
  'v1/resourcequotas': ['ResourceQuota', 'resourcequota', 'quota'],
  'v1/replicationcontrollers': ['ReplicationController', 'replicationcontroller', 'rc'],
  'v1/podtemplates': ['PodTemplate', 'podtemplate'],
  'apps/v1/deployments': ['Deployment', 'deployment', 'deploy'],
  'apps/v1/replicasets': ['ReplicaSet', 'replicaset', 'rs'],
  'apps/v1/statefulsets': ['StatefulSet', 'statefulset', 'sts'],
  'apps/v1/daemonsets': ['DaemonSet', 'daemonset', 'ds'],
  'apps/v1/controllerrevisions': ['ControllerRevision', 'controllerrevision'],
  'batch/v1/jobs': ['Job', 'job'],
  'batch/v1/cronjobs': ['CronJob', 'cronjob', 'cj'],
  'autoscaling/v2/horizontalpodautoscalers': ['HorizontalPodAutoscaler', 'horizontalpodautoscaler', 'hpa'],
  'autoscaling/v1/horizontalpodautoscalers': ['HorizontalPodAutoscaler'],
  'policy/v1/poddisruptionbudgets': ['PodDisruptionBudget', 'poddisruptionbudget', 'pdb'],
  'coordination.k8s.io/v1/leases': ['Lease', 'lease'],
  'discovery.k8s.io/v1/endpointslices': ['EndpointSlice', 'endpointslice'],
  'events.k8s.io/v1/events': ['Event'],
  'networking.k8s.io/v1/ingresses': ['Ingress', 'ingress', 'ing'],
  'networking.k8s.io/v1/networkpolicies': ['NetworkPolicy', 'networkpolicy', 'netpol'],
  'networking.k8s.io/v1/ingressclasses': ['IngressClass', 'ingressclass'],
  'networking.k8s.io/v1/servicecidrs': ['ServiceCIDR', 'servicecidr'],
  'networking.k8s.io/v1/ipaddresses': ['IPAddress', 'ipaddress'],
  'rbac.authorization.k8s.io/v1/roles': ['Role', 'role'],
  'rbac.authorization.k8s.io/v1/rolebindings': ['RoleBinding', 'rolebinding'],
  'rbac.authorization.k8s.io/v1/clusterroles': ['ClusterRole', 'clusterrole'],
  'rbac.authorization.k8s.io/v1/clusterrolebindings': ['ClusterRoleBinding', 'clusterrolebinding'],
  'storage.k8s.io/v1/storageclasses': ['StorageClass', 'storageclass', 'sc'],
  'storage.k8s.io/v1/csidrivers': ['CSIDriver', 'csidriver'],
  'storage.k8s.io/v1/csinodes': ['CSINode', 'csinode'],
  'storage.k8s.io/v1/volumeattachments': ['VolumeAttachment', 'volumeattachment'],
  'storage.k8s.io/v1/csistoragecapacities': ['CSIStorageCapacity', 'csistoragecapacity'],
  'storage.k8s.io/v1/volumeattributesclasses': ['VolumeAttributesClass', 'volumeattributesclass', 'vac'],
  'apiextensions.k8s.io/v1/customresourcedefinitions': ['CustomResourceDefinition', 'customresourcedefinition', 'crd', 'crds'],
  'apiregistration.k8s.io/v1/apiservices': ['APIService', 'apiservice'],
  'admissionregistration.k8s.io/v1/validatingwebhookconfigurations': ['ValidatingWebhookConfiguration', 'validatingwebhookconfiguration'],
  'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations': ['MutatingWebhookConfiguration', 'mutatingwebhookconfiguration'],
  'admissionregistration.k8s.io/v1/validatingadmissionpolicies': ['ValidatingAdmissionPolicy', 'validatingadmissionpolicy'],
  'admissionregistration.k8s.io/v1/validatingadmissionpolicybindings': ['ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybinding'],
  'scheduling.k8s.io/v1/priorityclasses': ['PriorityClass', 'priorityclass', 'pc'],
  'node.k8s.io/v1/runtimeclasses': ['RuntimeClass', 'runtimeclass'],
  'certificates.k8s.io/v1/certificatesigningrequests': ['CertificateSigningRequest', 'certificatesigningrequest', 'csr'],
  'flowcontrol.apiserver.k8s.io/v1/flowschemas': ['FlowSchema', 'flowschema'],
  'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations': ['PriorityLevelConfiguration', 'prioritylevelconfiguration'],
  'resource.k8s.io/v1/resourceclaims': ['ResourceClaim', 'resourceclaim'],
  'resource.k8s.io/v1/deviceclasses': ['DeviceClass', 'deviceclass'],
  'resource.k8s.io/v1/resourceslices': ['ResourceSlice', 'resourceslice'],
};

/** Short, singular and plural names → full name. The first full name listed for a plural wins (`events` is v1). */
const BY_SHORT_NAME: ReadonlyMap<string, string> = (() => {
  const names = new Map<string, string>();
  for (const [full, [, ...aliases]] of Object.entries(BUILT_IN)) {
    const plural = full.slice(full.lastIndexOf('/') + 1);
    for (const name of [plural, ...aliases]) if (!names.has(name)) names.set(name, full);
  }
  return names;
})();

const SEGMENT = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * Resolves what the user typed into a resource, or throws a TypeError that
 * says what is accepted.
 *
 * @param name e.g. `pods`, `deploy`, `v1/pods`, `apps/v1/deployments`, `example.com/v1/widgets`.
 * @returns the resource.
 */
export function resolveResource(name: string): CliResource {
  const full = BY_SHORT_NAME.get(name.toLowerCase()) ?? name;
  const parts = full.split('/');
  if (parts.length === 1) {
    throw new TypeError(
      `unknown resource ${JSON.stringify(name)}: not a built-in resource name; give a known name (pods, deployments, svc, …) or the full version/plural or group/version/plural, e.g. example.com/v1/widgets`,
    );
  }
  if ((parts.length !== 2 && parts.length !== 3) || !parts.every((p) => SEGMENT.test(p))) {
    throw new TypeError(`unknown resource ${JSON.stringify(name)}: expected version/plural or group/version/plural in lower case, e.g. apps/v1/deployments`);
  }
  const [group, version, plural] = parts.length === 2 ? ['', parts[0] as string, parts[1] as string] : (parts as [string, string, string]);
  const scope = builtInScope(full);
  const known = BUILT_IN[full];
  if (scope !== undefined && known !== undefined) {
    return { ref: full, group, version, plural, kind: known[0], namespaced: scope, builtIn: true };
  }
  if (!group.includes('.')) {
    throw new TypeError(
      `unknown resource ${JSON.stringify(name)}: ${full} is not a built-in resource rxkube knows, and a custom resource's group has a dot (example.com/v1/widgets)`,
    );
  }
  return { ref: full, group, version, plural, kind: kindOf(plural), namespaced: true, builtIn: false };
}

/** A custom resource's kind, guessed from its plural: `widgets` → `Widget`, `boxes` → `Box`, `policies` → `Policy`. */
function kindOf(plural: string): string {
  const singular = plural.endsWith('ies') ? `${plural.slice(0, -3)}y` : /(s|x|z|ch|sh)es$/.test(plural) ? plural.slice(0, -2) : plural.replace(/s$/, '');
  return singular.charAt(0).toUpperCase() + singular.slice(1);
}
