import { metaNamespaceKey } from '../store/keys.js';
import { labelKeyProblem, labelValueProblem } from '../store/labelValidation.js';
import type { KubeObject } from '../store/types.js';
import { describeValue } from '../options/validate.js';

const DNS_LABEL = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The label keys one sharded controller uses, made by {@link shardLabels}.
 *
 * ## Example
 * ```ts
 * import { shardLabels, type ShardLabels } from 'rxkube/core';
 *
 * const l: ShardLabels = shardLabels('configmap-checker');
 * l.shard; // 'shard.rxkube.io/configmap-checker'
 * ```
 */
export interface ShardLabels {
  /** On each sharded object: the replica that owns it. */
  readonly shard: string;
  /** On an object being handed over: its owner must finish with it and let go. */
  readonly drain: string;
  /** On each shard Lease: the controller it is a member of. */
  readonly lease: string;
  /** The label selector of one replica's share: `<shard>=<identity>`. */
  selectorFor(identity: string): string;
  /** The label selector of the controller's shard Leases. */
  readonly leaseSelector: string;
}

/**
 * The labels of a sharded controller named `controller`:
 * `shard.rxkube.io/<controller>=<replica>` on every object says which
 * replica owns it, `drain.shard.rxkube.io/<controller>=true` asks that
 * replica to let go of it, and `lease.shard.rxkube.io/controller=<controller>`
 * marks the replicas' Leases. Several sharded controllers can share objects:
 * each has its own keys.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource } from 'rxkube';
 * import { shardLabels } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const labels = shardLabels('configmap-checker');
 * const mine = informer(kubeSource(kc, 'v1/configmaps', { labelSelector: labels.selectorFor('replica-a') }));
 * ```
 *
 * @param controller The controller's name: a DNS label (up to 63 lowercase letters, digits and `-`), as it also names a Lease.
 * @returns The label keys and selectors.
 * @throws {TypeError} when the name cannot be part of a label key.
 */
export function shardLabels(controller: string): ShardLabels {
  if (typeof controller !== 'string' || !DNS_LABEL.test(controller) || labelKeyProblem(`shard.rxkube.io/${controller}`) !== undefined) {
    throw new TypeError(`controller: expected a DNS label (up to 63 lowercase letters, digits and '-'), got ${describeValue(controller)}`);
  }
  const shard = `shard.rxkube.io/${controller}`;
  const lease = 'lease.shard.rxkube.io/controller';
  return {
    shard,
    drain: `drain.shard.rxkube.io/${controller}`,
    lease,
    leaseSelector: `${lease}=${controller}`,
    selectorFor: (identity) => `${shard}=${checkIdentity(identity)}`,
  };
}

/** A replica identity names its Lease and is written as a label value, so it must be a DNS label. */
export function checkIdentity(identity: unknown): string {
  if (typeof identity !== 'string' || !DNS_LABEL.test(identity) || labelValueProblem(identity) !== undefined) {
    throw new TypeError(`identity: expected a DNS label (up to 63 lowercase letters, digits and '-'), got ${describeValue(identity)}`);
  }
  return identity;
}

/**
 * The ring key of an object's controlling owner: `namespace/ownerName` for an
 * object with an owner reference marked `controller: true`, else its own
 * `namespace/name`. As `ringKey` of a sharded controller, an owner and the
 * objects it controls hash to the same replica.
 *
 * ## Example
 * ```ts
 * import { ownerRingKey } from 'rxkube/core';
 *
 * ownerRingKey({ metadata: { namespace: 'default', name: 'web-abc12', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'u', controller: true }] } });
 * // 'default/web'
 * ```
 *
 * @param obj The object.
 * @returns The key its ring position is computed from.
 */
export function ownerRingKey(obj: KubeObject): string {
  const owner = obj.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (owner === undefined) return metaNamespaceKey(obj);
  const ns = obj.metadata?.namespace;
  return ns === undefined || ns === '' ? owner.name : `${ns}/${owner.name}`;
}
