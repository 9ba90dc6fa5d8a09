import type { CustomResource } from '../crd/customResource.js';
import { checkOptionNames, describeValue, optionNames } from '../options/validate.js';
import { deepFreeze } from '../store/deepFreeze.js';
import { printable } from '../errors/printable.js';
import { isWebhook } from './isWebhook.js';
import { isAdmissionWebhook, type AdmissionWebhook } from './webhooks.js';
import type { Webhook } from './types.js';

/** Where kube-apiserver reaches the webhooks: an in-cluster Service, or a URL. */
export type WebhookClientConfig =
  | { readonly service: { readonly namespace: string; readonly name: string; /** @default 443 */ readonly port?: number } }
  | { readonly url: string };

/** Options of {@link webhookManifests}. */
export interface WebhookManifestsOptions {
  /** The configurations' `metadata.name`. */
  readonly name: string;
  /** The webhooks to register; conversion webhooks are left out (their CRD names them). */
  readonly webhooks: readonly Webhook[];
  /** How kube-apiserver reaches the runner; each webhook's path is added. */
  readonly clientConfig: WebhookClientConfig;
  /**
   * Custom resources whose CRDs come first in the result, each CRD once (two
   * views of one definition give one); one that converts between versions
   * gets `spec.conversion` pointing at the same client config with the path
   * of the conversion webhook in `webhooks` that converts it (one must).
   * @default []
   */
  readonly customResources?: readonly CustomResource<any, any, boolean>[];
  /** The PEM CA certificate(s) that signed the serving certificate. @default none: the cluster's roots (or cert-manager's CA injector) */
  readonly caBundle?: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const WHERE = 'webhookManifests';

type ClientConfig = { service: { namespace: string; name: string; port: number } } | { url: string };

function clientConfigOption(value: unknown): ClientConfig {
  const o = checkOptionNames(`${WHERE}: option "clientConfig"`, value, optionNames<WebhookClientConfig>({ service: true, url: true }));
  if ((o.service === undefined) === (o.url === undefined)) throw new TypeError(`${WHERE}: option "clientConfig" must have exactly one of service and url, got ${describeValue(value)}`);
  if (o.url !== undefined) {
    let url: URL;
    try {
      url = new URL(String(o.url));
    } catch {
      throw new TypeError(`${WHERE}: option "clientConfig.url" must be an https URL, got ${describeValue(o.url)}`);
    }
    if (typeof o.url !== 'string' || url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || o.url.includes('#') || o.url.includes('?')) {
      throw new TypeError(`${WHERE}: option "clientConfig.url" must be an https URL without user info, query or fragment (kube-apiserver refuses them), got ${describeValue(o.url)}`);
    }
    return { url: o.url.replace(/\/+$/, '') };
  }
  const s = checkOptionNames(`${WHERE}: option "clientConfig.service"`, o.service, optionNames<Extract<WebhookClientConfig, { service: unknown }>['service']>({ namespace: true, name: true, port: true }));
  for (const key of ['namespace', 'name'] as const) {
    if (typeof s[key] !== 'string' || !DNS_LABEL.test(s[key]) || s[key].length > 63) {
      throw new TypeError(`${WHERE}: option "clientConfig.service.${key}" must be a DNS label (lower case, at most 63 characters), got ${describeValue(s[key])}`);
    }
  }
  const port = s.port ?? 443;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new TypeError(`${WHERE}: option "clientConfig.service.port" must be an integer port 1…65535, got ${describeValue(s.port)}`);
  }
  return { service: { namespace: s.namespace as string, name: s.name as string, port } };
}

function caBundleOption(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !value.includes('-----BEGIN CERTIFICATE-----')) {
    throw new TypeError(`${WHERE}: option "caBundle" must be PEM text holding a CERTIFICATE block, got ${describeValue(value)}`);
  }
  return Buffer.from(value, 'utf8').toString('base64');
}

type DefinitionLike = { readonly kind: string; readonly group?: unknown; readonly hasConversion?: unknown; crd(options?: unknown): object };

