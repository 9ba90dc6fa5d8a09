import { checkOptionNames, describeValue, numberOption, oneOf, optionNames } from '../options/validate.js';
import { labelSelectorFromObject, type LabelSelectorObject } from '../store/labelSelector.js';
import { deepFreeze } from '../store/deepFreeze.js';
import { pathProblem } from '../crd/webhookPath.js';
import type { Operation } from './types.js';
import type { WebhookTarget } from './target.js';

/** Options of `admission.validating` (and, with `reinvocationPolicy`, of `admission.mutating`): how the webhook is served and registered. */
export interface WebhookOptions<Op extends Operation | '*' = Operation | '*'> {
  /** The URL path. @default controller-runtime's `/validate-<group with . as ->-<version>-<kind>` (`/mutate-…`) */
  readonly path?: string;
  /** The operations it is called for; `'*'` for all. @default ['CREATE', 'UPDATE'] */
  readonly operations?: readonly Op[];
  /** What kube-apiserver does when the webhook cannot be reached or errs. @default 'Fail' */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** Whether the handler changes anything outside the object; `'NoneOnDryRun'` when it skips them on dry runs. @default 'None' */
  readonly sideEffects?: 'None' | 'NoneOnDryRun';
  /** How long kube-apiserver waits, 1…30 s; the handler gets a little less. @default 10 */
  readonly timeoutSeconds?: number;
  /** Only objects in namespaces matching this. @default every namespace */
  readonly namespaceSelector?: LabelSelectorObject;
  /** Only objects whose labels match this. @default every object */
  readonly objectSelector?: LabelSelectorObject;
  /** `'Equivalent'` also sends requests made through other versions of the resource, converted. @default 'Equivalent' */
  readonly matchPolicy?: 'Exact' | 'Equivalent';
  /** The webhook's name in its configuration, a domain of three or more labels. @default `v<kind>.<group>` (`m…`), `.k8s.io` added to a group of fewer than two labels */
  readonly name?: string;
}

/** Options of `admission.mutating`: those of every admission webhook, and whether it is called again. */
export interface MutatingWebhookOptions<Op extends Operation | '*' = Operation | '*'> extends WebhookOptions<Op> {
  /** `'IfNeeded'` calls it again when a later webhook changed the object. @default 'Never' */
  readonly reinvocationPolicy?: 'Never' | 'IfNeeded';
}

/** Options once checked, with defaults filled in. */
export type ParsedWebhookOptions = Required<Omit<WebhookOptions, 'namespaceSelector' | 'objectSelector'>> &
  Pick<MutatingWebhookOptions, 'namespaceSelector' | 'objectSelector' | 'reinvocationPolicy'>;

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'] as const;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * controller-runtime's default path: `/validate-` (or `/mutate-`), the group
 * with dots as dashes, the version and the kind in lower case, joined by `-`
 * (so the core group gives `/validate--v1-pod`).
 */
export function defaultPath(type: 'validating' | 'mutating', t: WebhookTarget): string {
  return `/${type === 'validating' ? 'validate' : 'mutate'}-${t.group.replaceAll('.', '-')}-${t.version}-${t.kind.toLowerCase()}`;
}

/** `v<kind>.<group>`; kube-apiserver wants three labels or more, so a short group (`apps`, core) gets `.k8s.io`. */
export function defaultName(type: 'validating' | 'mutating', t: WebhookTarget): string {
  const group = t.group === '' ? 'core' : t.group;
  const domain = group.split('.').length >= 2 ? group : `${group}.k8s.io`;
  return `${type === 'validating' ? 'v' : 'm'}${t.kind.toLowerCase()}.${domain}`;
}

