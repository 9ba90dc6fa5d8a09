import type { KubeConfig } from '@kubernetes/client-node';
import { asyncScheduler, type Observable } from 'rxjs';
import { informer } from '../informer/informer.js';
import { kubeSource } from '../sources/kubeSource.js';
import type { ResourceRef } from '../sources/types.js';
import { metaNamespaceKey } from '../store/keys.js';
import type { KubeObject } from '../store/types.js';
import { ownerPointers, resolveOwnerOptions, type OwnerKeysOptions, type ResolvedOwnerOptions } from '../operators/ownerKeys.js';
import type { ControllerOptions } from '../controller/types.js';
import type { Informer } from '../informer/types.js';
import { checkOptionNames, describeValue, functionOption, numberOption, optionNames, schedulerOption } from '../options/validate.js';
import { checkIdentity, shardLabels, type ShardLabels } from './labels.js';
import { shardMembers, type ShardMembers } from './members.js';
import { MAX_VIRTUAL_NODES } from './ring.js';

/**
 * Objects owned by the sharded objects, which must live on the same replica
 * as their owner: the sharder gives each the shard label its controlling
 * owner has, and the replica's controller watches them through the same
 * label selector (`owns` of `controller`).
 *
 * ## Example
 * ```ts
 * import type { ShardedOwns } from 'rxkube/core';
 *
 * const secrets: ShardedOwns = { resource: 'v1/secrets', kind: 'ConfigMap', apiVersion: 'v1' };
 * ```
 */
export interface ShardedOwns extends OwnerKeysOptions {
  /** The owned resource, e.g. `'v1/secrets'`. */
  readonly resource: ResourceRef;
}

/** The index of an owned resource's informer: its controlling owner's key. */
export const OWNER_INDEX = 'sharder.owner';

/** An owned resource after the checks, with a name for events and messages. */
type CheckedOwns = ShardedOwns & { readonly owner: ResolvedOwnerOptions; readonly name: string };

/** An owned resource after the checks, with the informer the sharder reads it from (indexed by owner key). */
export type ResolvedOwns = CheckedOwns & { readonly objects: Informer<KubeObject> };

/**
 * What a sharder did, as it emits it.
 * - `ring`: the live members changed; keys are now hashed over `members`.
 * - `assigned`: `key` got the shard label `shard`; `from` is the member it
 *   was moved from directly because that member is gone, undefined for an
 *   unassigned object.
 * - `draining`: `key`, owned by the live member `shard`, got the drain label,
 *   to go to `to` once `shard` lets go of it.
 * - `fenced`: the sharder took over the Lease of the departed member `shard`
 *   before moving its objects.
 * - `forgotten`: the departed member `shard` has no object left, and its
 *   Lease was deleted.
 * - `followed`: the owned object `key` of `resource` got the shard label
 *   `shard` of its owner.
 *
 * ## Example
 * ```ts
 * import type { ShardingEvent } from 'rxkube/core';
 *
 * const describe = (e: ShardingEvent) => (e.type === 'assigned' ? `${e.key} → ${e.shard}` : e.type);
 * ```
 */
export type ShardingEvent =
  | { readonly type: 'ring'; readonly members: readonly string[] }
  | { readonly type: 'assigned'; readonly key: string; readonly shard: string; readonly from: string | undefined }
  | { readonly type: 'draining'; readonly key: string; readonly shard: string; readonly to: string }
  | { readonly type: 'fenced'; readonly shard: string }
  | { readonly type: 'forgotten'; readonly shard: string }
  | { readonly type: 'followed'; readonly resource: string; readonly key: string; readonly shard: string };

/**
 * Options of {@link sharder}.
 *
 * ## Example
 * ```ts
 * import { sharder, type SharderOptions } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const opts: SharderOptions = { kc, resource: 'v1/configmaps', controller: 'checker', leaseNamespace: 'shards', identity: 'replica-a' };
 * sharder(opts).subscribe();
 * ```
 */
