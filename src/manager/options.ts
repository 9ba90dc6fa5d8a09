import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { asyncScheduler, type Observable, type SchedulerLike } from 'rxjs';
import type { Controller } from '../controller/controller.js';
import type { ReconcileOutcome } from '../controller/types.js';
import type { Informer } from '../informer/informer.js';
import { validateOptions as validateLeaderElection, type LeaderElectionOptions } from '../leaderelection/options.js';
import type { ResourceLock } from '../leaderelection/types.js';
import { booleanOption, checkOptionNames, describeValue, functionOption, numberOption, optionNames, schedulerOption } from '../options/validate.js';
import type { Webhook } from '../admission/types.js';
import { parseBindAddress, type BindAddress } from './bindAddress.js';
import type { WebhookServerMetrics } from './webhookMetrics.js';
import { resolveServerLimits, type ManagerServerLimits, type ServerLimits } from './serverLimits.js';
import { resolveWebhookCertificates, type ResolvedWebhookCertificates, type WebhookCertificates } from './certificates/options.js';
import { checkWebhookPaths, resolveMetricsSecure, resolveWebhookAddress, WEBHOOK_TYPES, type ManagerMetricsSecure, type ResolvedMetricsSecure } from './servingOptions.js';

/**
 * What `/metrics` serves: the text and its content type. A prom-client
 * `Registry` has this shape, and so does `prometheusMetrics()` from
 * `rxkube/metrics`, whose `add…` methods the manager calls (once, on its
 * first subscription) for every controller, informer and the leader
 * election it runs, so that nothing has to be registered twice by hand.
 *
 * ## Example
 * ```ts
 * import { manager } from 'rxkube';
 * import { type ManagerMetrics } from 'rxkube/core';
 * import { Registry } from 'prom-client';
 * import type { Controller } from 'rxkube';
 * declare const c: Controller<unknown>;
 *
 * const registry: ManagerMetrics = new Registry(); // served as it is
 * manager({ controllers: [c], metrics: registry }).subscribe();
 * ```
 */
export interface ManagerMetrics {
  /** The `Content-Type` of the text, e.g. `text/plain; version=0.0.4; charset=utf-8`. */
  readonly contentType: string;
  /** The exposition text, asked for on every scrape. */
  metrics(): Promise<string>;
  /** Called once for each controller the manager runs. @default undefined */
  addController?(controller: Controller<any>): unknown;
  /** Called once for each informer the manager keeps running (the controllers' and `informers`). @default undefined */
  addInformer?(informer: Informer<any>): unknown;
  /** Called once, with the lock's name and whether this replica leads, when leader election is on. @default undefined */
  addLeaderElection?(name: string, leading$: Observable<boolean>): unknown;
  /** Called once when the manager serves `webhooks`, with what reads the webhook server's metrics (across runs). @default undefined */
  addWebhooks?(server: { metrics(): WebhookServerMetrics }): unknown;
}

/**
 * Leader election for `manager`: the lock (usually `leaseLock`),
 * this replica's identity and the timings of `leaderElection`.
 *
 * ## Example
 * ```ts
 * import { leaseLock, manager } from 'rxkube';
 * import { type ManagerLeaderElection } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * import type { Controller } from 'rxkube';
 * declare const c: Controller<unknown>;
 *
 * const leaderElection: ManagerLeaderElection = { lock: leaseLock(kc, { namespace: 'ops', name: 'my-controller' }) };
 * manager({ controllers: [c], leaderElection }).subscribe();
 * ```
 */
export interface ManagerLeaderElection {
  /** Where the record lives: `leaseLock(kc, { namespace, name })`. */
  readonly lock: ResourceLock<unknown>;
  /** This replica's identity in the lock. @default `${os.hostname()}_${crypto.randomUUID()}`, as controller-runtime */
  readonly identity?: string;
  /** @default 15_000 */
  readonly leaseDuration?: number;
  /** @default 10_000 */
  readonly renewDeadline?: number;
  /** @default 2_000 */
  readonly retryPeriod?: number;
  /** On a graceful stop, empty the lock's holder once the reconciles are done, so a standby takes over at once. @default true */
  readonly releaseOnStop?: boolean;
}