/** A definition by shape (`crd()` beside its kind): a module may resolve 'rxkube' to another copy than this one. */
function isDefinitionLike(value: unknown): value is DefinitionLike {
  const v = value as { crd?: unknown; kind?: unknown } | null | undefined;
  return typeof v?.crd === 'function' && typeof v.kind === 'string';
}

/** The path of the conversion webhook serving each `group/kind`, from the webhooks' `converts` (by shape, as above). */
function conversionPaths(webhooks: readonly Webhook[]): Map<string, string> {
  const paths = new Map<string, string>();
  for (const w of webhooks) {
    const converts = w.type === 'conversion' ? (w as { converts?: unknown }).converts : undefined;
    if (!Array.isArray(converts)) continue;
    for (const c of converts as { group?: unknown; kind?: unknown }[]) {
      const key = `${String(c.group)}/${String(c.kind)}`;
      const other = paths.get(key);
      if (other !== undefined && other !== w.path) {
        throw new TypeError(`${WHERE}: two conversion webhooks (${JSON.stringify(other)} and ${JSON.stringify(w.path)}) convert ${String(c.kind)} of ${String(c.group)}; a CRD names one`);
      }
      paths.set(key, w.path);
    }
  }
  return paths;
}

/** The CRD of a definition; one with converters gets the client config of the conversion webhook that converts it. */
function crdOf(def: DefinitionLike, i: number, client: ClientConfig, pem: string | undefined, paths: ReadonlyMap<string, string>): object {
  if (def.hasConversion !== true) return def.crd();
  const path = paths.get(`${String(def.group)}/${def.kind}`);
  if (path === undefined) {
    throw new TypeError(
      `${WHERE}: customResources[${i}] (${printable(def.kind)}) converts between versions, and no conversion webhook in option "webhooks" converts it; add admission.conversion(${printable(def.kind)}) to webhooks`,
    );
  }
  const conversionWebhook = 'url' in client ? { url: `${client.url}${path}` } : { service: { ...client.service, path } };
  return def.crd({ conversionWebhook, ...(pem === undefined ? {} : { caBundle: pem }) });
}

function entry(w: AdmissionWebhook, client: ClientConfig, caBundle: string | undefined): Record<string, unknown> {
  const o = w.options;
  const config = 'url' in client ? { url: `${client.url}${w.path}` } : { service: { ...client.service, path: w.path } };
  return {
    name: o.name,
    admissionReviewVersions: ['v1'],
    clientConfig: { ...config, ...(caBundle === undefined ? {} : { caBundle }) },
    rules: [{ operations: [...o.operations], apiGroups: [w.target.group], apiVersions: [w.target.version], resources: [w.target.plural], scope: w.target.namespaced ? 'Namespaced' : 'Cluster' }],
    failurePolicy: o.failurePolicy,
    matchPolicy: o.matchPolicy,
    sideEffects: o.sideEffects,
    timeoutSeconds: o.timeoutSeconds,
    ...(o.namespaceSelector === undefined ? {} : { namespaceSelector: o.namespaceSelector }),
    ...(o.objectSelector === undefined ? {} : { objectSelector: o.objectSelector }),
    ...(w.type === 'mutating' ? { reinvocationPolicy: o.reinvocationPolicy ?? 'Never' } : {}),
  };
}

function configuration(kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration', name: string, webhooks: readonly Record<string, unknown>[]): object {
  return { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks };
}

