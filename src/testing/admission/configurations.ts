import { labelSelectorFromObject, type LabelSelector } from '../../store/labelSelector.js';
import { invalidFields, type FieldCause } from '../server/status.js';
import { toResourceType, type ResourceType } from '../storage/resources.js';
import type { Storage } from '../storage/storage.js';
import { isRecord } from '../writes/objectRules.js';

// The admissionregistration.k8s.io/v1 configuration resources, and the webhooks they register read out of the
// stored objects as the dispatcher uses them.

type AnyObject = Record<string, unknown>;

export const ADMISSION_GROUP = 'admissionregistration.k8s.io';
export const VALIDATING_RESOURCE = `${ADMISSION_GROUP}/v1/validatingwebhookconfigurations`;
export const MUTATING_RESOURCE = `${ADMISSION_GROUP}/v1/mutatingwebhookconfigurations`;

/** One rule of a webhook, its lists as given (`*` included). */
export interface WebhookRule {
  readonly operations: readonly string[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  readonly scope: string;
}

/** A webhook as the dispatcher calls it, defaults applied (v1's). */
export interface RegisteredWebhook {
  readonly type: 'validating' | 'mutating';
  readonly configuration: string;
  readonly name: string;
  /** The `url` client config; undefined for a `service` one, which the simulator cannot reach. */
  readonly url: string | undefined;
  /** The CA bundle (PEM), when given. */
  readonly ca: string | undefined;
  readonly rules: readonly WebhookRule[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly matchPolicy: 'Exact' | 'Equivalent';
  readonly namespaceSelector: LabelSelector;
  readonly objectSelector: LabelSelector;
  readonly sideEffects: string | undefined;
  readonly timeoutSeconds: number;
  readonly admissionReviewVersions: readonly string[];
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** The field errors of one webhook entry, as kube-apiserver's validation would find the ones the simulator relies on. */
function webhookCauses(w: unknown, at: string, names: Set<string>): FieldCause[] {
  const causes: FieldCause[] = [];
  const bad = (field: string, message: string, reason = 'FieldValueInvalid'): void => void causes.push({ reason, field: `${at}.${field}`, message });
  if (!isRecord(w)) return [{ reason: 'FieldValueInvalid', field: at, message: 'Invalid value: must be an object' }];
  const name = w['name'];
  if (typeof name !== 'string' || name === '') bad('name', 'Required value', 'FieldValueRequired');
  else if (names.has(name)) bad('name', `Duplicate value: ${JSON.stringify(name)}`, 'FieldValueDuplicate');
  else names.add(name);
  const cc = w['clientConfig'];
  const url = isRecord(cc) ? cc['url'] : undefined;
  const service = isRecord(cc) ? cc['service'] : undefined;
  if ((url === undefined) === (service === undefined)) bad('clientConfig', 'Required value: exactly one of url or service is required', 'FieldValueRequired');
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = typeof url === 'string' ? new URL(url) : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || parsed.protocol !== 'https:') bad('clientConfig.url', 'Invalid value: "…": \'https\' is the only allowed URL scheme')
    else if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '') bad('clientConfig.url', 'Invalid value: "…": query parameters, fragments and user information are not allowed');
  }
  const caBundle = isRecord(cc) ? cc['caBundle'] : undefined;
  if (caBundle !== undefined && (typeof caBundle !== 'string' || !/^[A-Za-z0-9+/=\s]*$/.test(caBundle))) bad('clientConfig.caBundle', 'Invalid value: must be base64');
  for (const [field, allowed] of [
    ['failurePolicy', ['Fail', 'Ignore']],
    ['matchPolicy', ['Exact', 'Equivalent']],
    ['reinvocationPolicy', ['Never', 'IfNeeded']],
    ['sideEffects', ['None', 'NoneOnDryRun', 'Some', 'Unknown']],
  ] as const) {
    const v = w[field];
    if (v !== undefined && !(allowed as readonly unknown[]).includes(v)) bad(field, `Unsupported value: ${JSON.stringify(v)}: supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`, 'FieldValueNotSupported');
  }
  if (w['sideEffects'] === undefined) bad('sideEffects', 'Required value', 'FieldValueRequired');
  const t = w['timeoutSeconds'];
  if (t !== undefined && !(Number.isInteger(t) && (t as number) >= 1 && (t as number) <= 30)) bad('timeoutSeconds', `Invalid value: ${JSON.stringify(t)}: the timeout value must be between 1 and 30 seconds`);
  if (strings(w['admissionReviewVersions']).length === 0) bad('admissionReviewVersions', 'Required value: must specify one of v1, v1beta1', 'FieldValueRequired');
  for (const sel of ['namespaceSelector', 'objectSelector'] as const) {
    if (w[sel] === undefined) continue;
    try {
      labelSelectorFromObject(w[sel] as object);
    } catch (err) {
      bad(sel, `Invalid value: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return causes;
}

/** Validation of a whole configuration on every write: 422 naming the kind, as kube-apiserver answers. */
function admitConfiguration(kind: string, obj: AnyObject): AnyObject {
  const list = obj['webhooks'] ?? [];
  const causes: FieldCause[] = [];
  const names = new Set<string>();
  if (!Array.isArray(list)) causes.push({ reason: 'FieldValueInvalid', field: 'webhooks', message: 'Invalid value: must be an array' });
  else list.forEach((w, i) => causes.push(...webhookCauses(w, `webhooks[${i}]`, names)));
  if (causes.length > 0) throw invalidFields(ADMISSION_GROUP, kind, causes, String((obj['metadata'] as AnyObject)['name'] ?? ''));
  return obj;
}

/** The two configuration resources: cluster-scoped built-ins, validated on every write. */
export function configurationTypes(): ResourceType[] {
  return (['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'] as const).map((kind) =>
    toResourceType(
      { group: ADMISSION_GROUP, version: 'v1', plural: `${kind.toLowerCase()}s`, kind, namespaced: false },
      { builtIn: true, admit: (next) => admitConfiguration(kind, next), discovery: { singularName: kind.toLowerCase(), shortNames: [], categories: ['api-extensions'] } },
    ),
  );
}

function ruleOf(r: unknown): WebhookRule {
  const o = isRecord(r) ? r : {};
  return { operations: strings(o['operations']), apiGroups: strings(o['apiGroups']), apiVersions: strings(o['apiVersions']), resources: strings(o['resources']), scope: typeof o['scope'] === 'string' ? o['scope'] : '*' };
}

function selectorOf(v: unknown): LabelSelector {
  try {
    return labelSelectorFromObject(isRecord(v) ? v : {});
  } catch {
    // Stored objects were validated; an unreadable selector (not reachable through the API) selects everything.
    return labelSelectorFromObject({});
  }
}

function webhookOf(type: 'validating' | 'mutating', configuration: string, w: AnyObject): RegisteredWebhook {
  const cc = isRecord(w['clientConfig']) ? w['clientConfig'] : {};
  const ca = typeof cc['caBundle'] === 'string' && cc['caBundle'] !== '' ? Buffer.from(cc['caBundle'], 'base64').toString('utf8') : undefined;
  return {
    type,
    configuration,
    name: String(w['name']),
    url: typeof cc['url'] === 'string' ? cc['url'] : undefined,
    ca,
    rules: (Array.isArray(w['rules']) ? w['rules'] : []).map(ruleOf),
    failurePolicy: w['failurePolicy'] === 'Ignore' ? 'Ignore' : 'Fail',
    matchPolicy: w['matchPolicy'] === 'Exact' ? 'Exact' : 'Equivalent',
    namespaceSelector: selectorOf(w['namespaceSelector']),
    objectSelector: selectorOf(w['objectSelector']),
    sideEffects: typeof w['sideEffects'] === 'string' ? w['sideEffects'] : undefined,
    timeoutSeconds: typeof w['timeoutSeconds'] === 'number' ? w['timeoutSeconds'] : 10,
    admissionReviewVersions: strings(w['admissionReviewVersions']),
    reinvocationPolicy: w['reinvocationPolicy'] === 'IfNeeded' ? 'IfNeeded' : 'Never',
  };
}

/**
 * The webhooks registered now, of one type: configurations in name order,
 * each one's webhooks in their order, as kube-apiserver sorts them.
 */
export function registeredWebhooks(storage: Storage, configType: ResourceType, type: 'validating' | 'mutating'): RegisteredWebhook[] {
  const configs = storage.list(configType).slice().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return configs.flatMap((c) => (Array.isArray(c.obj['webhooks']) ? (c.obj['webhooks'] as unknown[]) : []).filter(isRecord).map((w) => webhookOf(type, c.name, w)));
}
