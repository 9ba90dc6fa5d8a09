import { isIP } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import type { SchedulerLike } from 'rxjs';
import type { CustomResource } from '../../crd/customResource.js';
import { checkOptionNames, describeValue, numberOption, optionNames } from '../../options/validate.js';
import { printable } from '../../errors/printable.js';

/**
 * Serving certificates the runner provisions for its webhooks, instead of
 * reading them from `webhookCertDir`: the leader generates a CA and a
 * serving certificate for the webhook Service's DNS names, keeps them (and the CA's key) in a
 * `kubernetes.io/tls` Secret, writes the CA bundle into the webhook
 * configurations (and the conversion blocks of `customResources`) and
 * rotates before expiry; every replica serves what the Secret holds
 * (docs/semantics.md WH-100…WH-116).
 *
 * The kubeconfig's identity needs `get`, `list`, `watch`, `create` and
 * `update` on the Secret's namespace's `secrets`, and `get`, `list`,
 * `watch`, `update` on `validatingwebhookconfigurations`,
 * `mutatingwebhookconfigurations` and (with `customResources`)
 * `customresourcedefinitions`.
 *
 * ## Example
 * ```ts
 * import { manager } from 'rxkube';
 * import { type WebhookCertificates } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import type { Controller } from 'rxkube';
 * declare const kc: KubeConfig;
 * declare const c: Controller<unknown>;
 *
 * const webhookCertificates: WebhookCertificates = { kubeConfig: kc, name: 'website-operator', service: { namespace: 'ops', name: 'website-webhooks' } };
 * manager({ controllers: [c], webhookCertificates }).subscribe();
 * ```
 */
export interface WebhookCertificates {
  /** Where the Secret, the webhook configurations and the CRDs are read and written. */
  readonly kubeConfig: KubeConfig;
  /** The `metadata.name` of the ValidatingWebhookConfiguration and MutatingWebhookConfiguration (whichever exist), as `webhookManifests` names them. */
  readonly name: string;
  /** The webhook Service: the certificate is for `<name>`, `<name>.<namespace>`, `<name>.<namespace>.svc` and `<name>.<namespace>.svc.cluster.local`. */
  readonly service: { readonly namespace: string; readonly name: string };
  /**
   * More names the serving certificate is for, beside the Service's: DNS
   * names or IP addresses (`['127.0.0.1']` for webhooks reached by `url` in
   * development or in tests). A pair for another set of names is issued anew.
   * @default []
   */
  readonly hosts?: readonly string[];
  /** The Secret that holds the pair. @default { namespace: service.namespace, name: `${name}-webhook-tls` } */
  readonly secret?: { readonly namespace: string; readonly name: string };
  /** Custom resources whose CRD's `spec.conversion.webhook.clientConfig.caBundle` is written too (the CRD named `<plural>.<group>`). @default [] */
  readonly customResources?: readonly Pick<CustomResource<any, any>, 'group' | 'plural'>[];
  /** How long a generated serving certificate is valid, in ms. @default 365 days */
  readonly validityMs?: number;
  /**
   * How long a generated CA is valid, in ms: at least twice `validityMs`, since
   * serving certificates rotate under one CA, and the CA is rotated once less
   * than `validityMs` of it is left.
   * @default 10 years, or twice `validityMs` when that is more
   */
  readonly caValidityMs?: number;
  /**
   * How long a new CA is in every bundle before a serving certificate it signed
   * is served, in ms: the time API servers get to see the new bundle through
   * their own watches (WH-114).
   * @default 5 minutes
   */
  readonly caSettleMs?: number;
  /** Rotate when the serving certificate has this little left, in ms; less than `validityMs`. @default 90 days, or a quarter of `validityMs` when that is less */
  readonly rotateBeforeMs?: number;
}

/** The options once checked (internal): `service` and `hosts` become the certificate's names, `customResources` the CRDs'. */
export type ResolvedWebhookCertificates = Required<
  Pick<WebhookCertificates, 'kubeConfig' | 'name' | 'secret' | 'validityMs' | 'caValidityMs' | 'caSettleMs' | 'rotateBeforeMs'>
> & {
  readonly dnsNames: readonly string[];
  /** IP addresses of `hosts`, in the form Node prints them. */
  readonly ipAddresses: readonly string[];
  /** The CRDs' names, `<plural>.<group>`. */
  readonly crdNames: readonly string[];
  /** The clock of decisions and timers: the manager's. */
  readonly scheduler: SchedulerLike;
};

const DAY_MS = 86_400_000;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const W = 'manager: option "webhookCertificates';

function nameOption(path: string, value: unknown, label: boolean): string {
  const ok = typeof value === 'string' && (label ? value.length <= 63 && LABEL.test(value) : value.length <= 253 && SUBDOMAIN.test(value));
  if (!ok) throw new TypeError(`${W}.${path}" must be ${label ? 'a DNS label (RFC 1123)' : 'a DNS subdomain (RFC 1123)'}, got ${describeValue(value)}`);
  return value;
}

/** An IP address as Node prints it (IPv6 shortest, lower case), so a certificate's form and an option's compare equal (internal). */
export const canonicalIp = (ip: string): string => (ip.includes(':') ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip);