function selector(where: string, name: string, value: unknown): LabelSelectorObject | undefined {
  if (value === undefined) return undefined;
  try {
    checkOptionNames(`${where}: option "${name}"`, value, optionNames<LabelSelectorObject>({ matchLabels: true, matchExpressions: true }));
    labelSelectorFromObject(value as LabelSelectorObject);
  } catch (err) {
    throw new TypeError(`${where}: option "${name}" is not a label selector: ${(err as Error).message}`);
  }
  return deepFreeze(structuredClone(value as LabelSelectorObject));
}

/**
 * Checks a webhook's options up front, naming the option and value of the first mistake.
 *
 * @param where the function, for messages.
 * @param type which kind of webhook.
 * @param target its resource.
 * @param opts what the user gave.
 * @returns the options with their defaults.
 */
export function parseWebhookOptions(where: string, type: 'validating' | 'mutating', target: WebhookTarget, opts: unknown): ParsedWebhookOptions {
  const o = checkOptionNames(where, opts ?? {}, optionNames<MutatingWebhookOptions>({ path: true, operations: true, failurePolicy: true, sideEffects: true, timeoutSeconds: true, namespaceSelector: true, objectSelector: true, matchPolicy: true, reinvocationPolicy: true, name: true }));
  const path: unknown = o.path ?? defaultPath(type, target);
  const problem = typeof path === 'string' ? pathProblem(path) : 'must be a string';
  if (problem !== undefined) throw new TypeError(`${where}: option "path" ${problem}, got ${describeValue(o.path)}`);
  const operations = o.operations ?? ['CREATE', 'UPDATE'];
  if (!Array.isArray(operations) || operations.length === 0 || !operations.every((op) => (OPERATIONS as readonly unknown[]).includes(op))) {
    throw new TypeError(`${where}: option "operations" must be a non-empty array of ${OPERATIONS.map((x) => JSON.stringify(x)).join(', ')}, got ${describeValue(o.operations)}`);
  }
  if (operations.includes('*') && operations.length > 1) {
    throw new TypeError(`${where}: option "operations" must list '*' alone (it already means every operation), got ${describeValue(o.operations)}`);
  }
  const timeoutSeconds = numberOption(where, 'timeoutSeconds', o.timeoutSeconds, 10, { min: 1, integer: true });
  if (timeoutSeconds > 30) throw new TypeError(`${where}: option "timeoutSeconds" must be at most 30 (kube-apiserver's limit), got ${timeoutSeconds}`);
  if (type === 'validating' && o.reinvocationPolicy !== undefined) {
    throw new TypeError(`${where}: option "reinvocationPolicy" is for mutating webhooks only, got ${describeValue(o.reinvocationPolicy)}`);
  }
  const name = o.name ?? defaultName(type, target);
  if (typeof name !== 'string' || name.length > 253 || !DNS_SUBDOMAIN.test(name) || name.split('.').length < 3) {
    throw new TypeError(`${where}: option "name" must be a lower-case domain of three or more labels such as 'vwebsite.example.com', got ${describeValue(o.name)}`);
  }
  const namespaceSelector = selector(where, 'namespaceSelector', o.namespaceSelector);
  const objectSelector = selector(where, 'objectSelector', o.objectSelector);
  return Object.freeze({
    path: path as string,
    operations: Object.freeze([...new Set(operations as (Operation | '*')[])]),
    failurePolicy: oneOf(where, 'failurePolicy', o.failurePolicy, ['Fail', 'Ignore'], 'Fail'),
    sideEffects: oneOf(where, 'sideEffects', o.sideEffects, ['None', 'NoneOnDryRun'], 'None'),
    timeoutSeconds,
    ...(namespaceSelector === undefined ? {} : { namespaceSelector }),
    ...(objectSelector === undefined ? {} : { objectSelector }),
    matchPolicy: oneOf(where, 'matchPolicy', o.matchPolicy, ['Exact', 'Equivalent'], 'Equivalent'),
    ...(type === 'mutating' ? { reinvocationPolicy: oneOf(where, 'reinvocationPolicy', o.reinvocationPolicy, ['Never', 'IfNeeded'], 'Never') } : {}),
    name,
  });
}