/**
 * Options of {@link manager} and {@link runManager}.
 *
 * ## Example
 * ```ts
 * import { manager, type ManagerOptions } from 'rxkube';
 * import type { Controller } from 'rxkube';
 * declare const c: Controller<unknown>;
 *
 * const opts: ManagerOptions = { controllers: [c], healthProbeBindAddress: ':8081', metricsBindAddress: '0' };
 * manager(opts).subscribe();
 * ```
 */
export interface ManagerOptions {
  /** The controllers to run (only while leading, with leader election). Required; may be empty when `informers` or `webhooks` is not. */
  readonly controllers: readonly Controller<any>[];
  /** More informers to keep running and to count in the probes, beside those the controllers read. @default [] */
  readonly informers?: readonly Informer<any>[];
  /** Run the controllers only while this replica holds the lock; standbys keep their caches warm. @default undefined (always run them) */
  readonly leaderElection?: ManagerLeaderElection;
  /** What `/metrics` serves. Without it there is no metrics server. @default undefined */
  readonly metrics?: ManagerMetrics;
  /**
   * Where `/metrics` is served (`--metrics-bind-address`); `"0"` disables it. Every interface by default, as
   * controller-runtime: Prometheus scrapes the pod IP. Anyone who reaches the pod reaches it, hence
   * `metricsSecure`.
   * @default ':8080'
   */
  readonly metricsBindAddress?: string;
  /** Serve `/metrics` over HTTPS to authenticated, authorized scrapers only (`--metrics-secure`). @default undefined (plain HTTP, to anyone) */
  readonly metricsSecure?: ManagerMetricsSecure;
  /**
   * Where `/healthz`, `/livez` and `/readyz` are served (`--health-probe-bind-address`); `"0"` disables them.
   * Every interface by default, as controller-runtime: the kubelet probes the pod IP, never its loopback.
   * @default ':8081'
   */
  readonly healthProbeBindAddress?: string;
  /**
   * Admission and conversion webhooks to serve over HTTPS (`admission.validating`, `admission.mutating`,
   * `admission.conversion`), each on its own path; two with one path are a TypeError. They are served on every
   * replica, leading or not, from the start to the end of the drain: the API server calls whichever pod the
   * Service picks, and a webhook that stops answering blocks every write its failure policy covers.
   * @default [] (no webhook server)
   */
  readonly webhooks?: readonly Webhook[];
  /**
   * Where the webhooks are served (`--webhook-bind-address`). Every interface by default, as controller-runtime:
   * the API server reaches the webhook through its Service, at the pod's IP, never on loopback.
   * @default ':9443'
   */
  readonly webhookBindAddress?: string;
  /**
   * The directory holding the webhook server's certificate and key, `tls.crt` and `tls.key`
   * (`--webhook-cert-dir`), as cert-manager and a mounted Secret lay them out. A pair rewritten there is served
   * to new connections without a restart; a missing or unusable pair at start fails the manager.
   * @default '/tmp/k8s-webhook-server/serving-certs'
   */
  readonly webhookCertDir?: string;
  /**
   * How long a synced informer's cache may go without being shown current
   * (a watch event, a bookmark or a completed list: its `currentAt`) before
   * `/healthz` fails naming it: its watch went silent, or nothing it asks
   * succeeds. A cache behind the server past the informer's own `maxLagMs`
   * fails it sooner (HI-58). kube-apiserver sends each watch a bookmark
   * about once a minute as long as etcd reports progress, which clusters
   * made by kubeadm, GKE or kubespray ask of it every 5 s; on a cluster
   * whose etcd keeps its default of 10 minutes, a quiet resource hears
   * nothing that long, so set this above 10 minutes there.
   * @default 300_000
   */
  readonly maxSilenceMs?: number;
  /**
   * How long an informer may stay without a synced cache — from its start,
   * or from losing its sync — before `/healthz` fails naming it: a first
   * list that never ends, or keeps failing. Until then only `/readyz`
   * reports it, so a slow first list does not get the pod restarted. The
   * default is five times controller-runtime's `CacheSyncTimeout` (2
   * minutes, after which its manager exits): a paged first list of 150,000
   * pods, the largest cluster Kubernetes supports, takes a few minutes even
   * when throttled by API Priority and Fairness.
   * @default 600_000
   */
  readonly maxInitialSyncMs?: number;
  /** Connections, header and body bytes and timeouts of the probe, metrics and webhook servers (HI-4…HI-7, WH-60…). @default {} (each field at its own default) */
  readonly serverLimits?: ManagerServerLimits;
  /**
   * Serving certificates provisioned in the cluster instead of read from a
   * directory: the leader keeps a CA and serving pair in a Secret, rotates it
   * and writes the CA bundle into the webhook configurations; every replica
   * serves what the Secret holds (WH-100…WH-111).
   * @default undefined (not provisioned)
   */
  readonly webhookCertificates?: WebhookCertificates;
  /** Stops the manager gracefully when it aborts (SIGTERM's job in a pod; `runManager` wires the signals). @default undefined */
  readonly signal?: AbortSignal;
  /** The clock that silence is measured on; it must be the informers' clock. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/**
 * What a running manager reports, in order:
 * - `serving`: a server listens (`probes`, `metrics`, `webhooks`): the address really bound and its actual port (when `:0` was asked for);
 * - `leadership`: this replica started or stopped leading, or saw a new leader;
 * - `reconcile`: a controller's outcome;
 * - `stopping`: a graceful stop began, and why.
 *
 * ## Example
 * ```ts
 * import { manager, type ManagerEvent } from 'rxkube';
 * import type { Controller } from 'rxkube';
 * declare const c: Controller<unknown>;
 *
 * manager({ controllers: [c] }).subscribe((e: ManagerEvent) => {
 *   if (e.type === 'serving') console.log(`${e.server} on ${e.url}`);
 * });
 * ```
 */
export type ManagerEvent =
  | {
      readonly type: 'serving';
      readonly server: 'metrics' | 'probes' | 'webhooks';
      /** The address really bound, as the system reports it: `::` or `0.0.0.0` means every interface (HI-9). */
      readonly address: string;
      readonly port: number;
      /** Where a client on this host reaches it: loopback when bound to every interface. */
      readonly url: string;
    }
  | { readonly type: 'leadership'; readonly leading: boolean; readonly leader: string | undefined }
  | { readonly type: 'reconcile'; readonly controller: string; readonly outcome: ReconcileOutcome<unknown> }
  | { readonly type: 'stopping'; readonly reason: string };

/** Leader election once checked: the candidate's options, and what the release needs. */
export type ResolvedLeaderElection = Required<Pick<ManagerLeaderElection, 'lock' | 'identity' | 'releaseOnStop'>> & {
  /** What each run's candidate is made from (never releasing on its own: the manager releases, and awaits it). */
  readonly candidate: LeaderElectionOptions;
  /** Bounds the release, as it bounds every request of the candidate. */
  readonly renewDeadlineMs: number;
};

/** Options once checked, with defaults; addresses parsed, and the options of options resolved in turn. */
export type ResolvedManagerOptions = Required<Pick<ManagerOptions, 'webhooks' | 'webhookCertDir' | 'maxSilenceMs' | 'maxInitialSyncMs' | 'scheduler'>> &
  Pick<ManagerOptions, 'metrics' | 'signal'> & {
    readonly controllers: readonly Controller<unknown>[];
    readonly informers: readonly Informer<unknown>[];
    readonly leaderElection: ResolvedLeaderElection | undefined;
    readonly metricsAt: BindAddress | undefined;
    readonly metricsSecure: ResolvedMetricsSecure | undefined;
    readonly probesAt: BindAddress | undefined;
    /** Where the webhooks are served; undefined when there are none. */
    readonly webhooksAt: BindAddress | undefined;
    readonly serverLimits: ServerLimits;
    readonly webhookCertificates: ResolvedWebhookCertificates | undefined;
  };

const NAMES = optionNames<ManagerOptions>(
  { controllers: true, informers: true, leaderElection: true, metrics: true, metricsBindAddress: true, metricsSecure: true, healthProbeBindAddress: true, webhooks: true, webhookBindAddress: true, webhookCertDir: true, webhookCertificates: true, maxSilenceMs: true, maxInitialSyncMs: true, serverLimits: true, signal: true, scheduler: true },
);
const LE_NAMES = optionNames<ManagerLeaderElection>({ lock: true, identity: true, leaseDuration: true, renewDeadline: true, retryPeriod: true, releaseOnStop: true });

function list<T>(name: string, value: unknown, looksRight: (v: Record<string, unknown>) => boolean, what: string): T[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`manager: option "${name}" must be an array, got ${describeValue(value)}`);
  value.forEach((v: unknown, i) => {
    if (typeof v !== 'object' || v === null || !looksRight(v as Record<string, unknown>)) throw new TypeError(`manager: ${name}[${i}] must be ${what}, got ${describeValue(v)}`);
  });
  return value as T[];
}