/** Splits `hosts` into DNS names and IP addresses (canonical, as a certificate is read back). */
function hostsOption(value: unknown): { dns: string[]; ips: string[] } {
  if (value === undefined) return { dns: [], ips: [] };
  if (!Array.isArray(value)) throw new TypeError(`${W}.hosts" must be an array of DNS names or IP addresses, got ${describeValue(value)}`);
  const dns: string[] = [];
  const ips: string[] = [];
  for (const [i, h] of (value as unknown[]).entries()) {
    // A zone (`fe80::1%eth0`) names an interface of this host: no certificate can carry it.
    if (typeof h === 'string' && isIP(h) !== 0 && !h.includes('%')) ips.push(canonicalIp(h));
    // A name whose last label is all digits would read as a mistyped IPv4 address, not a host (RFC 1123 2.1).
    else if (typeof h === 'string' && h.length <= 253 && SUBDOMAIN.test(h) && !/(^|\.)[0-9]+$/.test(h)) dns.push(h);
    else throw new TypeError(`${W}.hosts[${i}]" must be a DNS name (RFC 1123 subdomain) or an IP address, got ${printable(describeValue(h))}`);
  }
  return { dns, ips };
}

function namespacedName(path: string, value: unknown, nameIsLabel: boolean): { namespace: string; name: string } {
  const o = checkOptionNames(`${W}.${path}"`, value, optionNames<NonNullable<WebhookCertificates['secret']> & WebhookCertificates['service']>({ namespace: true, name: true }));
  return { namespace: nameOption(`${path}.namespace`, o['namespace'], true), name: nameOption(`${path}.name`, o['name'], nameIsLabel) };
}

/**
 * Checks `webhookCertificates` up front (internal): a bad option is a
 * TypeError naming it, before anything is read or written.
 */
export function resolveWebhookCertificates(value: unknown, scheduler: SchedulerLike): ResolvedWebhookCertificates | undefined {
  if (value === undefined) return undefined;
  const o = checkOptionNames(`${W}"`, value, optionNames<WebhookCertificates>({ kubeConfig: true, name: true, service: true, hosts: true, secret: true, customResources: true, validityMs: true, rotateBeforeMs: true, caValidityMs: true, caSettleMs: true }));
  const kc = o['kubeConfig'] as KubeConfig | undefined;
  if (typeof kc !== 'object' || kc === null || typeof kc.getCurrentCluster !== 'function') {
    throw new TypeError(`${W}.kubeConfig" must be a KubeConfig, got ${describeValue(kc)}`);
  }
  const name = nameOption('name', o['name'], false);
  const service = namespacedName('service', o['service'], true);
  const hosts = hostsOption(o['hosts']);
  const secret = o['secret'] === undefined ? { namespace: service.namespace, name: nameOption('name', `${name}-webhook-tls`, false) } : namespacedName('secret', o['secret'], false);
  const crs = o['customResources'] ?? [];
  if (!Array.isArray(crs)) throw new TypeError(`${W}.customResources" must be an array of customResource definitions, got ${describeValue(crs)}`);
  const crdNames = (crs as unknown[]).map((cr, i) => {
    const r = cr as { group?: unknown; plural?: unknown } | null;
    if (typeof r !== 'object' || r === null || typeof r.group !== 'string' || typeof r.plural !== 'string') {
      throw new TypeError(`${W}.customResources[${i}]" must be a customResource definition, got ${describeValue(cr)}`);
    }
    return nameOption(`customResources[${i}]`, `${r.plural}.${r.group}`, false);
  });
  const validityMs = numberOption('manager', 'webhookCertificates.validityMs', o['validityMs'], 365 * DAY_MS, { min: 60_000 });
  const rotateBeforeMs = numberOption('manager', 'webhookCertificates.rotateBeforeMs', o['rotateBeforeMs'], Math.min(90 * DAY_MS, Math.floor(validityMs / 4)), { min: 0 });
  if (rotateBeforeMs >= validityMs) {
    throw new TypeError(`${W}.rotateBeforeMs" (${rotateBeforeMs}) must be less than validityMs (${validityMs}), or every new certificate would be rotated at once`);
  }
  const caValidityMs = numberOption('manager', 'webhookCertificates.caValidityMs', o['caValidityMs'], Math.max(3650 * DAY_MS, 2 * validityMs), { min: 60_000 });
  if (caValidityMs < 2 * validityMs) {
    throw new TypeError(`${W}.caValidityMs" (${caValidityMs}) must be at least twice validityMs (${validityMs}): the CA is rotated once less than validityMs of it is left`);
  }
  const caSettleMs = numberOption('manager', 'webhookCertificates.caSettleMs', o['caSettleMs'], 300_000, { min: 0 });
  const { name: svc, namespace: ns } = service;
  return {
    kubeConfig: kc,
    name,
    secret,
    dnsNames: [...new Set([svc, `${svc}.${ns}`, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`, ...hosts.dns])],
    ipAddresses: [...new Set(hosts.ips)],
    crdNames: [...new Set(crdNames)],
    validityMs,
    caValidityMs,
    caSettleMs,
    rotateBeforeMs,
    scheduler,
  };
}
