import type { KubeConfig } from '@kubernetes/client-node';
import type { ControllerOptions, ControllerSource, ReconcileOutcome } from '../controller/types.js';
import { reportTo } from '../errors/reportTo.js';
import type { ResourceRef } from '../sources/types.js';
import type { KubeObject } from '../store/types.js';
import { checkOptionNames, describeValue, optionNames } from '../options/validate.js';
import { CONTROLLER_OPTIONS } from '../controller/options.js';
import { checkSharding, type ShardedOwns, type ShardingEvent } from './sharderOptions.js';

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
 * Options of {@link shardedController}: those of {@link controller} (less
 * the sources, the name and the clock, which the sharded controller makes),
 * passed to each membership term's controller, and the sharding's own.
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
 *   reconcileTimeoutMs: 60_000,
 * };
 * ```
 */
export type ShardedControllerOptions<T extends KubeObject = KubeObject> = Omit<ControllerOptions<T>, 'for' | 'owns' | 'name' | 'scheduler' | 'signal'> & {
  /** The cluster. */
  readonly kc: KubeConfig;
  /** The sharded resource, as `kubeSource` takes it. */
  readonly resource: ResourceRef;
  /** Only objects of this namespace. @default undefined (every namespace) */
  readonly namespace?: string;
  /** The controller's name, the same on every replica; it names the labels, the Leases and the controller. A label name. */
  readonly controller: string;
  /** This replica's identity, unique among the replicas and stable across its restarts if possible (a pod name). A DNS label. */
  readonly identity: string;
  /** Where the members' Leases and the sharder's election Lease live. */
  readonly leaseNamespace: string;
  /**
   * Builds the informer over this replica's share, given the label selector
   * `shard.rxkube.io/<controller>=<identity>`: once at the call (for the
   * first membership term, so a bad option fails there), then on every new
   * term. Build it with the selector so the API server filters.
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
  /** Ring points per member, from 1 to 100000. @default 1_000 */
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
};

/**
 * The numbers a sharded controller checks besides the lease timings. concurrency is the term's controller's, which
 * checks it again; it is checked here too so that a bad one is named as shardedController's option, where the user
 * wrote it, and fails before the options checked after it.
 */
const NUMBERS = ['retryPeriod', 'requestTimeoutMs', 'virtualNodes', 'concurrency', 'sharderConcurrency'] as const;

/** What the sharding itself needs, checked, with defaults applied; the controller's options are checked by `controller()`. */
export type ShardedSettings = ReturnType<typeof checkSharding<(typeof NUMBERS)[number]>> & {
  /** onError, else reportError. */
  readonly report: (err: unknown) => void;
};

// The controller's options a replica passes through (for, owns, name and scheduler are its own; signal is
// re-declared), and the sharding's.
const { for: _for, owns: _owns, name: _name, scheduler: _scheduler, signal: _signal, ...CONTROLLER_PASSED } = CONTROLLER_OPTIONS;
const NAMES = optionNames<ShardedControllerOptions>({
  ...CONTROLLER_PASSED,
  kc: true, resource: true, namespace: true, controller: true, identity: true, leaseNamespace: true, source: true, ringKey: true, owns: true,
  virtualNodes: true, sharderConcurrency: true, leaseDuration: true, renewDeadline: true, retryPeriod: true, requestTimeoutMs: true, signal: true,
});

/** Checks the sharding's options up front, naming the bad one and its value. */
export function checkShardedOptions<T extends KubeObject>(opts: ShardedControllerOptions<T>): ShardedSettings {
  const o = checkOptionNames('shardedController', opts, NAMES) as unknown as ShardedControllerOptions<T>;
  const checked = checkSharding('shardedController', o as ShardedControllerOptions, ['errorPolicy', 'source', 'ringKey'], NUMBERS);
  // The term's controller gets these wrapped (a drained key is handed over instead), so it cannot check them itself.
  if (typeof o.reconcile !== 'function') throw new TypeError(`shardedController: option "reconcile" must be a function, got ${describeValue(o.reconcile)}`);
  const { renewDeadline, retryPeriod } = checked;
  if (renewDeadline <= 1.2 * retryPeriod) throw new TypeError(`retryPeriod: must be less than renewDeadline / 1.2 (${renewDeadline / 1.2} ms), got ${retryPeriod} ms`);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw new TypeError(`signal: expected an AbortSignal, got ${describeValue(o.signal)}`);
  const onError = o.onError;
  return { ...checked, report: (err: unknown): void => reportTo(onError, err) };
}
