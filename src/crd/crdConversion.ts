import { checkOptionNames, describeValue, optionNames } from '../options/validate.js';
import type { CustomResourceConversion, CustomResourceDefinition } from './crdObject.js';
import { deepFreeze } from '../store/deepFreeze.js';
import { pathProblem } from './webhookPath.js';

// crd(options): the CRD's spec.conversion for a definition with converters (WH-42, WH-43), checked as
// apiextensions validation checks a WebhookClientConfig.

/** Options of a definition's `crd()`; a definition with `conversion` needs them, one without takes none. */
export interface CrdOptions {
  /** Where the API server sends ConversionReviews for this resource: a Service in the cluster, or a URL. */
  readonly conversionWebhook:
    | {
        /** The Service in front of the runner. */
        readonly service: {
          readonly namespace: string;
          readonly name: string;
          /**
           * The Service's port.
           * @default 443
           */
          readonly port?: number;
          /**
           * The path the webhook serves.
           * @default '/convert'
           */
          readonly path?: string;
        };
        readonly url?: never;
      }
    | {
        /** An `https://` URL with no query, fragment or user info. */
        readonly url: string;
        readonly service?: never;
      };
  /**
   * The PEM certificate(s) the API server trusts for the webhook's serving certificate; written base64-encoded as the
   * CRD's `caBundle`. None leaves it to whoever injects it (cert-manager's CA injector, or the runner's provisioned certificates).
   * @default none
   */
  readonly caBundle?: string;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const PEM = /^\s*-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\s*$/;
/** The webhook path controller-runtime serves conversion at, and rxkube's conversion webhook too. */
export const DEFAULT_CONVERSION_PATH = '/convert';

/**
 * The CRD of a definition with or without converters. Without, any argument is refused (the CRD stays
 * strategy None); with, `conversionWebhook` is required.
 */
export function crdFor(kind: string, base: CustomResourceDefinition, converts: boolean, options: unknown): CustomResourceDefinition {
  const where = `${kind}.crd`;
  if (!converts) {
    if (options === undefined) return base;
    throw new TypeError(`${where}: ${kind} has no conversion option, so its CRD has no conversion webhook; call crd() with no argument, got ${describeValue(options)}`);
  }
  if (options === undefined) {
    throw new TypeError(
      `${where}: ${kind} has converters (its conversion option), so its CRD needs options.conversionWebhook, where the API server sends them: crd({ conversionWebhook: { service: { namespace, name } } }) or crd({ conversionWebhook: { url: 'https://…/convert' } })`,
    );
  }
  const record = checkOptionNames(where, options, optionNames<CrdOptions>({ conversionWebhook: true, caBundle: true }));
  const clientConfig: CustomResourceConversion['webhook']['clientConfig'] = {
    ...clientConfigOf(where, record['conversionWebhook']),
    ...(record['caBundle'] === undefined ? {} : { caBundle: caBundleOf(where, record['caBundle']) }),
  };
  const conversion: CustomResourceConversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } };
  return deepFreeze(structuredClone({ ...base, spec: { ...base.spec, conversion } }));
}

function clientConfigOf(where: string, value: unknown): Pick<CustomResourceConversion['webhook']['clientConfig'], 'service' | 'url'> {
  const at = `${where}: conversionWebhook`;
  if (value === undefined) throw new TypeError(`${at} is required: { service: { namespace, name, port?, path? } } or { url }`);
  const record = checkOptionNames(at, value, optionNames<CrdOptions['conversionWebhook']>({ service: true, url: true }));
  if ((record['service'] === undefined) === (record['url'] === undefined)) {
    throw new TypeError(`${at} must have exactly one of service and url, got ${describeValue(value)}`);
  }
  return record['url'] !== undefined ? { url: urlOf(`${at}.url`, record['url']) } : { service: serviceOf(`${at}.service`, record['service']) };
}

function serviceOf(at: string, value: unknown): { namespace: string; name: string; path: string; port: number } {
  const s = checkOptionNames(at, value, optionNames<Extract<CrdOptions['conversionWebhook'], { service: unknown }>['service']>({ namespace: true, name: true, port: true, path: true }));
  const label = (field: string, pattern: RegExp, what: string): string => {
    const v = s[field];
    if (typeof v !== 'string' || v.length > 63 || !pattern.test(v)) throw new TypeError(`${at}.${field} must be ${what}, got ${describeValue(v)}`);
    return v;
  };
  const namespace = label('namespace', DNS1123_LABEL, 'a namespace name (a DNS-1123 label)');
  const name = label('name', DNS1035_LABEL, "a Service's name (a DNS-1035 label)");
  const port = s['port'] ?? 443;
  if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) throw new TypeError(`${at}.port must be an integer 1…65535, got ${describeValue(port)}`);
  const path = s['path'] ?? DEFAULT_CONVERSION_PATH;
  const problem = typeof path === 'string' ? pathProblem(path) : 'must be a string';
  if (problem !== undefined) throw new TypeError(`${at}.path ${problem} (kube-apiserver checks each segment), got ${describeValue(path)}`);
  return { namespace, name, path: path as string, port: port as number };
}

function urlOf(at: string, value: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || url.protocol !== 'https:' || url.hostname === '') throw new TypeError(`${at} must be an https:// URL, got ${describeValue(value)}`);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || /[?#]/.test(value as string)) {
    throw new TypeError(`${at} must have no user info, query or fragment (the API server refuses them), got ${describeValue(value)}`);
  }
  return value as string;
}

function caBundleOf(at: string, value: unknown): string {
  if (typeof value !== 'string' || !PEM.test(value)) {
    throw new TypeError(`${at}: caBundle must be PEM text of one or more certificates (-----BEGIN CERTIFICATE-----…), which crd() base64-encodes; got ${typeof value === 'string' ? 'a string that is not one' : describeValue(value)}`);
  }
  return Buffer.from(value, 'utf8').toString('base64');
}