const fn = (v: Record<string, unknown>, ...names: string[]): boolean => names.every((n) => typeof v[n] === 'function');

/** Checks every option up front, so a typo or a bad address throws before anything listens or leads. */
export function resolveManagerOptions(opts: ManagerOptions): ResolvedManagerOptions {
  const o = checkOptionNames('manager', opts, NAMES);
  if (o['controllers'] === undefined) throw new TypeError('manager: option "controllers" is required (an array of controllers, possibly empty)');
  const controllers = list<Controller<unknown>>('controllers', o['controllers'], (v) => fn(v, 'subscribe', 'shutdown', 'status') && Array.isArray(v['sources']), 'a controller (from controller())');
  const informers = list<Informer<unknown>>('informers', o['informers'], (v) => fn(v, 'subscribe', 'addHandler', 'status'), 'an informer (from informer())');
  const webhooks = list<Webhook>('webhooks', o['webhooks'], (v) => WEBHOOK_TYPES.includes(v['type'] as string) && typeof v['path'] === 'string' && fn(v, 'review'), 'a webhook (from admission.validating, .mutating or .conversion)');
  checkWebhookPaths(webhooks);
  webhooks.forEach(({ timeoutSeconds: s }: { timeoutSeconds?: unknown }, i) => {
    // The builders check it too; a hand-made webhook past a Node timer would be answered 503 after 1 ms (HI-31).
    if (s !== undefined && !(Number.isInteger(s) && (s as number) >= 1 && (s as number) <= 30)) {
      throw new TypeError(`manager: option "webhooks[${i}].timeoutSeconds" must be an integer from 1 to 30 (kube-apiserver's range for an admission webhook), got ${describeValue(s)}`);
    }
  });
  if (controllers.length === 0 && informers.length === 0 && webhooks.length === 0) throw new TypeError('manager: nothing to run: "controllers", "informers" and "webhooks" are all empty');

  const metrics = o['metrics'] as ManagerMetrics | undefined;
  if (metrics !== undefined) {
    if (typeof metrics !== 'object' || metrics === null || typeof metrics.metrics !== 'function' || typeof metrics.contentType !== 'string') {
      throw new TypeError(`manager: option "metrics" must have contentType (a string) and metrics() (a promise of the text), as a prom-client Registry, got ${describeValue(metrics)}`);
    }
    for (const name of ['addController', 'addInformer', 'addLeaderElection', 'addWebhooks'] as const) functionOption('manager', `metrics.${name}`, metrics[name]);
  }
  const metricsAt = parseBindAddress('metricsBindAddress', o['metricsBindAddress'] ?? ':8080');
  if (metrics === undefined && o['metricsBindAddress'] !== undefined && metricsAt !== undefined) {
    throw new TypeError(`manager: option "metricsBindAddress" is ${describeValue(o['metricsBindAddress'])} but there is no "metrics" option to serve there`);
  }
  const probesAt = parseBindAddress('healthProbeBindAddress', o['healthProbeBindAddress'] ?? ':8081');
  if (metrics !== undefined && metricsAt !== undefined && probesAt !== undefined && metricsAt.port !== 0 && metricsAt.port === probesAt.port) {
    throw new TypeError(`manager: options "metricsBindAddress" and "healthProbeBindAddress" both use port ${metricsAt.port}`);
  }

  const webhooksAt = resolveWebhookAddress(o['webhookBindAddress'], webhooks.length > 0, [
    ['metricsBindAddress', metrics === undefined ? undefined : metricsAt],
    ['healthProbeBindAddress', probesAt],
  ]);
  const webhookCertDir = o['webhookCertDir'] ?? '/tmp/k8s-webhook-server/serving-certs';
  if (typeof webhookCertDir !== 'string' || webhookCertDir === '') throw new TypeError(`manager: option "webhookCertDir" must be a directory path, got ${describeValue(webhookCertDir)}`);

  const scheduler = schedulerOption('manager', o['scheduler'], asyncScheduler);
  if (o['webhookCertificates'] !== undefined) {
    if (webhooks.length === 0) throw new TypeError('manager: option "webhookCertificates" is given but there are no "webhooks" to serve with them');
    if (o['webhookCertDir'] !== undefined) throw new TypeError('manager: options "webhookCertDir" and "webhookCertificates" are both given: the certificates come from one or the other');
  }
  const signal = o['signal'];
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError(`manager: option "signal" must be an AbortSignal, got ${describeValue(signal)}`);
  return {
    controllers,
    informers,
    leaderElection: resolveLeaderElection(o['leaderElection']),
    metrics,
    metricsAt: metrics === undefined ? undefined : metricsAt,
    metricsSecure: resolveMetricsSecure(o['metricsSecure'], metrics !== undefined && metricsAt !== undefined),
    probesAt,
    webhooks,
    webhooksAt,
    webhookCertDir,
    maxSilenceMs: numberOption('manager', 'maxSilenceMs', o['maxSilenceMs'], 300_000, { min: 1 }),
    maxInitialSyncMs: numberOption('manager', 'maxInitialSyncMs', o['maxInitialSyncMs'], 600_000, { min: 1 }),
    serverLimits: resolveServerLimits(o['serverLimits']),
    webhookCertificates: resolveWebhookCertificates(o['webhookCertificates'], scheduler),
    signal,
    scheduler,
  };
}

