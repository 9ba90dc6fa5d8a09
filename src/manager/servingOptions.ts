// The options of what the runner serves beside its probes: secure metrics and the webhook server's address and paths.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Webhook } from '../admission/types.js';
import { checkOptionNames, describeValue, numberOption, optionNames } from '../options/validate.js';
import { parseBindAddress, type BindAddress } from './bindAddress.js';

/**
 * Secure metrics (`--metrics-secure`): `/metrics` over HTTPS, each request's
 * bearer token authenticated with a TokenReview and the user authorized with
 * a SubjectAccessReview for `get` on the non-resource URL `/metrics`, as
 * kubebuilder's scaffold serves it. The manager's identity needs `create` on
 * `tokenreviews` and `subjectaccessreviews` (the `system:auth-delegator`
 * ClusterRole); Prometheus needs `get` on the non-resource URL `/metrics`.
 *
 * ## Example
 * ```ts
 * import { loadKubeConfig, manager, type Controller } from 'rxkube';
 * import type { ManagerMetricsSecure } from 'rxkube/core';
 * import { prometheusMetrics } from 'rxkube/metrics';
 * declare const c: Controller<unknown>;
 *
 * const metricsSecure: ManagerMetricsSecure = { kubeConfig: loadKubeConfig(), certDir: '/tmp/k8s-metrics-server/metrics-certs' };
 * manager({ controllers: [c], metrics: prometheusMetrics(), metricsBindAddress: ':8443', metricsSecure }).subscribe();
 * ```
 */
export interface ManagerMetricsSecure {
  /** Where the TokenReviews and SubjectAccessReviews are sent, with the manager's own credentials. */
  readonly kubeConfig: KubeConfig;
  /**
   * A directory holding `tls.crt` and `tls.key` for the metrics server, reloaded when rewritten as
   * `webhookCertDir` is. Without it a self-signed certificate is made in memory at start, as controller-runtime
   * does; Prometheus then scrapes with `insecure_skip_verify` (the token still authenticates the scraper).
   * @default undefined (a self-signed certificate)
   */
  readonly certDir?: string;
  /**
   * How long a token's TokenReview and a user's SubjectAccessReview answer are kept, so a scrape every few seconds
   * costs the API server nothing most of the time. A refusal is kept 30 s at most (controller-runtime's
   * authorizer keeps allows 5 minutes and denials 30 s, and authentications 1 minute).
   * @default 60_000
   */
  readonly cacheTtlMs?: number;
  /** Tokens, and users, kept at most each: the oldest goes first. @default 1_024 */
  readonly cacheSize?: number;
  /** How long each TokenReview and SubjectAccessReview may take before the scrape is answered 500 (controller-runtime's TokenReview timeout). @default 10_000 */
  readonly reviewTimeoutMs?: number;
}


/** `metricsSecure` once checked, each field set. */
export type ResolvedMetricsSecure = Required<Omit<ManagerMetricsSecure, 'certDir'>> & { readonly certDir: string | undefined };

const SECURE_NAMES = optionNames<ManagerMetricsSecure>({ kubeConfig: true, certDir: true, cacheTtlMs: true, cacheSize: true, reviewTimeoutMs: true });

/** Checks `metricsSecure` up front: only where metrics are served, with a KubeConfig that has a cluster. */
export function resolveMetricsSecure(value: unknown, served: boolean): ResolvedMetricsSecure | undefined {
  if (value === undefined) return undefined;
  const o = checkOptionNames('manager: metricsSecure', value, SECURE_NAMES);
  if (!served) throw new TypeError('manager: option "metricsSecure" is given but no metrics are served ("metrics" missing or "metricsBindAddress" is "0")');
  const kc = o['kubeConfig'] as KubeConfig | undefined;
  if (typeof kc !== 'object' || kc === null || typeof kc.getCurrentCluster !== 'function' || kc.getCurrentCluster() === null) {
    throw new TypeError(`manager: option "metricsSecure.kubeConfig" must be a KubeConfig with a current cluster (loadKubeConfig()), got ${describeValue(kc)}`);
  }
  const certDir = o['certDir'];
  if (certDir !== undefined && (typeof certDir !== 'string' || certDir === '')) throw new TypeError(`manager: option "metricsSecure.certDir" must be a directory path, got ${describeValue(certDir)}`);
  return {
    kubeConfig: kc,
    certDir,
    cacheTtlMs: numberOption('manager', 'metricsSecure.cacheTtlMs', o['cacheTtlMs'], 60_000, { min: 0, integer: true }),
    cacheSize: numberOption('manager', 'metricsSecure.cacheSize', o['cacheSize'], 1_024, { min: 1, integer: true }),
    reviewTimeoutMs: numberOption('manager', 'metricsSecure.reviewTimeoutMs', o['reviewTimeoutMs'], 10_000, { min: 1, integer: true }),
  };
}

/** What a webhook's `type` may be. */
export const WEBHOOK_TYPES: readonly unknown[] = ['validating', 'mutating', 'conversion'];

/** Each webhook path once, each an absolute path: the server routes by exact path. */
export function checkWebhookPaths(webhooks: readonly Webhook[]): void {
  const seen = new Map<string, number>();
  webhooks.forEach((w, i) => {
    if (!w.path.startsWith('/')) throw new TypeError(`manager: webhooks[${i}] has path ${describeValue(w.path)}; a path starts with "/"`);
    const before = seen.get(w.path);
    if (before !== undefined) throw new TypeError(`manager: webhooks[${before}] and webhooks[${i}] both have path ${describeValue(w.path)}; give one of them another "path"`);
    seen.set(w.path, i);
  });
}

/** The webhook server's address: only with webhooks, never off when there are some, never on another server's port. */
export function resolveWebhookAddress(value: unknown, serving: boolean, others: readonly [string, BindAddress | undefined][]): BindAddress | undefined {
  const at = parseBindAddress('webhookBindAddress', value ?? ':9443');
  if (!serving) {
    if (value !== undefined && at !== undefined) throw new TypeError(`manager: option "webhookBindAddress" is ${describeValue(value)} but there are no "webhooks" to serve there`);
    return undefined;
  }
  if (at === undefined) throw new TypeError('manager: option "webhookBindAddress" is "0" but "webhooks" are given; the API server could not call them');
  for (const [name, other] of others) {
    if (other !== undefined && at.port !== 0 && other.port === at.port) throw new TypeError(`manager: options "webhookBindAddress" and "${name}" both use port ${at.port}`);
  }
  return at;
}

