import type { KubeConfig } from '@kubernetes/client-node';
import { informer } from '../informer/informer.js';
import type { ControllerSource, ErrorPolicy, ReconcileOutcome, Reconciler } from '../controller/types.js';
import { reportTo } from '../errors/reportTo.js';
import { kubeSource } from '../sources/kubeSource.js';
import type { ResourceRef } from '../sources/types.js';
import { metaNamespaceKey } from '../store/keys.js';
import type { KubeObject } from '../store/types.js';
import { checkOptionNames, numberOption, describeValue } from '../options/validate.js';
import { checkIdentity, shardLabels, type ShardLabels } from './labels.js';
import { checkOwns, type ShardedOwns, type ShardingEvent } from './sharderOptions.js';
import type { ResolvedOwnerOptions } from '../operators/ownerKeys.js';

/**
 * What a sharded controller replica emits.
 * - `member`: this replica became a member (its Lease is held) or stopped
 *   being one; it reconciles only while a member.
 * - `sharder`: this replica started or stopped running the sharder.
 * - `sharding`: what the sharder did, while this replica runs it.
 * - `outcome`: one reconcile of this replica's share.
 * - `released`: this replica let go of a drained object, after its last
 *   reconcile ended.
 *
 * ## Example
 * ```ts
 * import type { ShardEvent } from 'rxkube/core';
 *
 * const line = (e: ShardEvent<unknown>) => (e.type === 'outcome' ? `${e.outcome.type} ${e.outcome.key}` : e.type);
 * ```
 */
export type ShardEvent<T> =
  | { readonly type: 'member'; readonly member: boolean }
  | { readonly type: 'sharder'; readonly leading: boolean }
  | { readonly type: 'sharding'; readonly event: ShardingEvent }
  | { readonly type: 'outcome'; readonly outcome: ReconcileOutcome<T> }
  | { readonly type: 'released'; readonly key: string };

/**
 * Options of {@link shardedController}.
 *
 * ## Example
 * ```ts
 * import { shardedController, type ShardedControllerOptions } from 'rxkube';
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const opts: ShardedControllerOptions<V1ConfigMap> = {
 *   kc, resource: 'v1/configmaps', controller: 'checker', identity: 'replica-a', leaseNamespace: 'shards',
 *   reconcile: async (cm) => console.log(cm.metadata?.name),
 * };
 * ```
 */
export interface ShardedControllerOptions<T extends KubeObject = KubeObject> {
  /** The cluster. */
  readonly kc: KubeConfig;
  /** The sharded resource, as `kubeSource` takes it. */
  readonly resource: ResourceRef;
  /** Only objects of this namespace. @default undefined (every namespace) */
  readonly namespace?: string;
  /** The controller's name, the same on every replica; it names the labels and the Leases. A label name. */
  readonly controller: string;
  /** This replica's identity, unique among the replicas and stable across its restarts if possible (a pod name). A DNS label. */
  readonly identity: string;
  /** Where the members' Leases and the sharder's election Lease live. */
  readonly leaseNamespace: string;
  /** Reconciles one object of this replica's share. Its `ctx.signal` aborts when the replica stops being a member. */
  readonly reconcile: Reconciler<T>;
  /** What happens after a failed reconcile (see `controller`). @default () => 'backoff' */
  readonly errorPolicy?: ErrorPolicy<T>;
  /** Reconciles at once on this replica. @default 1 */
  readonly concurrency?: number;
  /** Every object is reconciled again this many ms after its last reconcile; 0 never. @default 0 */
  readonly resyncPeriod?: number;
  /** How long a replica that stops waits for reconciles in flight. @default 30_000 */
  readonly shutdownTimeoutMs?: number;
  /**
   * Builds this replica's informer over its share, given the label selector
   * `shard.rxkube.io/<controller>=<identity>`; called again on every new
   * membership term. Build it with the selector so the API server filters.
   * @default (labelSelector) => informer(kubeSource(kc, resource, { namespace, labelSelector }))
   */
  readonly source?: (labelSelector: string) => ControllerSource<T>;
  /** The key an object is placed on the ring by; `ownerRingKey` (in `rxkube/core`) keeps owned objects with their owner. @default metaNamespaceKey */
  readonly ringKey?: (obj: KubeObject) => string;
  /**
   * Resources the sharded objects own: the sharder gives each owned object
   * its owner's shard label, and this replica's controller watches them
   * through the same label selector, each change enqueuing the owner (as
   * `owns` of `controller`).
   * @default []
   */
  readonly owns?: readonly ShardedOwns[];
  /** Ring points per member. @default 1_000 */
  readonly virtualNodes?: number;
  /** Label writes the sharder has in flight at once. @default 8 */
  readonly sharderConcurrency?: number;
  /** Lease duration of the members and of the sharder's election, in ms. @default 15_000 */
  readonly leaseDuration?: number;
  /** Renew deadline of both, in ms; less than `leaseDuration`. @default 10_000 */
  readonly renewDeadline?: number;
  /** Retry period of both, in ms; less than `renewDeadline / 1.2`. @default 2_000 */
  readonly retryPeriod?: number;
  /** Milliseconds each write may take. @default 10_000 */
  readonly requestTimeoutMs?: number;
  /**
   * Leaves gracefully when it aborts (as unsubscribing does), then completes the events, once the member and
   * sharder Leases were released: wait for that completion before the process exits.
   * @default undefined
   */
  readonly signal?: AbortSignal;
  /** Receives every error: Lease and label writes, informers, the controller's own. @default undefined (reportError) */
  readonly onError?: (err: Error) => void;
}