export interface SharderOptions<T extends KubeObject = KubeObject> extends Pick<ControllerOptions<T>, 'scheduler' | 'onError'> {
  /** The cluster. */
  readonly kc: KubeConfig;
  /** The sharded resource: `'v1/configmaps'`, `'example.com/v1/widgets'`… */
  readonly resource: ResourceRef;
  /** Shard only the objects of this namespace. @default undefined (every namespace) */
  readonly namespace?: string;
  /** The sharded controller's name; it names the labels (see {@link shardLabels}). */
  readonly controller: string;
  /** Where the members' Leases are. */
  readonly leaseNamespace: string;
  /** This replica's identity: `<identity>/sharder` is written as holder of a departed member's Lease while its objects move. */
  readonly identity: string;
  /**
   * Every object of the resource (metadata is enough).
   * @default a metadata-only informer over `resource` in `namespace`
   */
  readonly objects?: Informer<T>;
  /**
   * The live members.
   * @default shardMembers(kc, { namespace: leaseNamespace, controller }) — a fresh observation, which takes a member for live until its Lease stood still for a lease duration
   */
  readonly members?: Observable<ShardMembers>;
  /** The key an object is placed on the ring by; {@link ownerRingKey} keeps owned objects with their owner. @default metaNamespaceKey */
  readonly ringKey?: (obj: T) => string;
  /** Owned resources whose objects follow their owner's shard label (read through metadata-only informers). @default [] */
  readonly owns?: readonly ShardedOwns[];
  /** Ring points per member, from 1 to 100000. @default 1_000 */
  readonly virtualNodes?: number;
  /** Label writes in flight at once (the `concurrency` of the sharder's controller). @default 8 */
  readonly concurrency?: number;
  /** Milliseconds a departed member must wait before it may take back a Lease the sharder took over; the members' lease duration. @default 15_000 */
  readonly leaseDuration?: number;
  /** Milliseconds after taking a Lease over during which the sharder still moves that member's objects. Less than `leaseDuration`. @default 10_000 */
  readonly renewDeadline?: number;
  /** Milliseconds each request may take. @default 10_000 */
  readonly requestTimeoutMs?: number;
}

/** Sharder options after the checks, with defaults applied. */
export type ResolvedSharderOptions<T extends KubeObject> = Required<Omit<SharderOptions<T>, 'namespace' | 'owns' | 'onError'>> & {
  readonly labels: ShardLabels;
  readonly owns: readonly ResolvedOwns[];
  readonly onError: ((err: Error) => void) | undefined;
};

const NAMES = optionNames<SharderOptions>({
  kc: true, resource: true, namespace: true, controller: true, leaseNamespace: true, identity: true, objects: true, members: true, ringKey: true,
  owns: true, virtualNodes: true, concurrency: true, leaseDuration: true, renewDeadline: true, requestTimeoutMs: true, scheduler: true, onError: true,
});

/**
 * The number options of the sharder and of a sharded controller: default, whether an integer, and the most it may
 * be (virtualNodes: what the ring takes, checked here so a bad value is named at once rather than failing once
 * members join, inside the sharder); all at least 1.
 */
const NUMBERS = {
  leaseDuration: [15_000, false, Infinity], renewDeadline: [10_000, false, Infinity], retryPeriod: [2_000, false, Infinity],
  requestTimeoutMs: [10_000, false, Infinity], virtualNodes: [1_000, true, MAX_VIRTUAL_NODES], concurrency: [8, true, Infinity],
  sharderConcurrency: [8, true, Infinity],
} as const;

/** The name of a number option of either. */
type NumberName = keyof typeof NUMBERS;

/** What the sharder and a sharded controller both take, each checked one way for both. */
type SharedOptions = Pick<SharderOptions, 'kc' | 'controller' | 'identity' | 'leaseNamespace' | 'namespace' | 'owns'> &
  { readonly [K in NumberName]?: number };

/**
 * Checks what the sharder and a sharded controller share, naming the bad option and its value: the cluster,
 * the names, the namespaces, the callbacks named in `functions`, the lease timings, the other numbers the
 * caller takes (`numbers`, checked in the order of NUMBERS whatever the order given), with defaults, and `owns`.
 */
