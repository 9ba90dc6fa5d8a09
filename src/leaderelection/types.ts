/**
 * What a leader election lock stores: who holds it, since when, for how
 * long, and how often it changed hands — client-go's
 * `LeaderElectionRecord`, the content of a Lease's `spec`.
 *
 * ## Example
 * ```ts
 * import type { LeaderElectionRecord } from 'rxkube/core';
 *
 * const held: LeaderElectionRecord = {
 *   holderIdentity: 'replica-a', leaseDurationSeconds: 15, leaderTransitions: 3,
 *   acquireTime: '2026-01-01T00:00:00.000000Z', renewTime: '2026-01-01T00:00:10.000000Z',
 * };
 * ```
 */
export interface LeaderElectionRecord {
  /** The holder's identity; `''` when nobody holds it (after a release). */
  readonly holderIdentity: string;
  /** How long others must wait, from when they saw the record change, before taking over. */
  readonly leaseDurationSeconds: number;
  /** When the current holder acquired it (RFC 3339 with microseconds). */
  readonly acquireTime: string | undefined;
  /** When the holder last renewed it (RFC 3339 with microseconds). */
  readonly renewTime: string | undefined;
  /** How many times the lock changed hands. */
  readonly leaderTransitions: number;
}

/**
 * A record read from a lock, with the version a conditional update must name.
 *
 * ## Example
 * ```ts
 * import { leaseLock } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const lock = leaseLock(kc, { namespace: 'default', name: 'my-controller' });
 * const seen = await lock.get(AbortSignal.timeout(5_000));
 * console.log(seen?.record.holderIdentity, seen?.version.metadata?.resourceVersion);
 * ```
 */
export interface LockObservation<V> {
  readonly record: LeaderElectionRecord;
  /** Opaque to the elector: for a Lease, the whole object as last read or written (its resourceVersion makes writes conditional). */
  readonly version: V;
}

/**
 * Where the leader election record lives, with compare-and-swap writes
 * (client-go's `resourcelock.Interface`). `leaseLock` keeps it in a
 * `coordination.k8s.io/v1` Lease; tests may keep it in memory.
 *
 * Every write must be conditional: `update` succeeds only if the lock is
 * still at `version`, and otherwise rejects with a 409 `KubeApiError`
 * (`isConflict`); `create` rejects with 409 `AlreadyExists` when the lock
 * exists. Any other rejection is reported as an error.
 *
 * ## Example
 * ```ts
 * import { leaseLock } from 'rxkube';
 * import type { ResourceLock } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const lock: ResourceLock<unknown> = leaseLock(kc, { namespace: 'kube-system', name: 'my-controller' });
 * ```
 */
export interface ResourceLock<V = unknown> {
  /** Reads the record; resolves undefined when the lock does not exist yet. */
  get(signal: AbortSignal): Promise<LockObservation<V> | undefined>;
  /** Creates the lock holding `record`; resolves the new version. */
  create(record: LeaderElectionRecord, signal: AbortSignal): Promise<V>;
  /** Replaces the record if the lock is still at `version`; resolves the new version. */
  update(record: LeaderElectionRecord, version: V, signal: AbortSignal): Promise<V>;
  /** `namespace/name`, for messages. */
  describe(): string;
}

/**
 * One state of an elector, as {@link leaderElection} emits it.
 *
 * ## Example
 * ```ts
 * import { leaderElection, leaseLock, loadKubeConfig, type Leadership } from 'rxkube';
 *
 * const lock = leaseLock(loadKubeConfig(), { namespace: 'ops', name: 'my-controller' });
 * const identity = `${process.env.HOSTNAME}-${process.pid}`;
 * leaderElection({ lock, identity }).subscribe(({ leading, leader }: Leadership) => {
 *   console.log(leading ? 'acting' : `standing by; leader is ${leader ?? 'nobody'}`);
 * });
 * ```
 */
export interface Leadership {
  /** True while this replica may act: between onStartedLeading and onStoppedLeading. */
  readonly leading: boolean;
  /** The holder last observed in the lock, this replica included; undefined before the first read or when nobody holds it. */
  readonly leader: string | undefined;
}
