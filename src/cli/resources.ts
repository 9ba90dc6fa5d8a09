/**
 * What `rxkube watch <resource>` accepts: kubectl's plural, singular and
 * short names for built-in resources (`pods`, `po`, `deploy`), the full
 * `version/plural` or `group/version/plural` names, and custom resources as
 * `group/version/plural` whose group has a dot (`example.com/v1/widgets`).
 * A name that is none of these is refused before anything starts, or (on a
 * cluster) resolved through discovery by watchResource.ts.
 */
import { builtInKind } from '../sources/builtInKinds.js';
import { builtInScope, type BuiltInResource } from '../sources/resources.js';
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

/** kubectl's other names for each built-in resource (its kind is `builtInKind`'s). */
const ALIASES: Readonly<Record<BuiltInResource, readonly string[]>> = {
  'v1/pods': ['pod', 'po'],
  'v1/services': ['service', 'svc'],
  'v1/configmaps': ['configmap', 'cm'],
  'v1/secrets': ['secret'],
  'v1/namespaces': ['namespace', 'ns'],
  'v1/nodes': ['node', 'no'],
  'v1/persistentvolumes': ['persistentvolume', 'pv'],
  'v1/persistentvolumeclaims': ['persistentvolumeclaim', 'pvc'],
  'v1/serviceaccounts': ['serviceaccount', 'sa'],
  'v1/endpoints': ['ep'],
  'v1/events': ['event', 'ev'],
  'v1/limitranges': ['limitrange', 'limits'],
  'v1/resourcequotas': ['resourcequota', 'quota'],
  'v1/replicationcontrollers': ['replicationcontroller', 'rc'],
  'v1/podtemplates': ['podtemplate'],
  'apps/v1/deployments': ['deployment', 'deploy'],
  'apps/v1/replicasets': ['replicaset', 'rs'],
  'apps/v1/statefulsets': ['statefulset', 'sts'],
  'apps/v1/daemonsets': ['daemonset', 'ds'],
  'apps/v1/controllerrevisions': ['controllerrevision'],
  'batch/v1/jobs': ['job'],
  'batch/v1/cronjobs': ['cronjob', 'cj'],
  'autoscaling/v2/horizontalpodautoscalers': ['horizontalpodautoscaler', 'hpa'],
  'autoscaling/v1/horizontalpodautoscalers': [],
  'policy/v1/poddisruptionbudgets': ['poddisruptionbudget', 'pdb'],
  'coordination.k8s.io/v1/leases': ['lease'],
  'discovery.k8s.io/v1/endpointslices': ['endpointslice'],
  'events.k8s.io/v1/events': [],
  'networking.k8s.io/v1/ingresses': ['ingress', 'ing'],
  'networking.k8s.io/v1/networkpolicies': ['networkpolicy', 'netpol'],
  'networking.k8s.io/v1/ingressclasses': ['ingressclass'],
  'networking.k8s.io/v1/servicecidrs': ['servicecidr'],
  'networking.k8s.io/v1/ipaddresses': ['ipaddress'],
  'rbac.authorization.k8s.io/v1/roles': ['role'],
  'rbac.authorization.k8s.io/v1/rolebindings': ['rolebinding'],
  'rbac.authorization.k8s.io/v1/clusterroles': ['clusterrole'],
  'rbac.authorization.k8s.io/v1/clusterrolebindings': ['clusterrolebinding'],
  'storage.k8s.io/v1/storageclasses': ['storageclass', 'sc'],
  'storage.k8s.io/v1/csidrivers': ['csidriver'],
  'storage.k8s.io/v1/csinodes': ['csinode'],
  'storage.k8s.io/v1/volumeattachments': ['volumeattachment'],
  'storage.k8s.io/v1/csistoragecapacities': ['csistoragecapacity'],
  'storage.k8s.io/v1/volumeattributesclasses': ['volumeattributesclass', 'vac'],
  'apiextensions.k8s.io/v1/customresourcedefinitions': ['customresourcedefinition', 'crd', 'crds'],
  'apiregistration.k8s.io/v1/apiservices': ['apiservice'],
  'admissionregistration.k8s.io/v1/validatingwebhookconfigurations': ['validatingwebhookconfiguration'],
  'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations': ['mutatingwebhookconfiguration'],
  'admissionregistration.k8s.io/v1/validatingadmissionpolicies': ['validatingadmissionpolicy'],
  'admissionregistration.k8s.io/v1/validatingadmissionpolicybindings': ['validatingadmissionpolicybinding'],
  'scheduling.k8s.io/v1/priorityclasses': ['priorityclass', 'pc'],
  'node.k8s.io/v1/runtimeclasses': ['runtimeclass'],
  'certificates.k8s.io/v1/certificatesigningrequests': ['certificatesigningrequest', 'csr'],
  'flowcontrol.apiserver.k8s.io/v1/flowschemas': ['flowschema'],
  'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations': ['prioritylevelconfiguration'],
  'resource.k8s.io/v1/resourceclaims': ['resourceclaim'],
  'resource.k8s.io/v1/deviceclasses': ['deviceclass'],
  'resource.k8s.io/v1/resourceslices': ['resourceslice'],
};

/** Short, singular and plural names → full name. The first full name listed for a plural wins (`events` is v1). */
const BY_SHORT_NAME: ReadonlyMap<string, string> = (() => {
  const names = new Map<string, string>();
  for (const [full, aliases] of Object.entries(ALIASES)) {
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
  const kind = builtInKind(full);
  if (scope !== undefined && kind !== undefined) {
    return { ref: full, group, version, plural, kind, namespaced: scope, builtIn: true };
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