/**
 * The `admissionregistration.k8s.io/v1` ValidatingWebhookConfiguration and
 * MutatingWebhookConfiguration that register webhooks with kube-apiserver,
 * as plain frozen objects to apply or print (`rxkube manifests` prints them).
 *
 * Each webhook gives one entry: its name, a rule for its resource (group,
 * version, plural and scope, its operations), its failure policy, side
 * effects, timeout, selectors and match policy, `admissionReviewVersions:
 * ['v1']`, and the client config with its path. A configuration with no
 * webhooks is left out; conversion webhooks are registered by their CRD:
 * pass the definitions as `customResources` and their CRDs come first (each
 * CRD once), those that convert with `spec.conversion` pointing at the path
 * of the conversion webhook among `webhooks` that converts them.
 *
 * ## Example
 * ```ts
 * import { admission, webhookManifests } from 'rxkube';
 *
 * const noLatest = admission.validating('v1/pods', () => admission.allow());
 * const [validating] = webhookManifests({
 *   name: 'shop-operator',
 *   webhooks: [noLatest],
 *   clientConfig: { service: { namespace: 'shop-system', name: 'shop-operator-webhooks' } },
 * });
 * console.log(validating); // { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', … }
 * ```
 *
 * @param opts the configurations' name, the webhooks, where kube-apiserver reaches them, the CA bundle.
 * @returns the CRDs, then the validating configuration, then the mutating one.
 * @throws TypeError naming a bad option, two webhooks with one name or one path, or a definition that converts with no conversion webhook converting it.
 */
export function webhookManifests(opts: WebhookManifestsOptions): readonly object[] {
  const o = checkOptionNames(WHERE, opts, optionNames<WebhookManifestsOptions>({ name: true, webhooks: true, clientConfig: true, customResources: true, caBundle: true }));
  if (typeof o.name !== 'string' || o.name.length > 253 || !DNS_SUBDOMAIN.test(o.name)) {
    throw new TypeError(`${WHERE}: option "name" must be a lower-case DNS subdomain such as 'shop-operator', got ${describeValue(o.name)}`);
  }
  if (!Array.isArray(o.webhooks)) throw new TypeError(`${WHERE}: option "webhooks" must be an array of webhooks, got ${describeValue(o.webhooks)}`);
  const client = clientConfigOption(o.clientConfig);
  const caBundle = caBundleOption(o.caBundle);
  const paths = new Set<string>();
  const byType = { validating: [] as Record<string, unknown>[], mutating: [] as Record<string, unknown>[] };
  const names = { validating: new Set<string>(), mutating: new Set<string>() };
  (o.webhooks as unknown[]).forEach((w, i) => {
    if (!isWebhook(w)) throw new TypeError(`${WHERE}: webhooks[${i}] is not a webhook (made by admission.validating, admission.mutating or admission.conversion), got ${describeValue(w)}`);
    if (paths.has(w.path)) throw new TypeError(`${WHERE}: webhooks[${i}]: two webhooks have the path ${JSON.stringify(w.path)}; give one a \`path\` option`);
    paths.add(w.path);
    if (w.type === 'conversion') return;
    if (!isAdmissionWebhook(w)) throw new TypeError(`${WHERE}: webhooks[${i}] is a ${w.type} webhook without the name, resource and options admission.${w.type} gives it; its rules are unknown`);
    if (names[w.type].has(w.name)) throw new TypeError(`${WHERE}: webhooks[${i}]: two ${w.type} webhooks are named ${JSON.stringify(w.name)}; give one a \`name\` option`);
    names[w.type].add(w.name);
    byType[w.type].push(entry(w, client, caBundle));
  });
  const customResources = o.customResources ?? [];
  if (!Array.isArray(customResources)) throw new TypeError(`${WHERE}: option "customResources" must be an array of customResource definitions, got ${describeValue(o.customResources)}`);
  const converterPaths = conversionPaths(o.webhooks as Webhook[]);
  const out: object[] = [];
  const crdNames = new Set<unknown>();
  customResources.forEach((def: unknown, i) => {
    if (!isDefinitionLike(def)) throw new TypeError(`${WHERE}: customResources[${i}] is not a customResource definition, got ${describeValue(def)}`);
    const crd = crdOf(def, i, client, o.caBundle as string | undefined, converterPaths);
    // Two views of one definition (Website, Website.forVersion('v1')) have one CRD: give it once.
    const crdName = (crd as { metadata?: { name?: unknown } }).metadata?.name;
    if (crdNames.has(crdName)) return;
    crdNames.add(crdName);
    out.push(crd);
  });
  if (byType.validating.length > 0) out.push(configuration('ValidatingWebhookConfiguration', o.name, byType.validating));
  if (byType.mutating.length > 0) out.push(configuration('MutatingWebhookConfiguration', o.name, byType.mutating));
  return deepFreeze(out);
}