export function checkSharding<N extends Exclude<NumberName, 'leaseDuration' | 'renewDeadline'>>(
  where: string,
  o: SharedOptions,
  functions: readonly string[],
  numbers: readonly N[],
) {
  if (o.kc === null || typeof o.kc !== 'object' || typeof o.kc.getCurrentCluster !== 'function') throw new TypeError(`kc: expected a KubeConfig, got ${describeValue(o.kc)}`);
  const labels = shardLabels(o.controller);
  const identity = checkIdentity(o.identity);
  for (const name of ['leaseNamespace', 'namespace'] as const) {
    const value = o[name];
    if ((value !== undefined || name === 'leaseNamespace') && (typeof value !== 'string' || value === '')) throw new TypeError(`${name}: expected a non-empty string, got ${describeValue(value)}`);
  }
  for (const name of functions) functionOption(where, name, (o as Record<string, unknown>)[name]);
  const number = (name: NumberName): number => {
    const [fallback, integer, max] = NUMBERS[name];
    return numberOption(where, name, o[name], fallback, { min: 1, max, integer });
  };
  const leaseDuration = number('leaseDuration');
  const renewDeadline = number('renewDeadline');
  const own = (Object.keys(NUMBERS) as NumberName[]).filter((name): name is N => (numbers as readonly NumberName[]).includes(name));
  const n = Object.fromEntries(own.map((name) => [name, number(name)])) as Record<N, number>;
  if (renewDeadline >= leaseDuration) throw new TypeError(`renewDeadline: must be less than leaseDuration (${leaseDuration} ms), got ${renewDeadline} ms`);
  return { leaseDuration, renewDeadline, ...n, labels, identity, owns: checkOwns(where, o.owns) };
}

/** Checks every option up front, naming the bad one and its value. */
export function resolveSharderOptions<T extends KubeObject>(opts: SharderOptions<T>): ResolvedSharderOptions<T> {
  const o = checkOptionNames('sharder', opts, NAMES) as unknown as SharderOptions<T>;
  const checked = checkSharding('sharder', o as SharderOptions, ['ringKey', 'onError'], ['requestTimeoutMs', 'virtualNodes', 'concurrency']);
  const scheduler = schedulerOption('sharder', o.scheduler, asyncScheduler);
  const onError = o.onError === undefined ? {} : { onError: o.onError };
  // The sharder reads labels and owner references only.
  const metadataOf = (resource: ResourceRef): never =>
    kubeSource(o.kc, resource as never, { metadataOnly: true, ...(o.namespace !== undefined && { namespace: o.namespace }) }) as never;
  const objects = o.objects ?? (informer(metadataOf(o.resource), onError) as unknown as Informer<T>);
  if (typeof objects?.subscribe !== 'function' || typeof objects.store?.getByKey !== 'function' || typeof objects.status$?.subscribe !== 'function') {
    throw new TypeError(`objects: expected an informer, got ${describeValue(o.objects)}`);
  }
  const members = o.members ?? shardMembers(o.kc, { namespace: o.leaseNamespace, controller: o.controller, scheduler, ...onError });
  const owns = checked.owns.map((entry): ResolvedOwns => ({
    ...entry,
    objects: informer<KubeObject>(metadataOf(entry.resource), {
      indexers: { [OWNER_INDEX]: (child) => ownerPointers(child, entry.owner).slice(0, 1).map((p) => p.key) },
      ...onError,
    }),
  }));
  return {
    ...checked,
    kc: o.kc,
    resource: o.resource,
    controller: o.controller,
    leaseNamespace: o.leaseNamespace,
    objects,
    members,
    ringKey: o.ringKey ?? ((obj: T) => metaNamespaceKey(obj)),
    owns,
    scheduler,
    onError: o.onError,
  };
}

/** Checks a list of owned resources; each gets its owner options resolved and a name for messages. */
function checkOwns(where: string, value: unknown): CheckedOwns[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`owns: expected an array of { resource, kind?, apiVersion? }, got ${describeValue(value)}`);
  return value.map((entry: unknown, i) => {
    if (entry === null || typeof entry !== 'object') throw new TypeError(`owns[${i}]: expected { resource, kind?, apiVersion? }, got ${describeValue(entry)}`);
    const { resource, ...ownerOptions } = entry as ShardedOwns;
    if (resource === undefined || (typeof resource !== 'string' && typeof resource !== 'object')) throw new TypeError(`owns[${i}].resource: expected a resource reference, got ${describeValue(resource)}`);
    const name = typeof resource === 'string' ? resource : `${resource.group === undefined ? '' : `${resource.group}/`}${resource.version}/${resource.plural}`;
    return { ...(entry as ShardedOwns), owner: resolveOwnerOptions(`${where}: owns[${i}]`, ownerOptions), name };
  });
}