function resolveLeaderElection(value: unknown): ResolvedManagerOptions['leaderElection'] {
  if (value === undefined) return undefined;
  const le = checkOptionNames('manager: leaderElection', value, LE_NAMES) as unknown as ManagerLeaderElection;
  const lock = le.lock as unknown as Record<string, unknown> | undefined;
  if (typeof lock !== 'object' || lock === null || !fn(lock, 'get', 'create', 'update', 'describe')) {
    throw new TypeError(`manager: option "leaderElection.lock" must be a lock such as leaseLock(kc, { namespace, name }), got ${describeValue(le.lock)}`);
  }
  const identity = le.identity ?? `${hostname()}_${randomUUID()}`;
  const releaseOnStop = booleanOption('manager', 'leaderElection.releaseOnStop', le.releaseOnStop, true);
  // leaderElection's own checks (identity, the timings and how they relate), with its messages, prefixed here.
  const timings = Object.fromEntries((['leaseDuration', 'renewDeadline', 'retryPeriod'] as const).flatMap((k) => (le[k] === undefined ? [] : [[k, le[k]]])));
  const candidate: LeaderElectionOptions = { lock: le.lock, identity, ...timings };
  let checked;
  try {
    checked = validateLeaderElection(candidate);
  } catch (err) {
    // Its messages read "<option>: <why>".
    const message = (err as Error).message;
    const colon = message.indexOf(': ');
    throw new TypeError(`manager: option "leaderElection.${message.slice(0, colon)}" ${message.slice(colon + 2)}`);
  }
  return { candidate, lock: le.lock, identity, releaseOnStop, renewDeadlineMs: checked.renewDeadline };
}
