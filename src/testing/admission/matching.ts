import type { UserInfo } from '../auth/users.js';
import type { ResourceRegistry } from '../storage/registry.js';
import type { ResourceType } from '../storage/resources.js';
import type { Storage } from '../storage/storage.js';
import { notFound, StatusError } from '../server/status.js';
import type { RegisteredWebhook, WebhookRule } from './configurations.js';

// Which webhooks a request reaches, as kube-apiserver's rules, namespace and object matchers decide.

type AnyObject = Record<string, unknown>;

/** What admission knows of one request: kube-apiserver's admission.Attributes, reduced to what webhooks are sent. */
export interface AdmissionAttributes {
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  /** The resource the request was made to (its version included). */
  readonly type: ResourceType;
  /** `''` or `status`. */
  readonly subresource: string;
  /** `''` for a cluster-scoped object. */
  readonly namespace: string;
  readonly name: string;
  readonly object: AnyObject | undefined;
  readonly oldObject: AnyObject | undefined;
  readonly dryRun: boolean;
  /** CreateOptions, UpdateOptions, PatchOptions or DeleteOptions, as sent in `request.options`. */
  readonly options: AnyObject;
  readonly user: UserInfo;
  /** The kind of the objects sent when it is not the resource's own: autoscaling/v1 Scale for `/scale`. */
  readonly kind?: { readonly group: string; readonly version: string; readonly kind: string };
}

const has = (list: readonly string[], v: string): boolean => list.includes('*') || list.includes(v);

function resourceMatches(rule: WebhookRule, resource: string, sub: string): boolean {
  return rule.resources.some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash === -1 ? entry : entry.slice(0, slash);
    const s = slash === -1 ? '' : entry.slice(slash + 1);
    return (res === '*' || res === resource) && (s === '*' || s === sub);
  });
}

function scopeMatches(scope: string, a: AdmissionAttributes): boolean {
  const isNamespace = a.type.id === 'v1/namespaces';
  if (scope === 'Cluster') return isNamespace || a.namespace === '';
  if (scope === 'Namespaced') return !isNamespace && a.namespace !== '';
  return true;
}

function ruleMatches(rule: WebhookRule, a: AdmissionAttributes, t: ResourceType): boolean {
  return (
    has(rule.operations, a.operation) &&
    has(rule.apiGroups, t.group) &&
    has(rule.apiVersions, t.version) &&
    resourceMatches(rule, t.plural, a.subresource) &&
    scopeMatches(rule.scope, a)
  );
}

/**
 * The resources a request is equivalent to: the other served versions of
 * the same custom resource (one store). The simulator serves one version of
 * each built-in resource, so built-ins have none.
 */
function equivalents(registry: ResourceRegistry, t: ResourceType): ResourceType[] {
  if (t.storage === undefined) return [];
  return [...registry.values()].filter((o) => o !== t && o.storage === t.storage && o.group === t.group && o.plural === t.plural);
}

/**
 * The resource (version) a webhook is called for, or undefined when its
 * rules do not match: the requested one, else with `matchPolicy:
 * Equivalent` the first equivalent version its rules name.
 */
export function matchedResource(w: RegisteredWebhook, a: AdmissionAttributes, registry: ResourceRegistry): ResourceType | undefined {
  if (w.rules.some((r) => ruleMatches(r, a, a.type))) return a.type;
  if (w.matchPolicy !== 'Equivalent') return undefined;
  return equivalents(registry, a.type).find((t) => w.rules.some((r) => ruleMatches(r, a, t)));
}

function labelsOf(o: AnyObject | undefined): Record<string, string> | undefined {
  const meta = o?.['metadata'];
  if (meta === null || typeof meta !== 'object') return o === undefined ? undefined : {};
  const labels = (meta as AnyObject)['labels'];
  return labels !== null && typeof labels === 'object' ? (labels as Record<string, string>) : {};
}

/**
 * The namespace selector, as kube-apiserver's namespace matcher judges it: a
 * cluster-scoped object other than a namespace is never exempted; a
 * namespace being created or updated is judged by its own labels, by the
 * stored namespace otherwise (a delete, a subresource); a namespaced object
 * by its namespace's labels. A namespace that does not exist is the
 * request's 404 NotFound, returned rather than thrown, as kube-apiserver
 * answers it only once the rules and the object selector also match.
 */
export function namespaceSelected(w: RegisteredWebhook, a: AdmissionAttributes, storage: Storage, registry: ResourceRegistry): boolean | StatusError {
  const isNamespace = a.type.id === 'v1/namespaces';
  if (a.namespace === '' && !isNamespace) return true;
  if (w.namespaceSelector.empty) return true;
  if (isNamespace && a.subresource === '' && a.operation !== 'DELETE') return w.namespaceSelector.matches(labelsOf(a.object) ?? {});
  // A request on a namespace itself is made in that namespace, as kube-apiserver reads its path.
  const name = isNamespace ? a.name : a.namespace;
  const nsType = registry.byId('v1/namespaces');
  const ns = nsType === undefined ? undefined : storage.get(nsType, '', name);
  if (ns === undefined) return nsType === undefined ? new StatusError(404, 'NotFound', `namespaces "${name}" not found`) : notFound(nsType, name);
  return w.namespaceSelector.matches(labelsOf(ns.obj) ?? {});
}

/** The object selector: the new object's labels or the old one's match. */
export function objectSelected(w: RegisteredWebhook, a: AdmissionAttributes): boolean {
  if (w.objectSelector.empty) return true;
  return [a.object, a.oldObject].some((o) => o !== undefined && w.objectSelector.matches(labelsOf(o) ?? {}));
}
