import type { KubeConfig } from '@kubernetes/client-node';
import type { SchedulerLike } from 'rxjs';
import type { CustomResource } from '../../crd/customResource.js';
import { checkOptionNames, describeValue, numberOption } from '../../options/validate.js';

/**
 * Serving certificates the runner provisions for its webhooks, instead of
 * reading them from `webhookCertDir`: the leader generates a CA and a
 * serving certificate for the webhook Service's DNS names, keeps them in a
 * `kubernetes.io/tls` Secret, writes the CA bundle into the webhook
 * configurations (and the conversion blocks of `customResources`) and
 * rotates before expiry; every replica serves what the Secret holds
 * (docs/semantics.md WH-100…WH-111).
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
  /** The Secret that holds the pair. @default { namespace: service.namespace, name: `${name}-webhook-tls` } */
  readonly secret?: { readonly namespace: string; readonly name: string };
  /** Custom resources whose CRD's `spec.conversion.webhook.clientConfig.caBundle` is written too (the CRD named `<plural>.<group>`). @default [] */
  readonly customResources?: readonly Pick<CustomResource<any, any>, 'group' | 'plural'>[];
  /** How long a generated CA and serving certificate are valid, in ms. @default 365 days */
  readonly validityMs?: number;
  /** Rotate when the serving certificate has this little left, in ms; less than `validityMs`. @default 90 days, or a quarter of `validityMs` when that is less */
  readonly rotateBeforeMs?: number;
}

/** The options once checked (internal). */
export interface ResolvedWebhookCertificates {
  readonly kubeConfig: KubeConfig;
  readonly name: string;
  readonly secret: { readonly namespace: string; readonly name: string };
  readonly dnsNames: readonly string[];
  /** The CRDs' names, `<plural>.<group>`. */
  readonly crdNames: readonly string[];
  readonly validityMs: number;
  readonly rotateBeforeMs: number;
  /** The clock of decisions and timers: the manager's. */
  readonly scheduler: SchedulerLike;
}

const DAY_MS = 86_400_000;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const W = 'manager: option "webhookCertificates';

function nameOption(path: string, value: unknown, label: boolean): string {
  const ok = typeof value === 'string' && (label ? value.length <= 63 && LABEL.test(value) : value.length <= 253 && SUBDOMAIN.test(value));
  if (!ok) throw new TypeError(`${W}.${path}" must be ${label ? 'a DNS label (RFC 1123)' : 'a DNS subdomain (RFC 1123)'}, got ${describeValue(value)}`);
  return value;
}

function namespacedName(path: string, value: unknown, nameIsLabel: boolean): { namespace: string; name: string } {
  const o = checkOptionNames(`${W}.${path}"`, value, ['namespace', 'name']);
  return { namespace: nameOption(`${path}.namespace`, o['namespace'], true), name: nameOption(`${path}.name`, o['name'], nameIsLabel) };
}

/**
 * Checks `webhookCertificates` up front (internal): a bad option is a
 * TypeError naming it, before anything is read or written.
 */
export function resolveWebhookCertificates(value: unknown, scheduler: SchedulerLike): ResolvedWebhookCertificates | undefined {
  if (value === undefined) return undefined;
  const o = checkOptionNames(`${W}"`, value, ['kubeConfig', 'name', 'service', 'secret', 'customResources', 'validityMs', 'rotateBeforeMs']);
  const kc = o['kubeConfig'] as KubeConfig | undefined;
  if (typeof kc !== 'object' || kc === null || typeof kc.getCurrentCluster !== 'function') {
    throw new TypeError(`${W}.kubeConfig" must be a KubeConfig, got ${describeValue(kc)}`);
  }
  const name = nameOption('name', o['name'], false);
  const service = namespacedName('service', o['service'], true);
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
  const { name: svc, namespace: ns } = service;
  return {
    kubeConfig: kc,
    name,
    secret,
    dnsNames: [svc, `${svc}.${ns}`, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`],
    crdNames: [...new Set(crdNames)],
    validityMs,
    rotateBeforeMs,
    scheduler,
  };
}