/** Options after the checks, with defaults applied. */
export interface ResolvedShardedOptions<T extends KubeObject> {
  readonly kc: KubeConfig;
  readonly resource: ResourceRef;
  readonly namespace: string | undefined;
  readonly controller: string;
  readonly identity: string;
  readonly leaseNamespace: string;
  readonly labels: ShardLabels;
  readonly reconcile: Reconciler<T>;
  readonly errorPolicy: ErrorPolicy<T> | undefined;
  readonly concurrency: number;
  readonly resyncPeriod: number;
  readonly shutdownTimeoutMs: number;
  readonly source: (labelSelector: string) => ControllerSource<T>;
  readonly ringKey: (obj: KubeObject) => string;
  readonly owns: readonly (ShardedOwns & { readonly owner: ResolvedOwnerOptions; readonly name: string })[];
  readonly virtualNodes: number;
  readonly sharderConcurrency: number;
  readonly leaseDuration: number;
  readonly renewDeadline: number;
  readonly retryPeriod: number;
  readonly requestTimeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly onError: ((err: Error) => void) | undefined;
  /** onError, else reportError. */
  readonly report: (err: unknown) => void;
}

const NAMES = [
  'kc', 'resource', 'namespace', 'controller', 'identity', 'leaseNamespace', 'reconcile', 'errorPolicy', 'concurrency', 'resyncPeriod',
  'shutdownTimeoutMs', 'source', 'ringKey', 'owns', 'virtualNodes', 'sharderConcurrency', 'leaseDuration', 'renewDeadline', 'retryPeriod',
  'requestTimeoutMs', 'signal', 'onError',
];

/** Checks every option up front, naming the bad one and its value. */
export function resolveShardedOptions<T extends KubeObject>(opts: ShardedControllerOptions<T>): ResolvedShardedOptions<T> {
  const o = checkOptionNames('shardedController', opts, NAMES) as unknown as ShardedControllerOptions<T>;
  if (o.kc === null || typeof o.kc !== 'object' || typeof o.kc.getCurrentCluster !== 'function') throw new TypeError(`kc: expected a KubeConfig, got ${describeValue(o.kc)}`);
  const labels = shardLabels(o.controller);
  const identity = checkIdentity(o.identity);
  if (typeof o.leaseNamespace !== 'string' || o.leaseNamespace === '') throw new TypeError(`leaseNamespace: expected a non-empty string, got ${describeValue(o.leaseNamespace)}`);
  if (o.namespace !== undefined && (typeof o.namespace !== 'string' || o.namespace === '')) throw new TypeError(`namespace: expected a non-empty string, got ${describeValue(o.namespace)}`);
  if (typeof o.reconcile !== 'function') throw new TypeError(`reconcile: expected a function, got ${describeValue(o.reconcile)}`);
  for (const name of ['errorPolicy', 'source', 'ringKey', 'onError'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'function') throw new TypeError(`${name}: expected a function, got ${describeValue(o[name])}`);
  }
  const leaseDuration = numberOption('shardedController', 'leaseDuration', o.leaseDuration, 15_000, { min: 1 });
  const renewDeadline = numberOption('shardedController', 'renewDeadline', o.renewDeadline, 10_000, { min: 1 });
  const retryPeriod = numberOption('shardedController', 'retryPeriod', o.retryPeriod, 2_000, { min: 1 });
  if (renewDeadline >= leaseDuration) throw new TypeError(`renewDeadline: must be less than leaseDuration (${leaseDuration} ms), got ${renewDeadline} ms`);
  if (renewDeadline <= 1.2 * retryPeriod) throw new TypeError(`retryPeriod: must be less than renewDeadline / 1.2 (${renewDeadline / 1.2} ms), got ${retryPeriod} ms`);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw new TypeError(`signal: expected an AbortSignal, got ${describeValue(o.signal)}`);
  const onError = o.onError;
  const report = (err: unknown): void => reportTo(onError, err);
  const namespace = o.namespace;
  const source =
    o.source ??
    ((labelSelector: string) =>
      informer(kubeSource(o.kc, o.resource as never, { labelSelector, ...(namespace !== undefined && { namespace }) }), {
        onError: report,
      }) as unknown as ControllerSource<T>);
  return {
    kc: o.kc,
    resource: o.resource,
    namespace,
    controller: o.controller,
    identity,
    leaseNamespace: o.leaseNamespace,
    labels,
    reconcile: o.reconcile,
    errorPolicy: o.errorPolicy,
    concurrency: numberOption('shardedController', 'concurrency', o.concurrency, 1, { min: 1, integer: true }),
    resyncPeriod: numberOption('shardedController', 'resyncPeriod', o.resyncPeriod, 0),
    shutdownTimeoutMs: numberOption('shardedController', 'shutdownTimeoutMs', o.shutdownTimeoutMs, 30_000),
    source,
    ringKey: o.ringKey ?? ((obj: KubeObject) => metaNamespaceKey(obj)),
    owns: checkOwns('shardedController', o.owns),
    virtualNodes: numberOption('shardedController', 'virtualNodes', o.virtualNodes, 1_000, { min: 1, integer: true }),
    sharderConcurrency: numberOption('shardedController', 'sharderConcurrency', o.sharderConcurrency, 8, { min: 1, integer: true }),
    leaseDuration,
    renewDeadline,
    retryPeriod,
    requestTimeoutMs: numberOption('shardedController', 'requestTimeoutMs', o.requestTimeoutMs, 10_000, { min: 1 }),
    signal: o.signal,
    onError,
    report,
  };
}
