import type { KubeConfig } from '@kubernetes/client-node';
import { objectClient } from '../client/objectClient.js';
import { isNotFound } from '../errors/api/guards.js';
import type { KubeObject } from '../store/types.js';
import type { LeaderElectionRecord, LockObservation, ResourceLock } from './types.js';
import { describeValue } from '../options/validate.js';

/**
 * A `coordination.k8s.io/v1` Lease as it travels in JSON (times are strings).
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import { type Lease } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const lease = await objectClient<Lease>(kc, 'coordination.k8s.io/v1/leases', { namespace: 'default' }).get('my-controller');
 * console.log(lease.spec?.holderIdentity);
 * ```
 */
export interface Lease extends KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly spec?: {
    readonly holderIdentity?: string;
    readonly leaseDurationSeconds?: number;
    readonly acquireTime?: string;
    readonly renewTime?: string;
    readonly leaseTransitions?: number;
    readonly [field: string]: unknown;
  };
}

/**
 * Options of {@link leaseLock}.
 *
 * ## Example
 * ```ts
 * import { leaseLock } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const lock = leaseLock(kc, { namespace: 'default', name: 'my-controller', labels: { app: 'my-controller' } });
 * ```
 */
export interface LeaseLockOptions {
  /** The Lease's namespace. */
  readonly namespace: string;
  /** The Lease's name, shared by every candidate of one election. */
  readonly name: string;
  /** Labels set on the Lease when it is created and on every write (others are kept). @default {} */
  readonly labels?: Readonly<Record<string, string>>;
  /** Milliseconds each request may take. @default 30_000 */
  readonly timeoutMs?: number;
}

/**
 * A leader election lock kept in a `coordination.k8s.io/v1` Lease, as
 * client-go's `LeaseLock`: the record is the Lease's `spec`
 * (`holderIdentity`, `leaseDurationSeconds`, `acquireTime`, `renewTime`,
 * `leaseTransitions`), and every update replaces the Lease last read or
 * written, whose `metadata.resourceVersion` makes it conditional.
 *
 * ## Example
 * ```ts
 * import { leaderElection, leaseLock } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const lock = leaseLock(kc, { namespace: 'default', name: 'reports-generator' });
 * leaderElection({ lock, identity: 'replica-a' }).subscribe(({ leading }) => console.log({ leading }));
 * ```
 *
 * @param kc The kubeconfig; its identity needs get, create and update on leases in the namespace.
 * @param opts Namespace, name, labels and request timeout.
 * @returns The lock.
 */
export function leaseLock(kc: KubeConfig, opts: LeaseLockOptions): ResourceLock<Lease> {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`leaseLock: options must be an object, got ${describeValue(opts)}`);
  const { namespace, name } = opts;
  if (typeof namespace !== 'string' || namespace === '') throw new TypeError(`namespace: expected a non-empty string, got ${describeValue(namespace)}`);
  if (typeof name !== 'string' || name === '') throw new TypeError(`name: expected a non-empty string, got ${describeValue(name)}`);
  const labels = opts.labels ?? {};
  if (labels === null || typeof labels !== 'object' || Object.values(labels).some((v) => typeof v !== 'string')) {
    throw new TypeError(`labels: expected a map of strings, got ${describeValue(opts.labels)}`);
  }
  const leases = objectClient<Lease>(kc, { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true }, {
    namespace,
    ...(opts.timeoutMs !== undefined && { timeoutMs: opts.timeoutMs }),
  });
  const withLabels = (lease: Lease): Lease =>
    Object.keys(labels).length === 0 ? lease : { ...lease, metadata: { ...lease.metadata, labels: { ...lease.metadata?.labels, ...labels } } };
  return {
    async get(signal: AbortSignal): Promise<LockObservation<Lease> | undefined> {
      try {
        const lease = await leases.get(name, { signal });
        return { record: recordOf(lease), version: lease };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    create: (record, signal) =>
      leases.create(
        withLabels({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: specOf(record) }),
        { signal },
      ),
    update: (record, version, signal) => leases.replace(withLabels({ ...version, spec: { ...version.spec, ...specOf(record) } }), { signal }),
    describe: () => `${namespace}/${name}`,
  };
}

function recordOf(lease: Lease): LeaderElectionRecord {
  const s = lease.spec ?? {};
  return {
    holderIdentity: typeof s.holderIdentity === 'string' ? s.holderIdentity : '',
    leaseDurationSeconds: typeof s.leaseDurationSeconds === 'number' ? s.leaseDurationSeconds : 0,
    acquireTime: typeof s.acquireTime === 'string' ? s.acquireTime : undefined,
    renewTime: typeof s.renewTime === 'string' ? s.renewTime : undefined,
    leaderTransitions: typeof s.leaseTransitions === 'number' ? s.leaseTransitions : 0,
  };
}

function specOf(r: LeaderElectionRecord): NonNullable<Lease['spec']> {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    ...(r.acquireTime !== undefined && { acquireTime: r.acquireTime }),
    ...(r.renewTime !== undefined && { renewTime: r.renewTime }),
    leaseTransitions: r.leaderTransitions,
  };
}
