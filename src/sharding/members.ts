import type { KubeConfig } from '@kubernetes/client-node';
import { combineLatest, defer, filter, map, Observable, take, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { informer } from '../informer/informer.js';
import type { Lease } from '../leaderelection/leaseLock.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import { kubeSource } from '../sources/kubeSource.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import { shardLabels } from './labels.js';
import { syncedOf } from '../informer/syncedOf.js';
import { timerDelay } from '../options/timerDelay.js';

/**
 * One shard Lease as a replica last saw it, with when it changed on the
 * replica's own clock.
 *
 * ## Example
 * ```ts
 * import type { ObservedShardLease } from 'rxkube/core';
 *
 * const left = (l: ObservedShardLease, now: number) => l.expiresAt - now;
 * ```
 */
export interface ObservedShardLease {
  /** The Lease's name: the identity of the replica it belongs to. */
  readonly name: string;
  /** `spec.holderIdentity`: the replica itself while it is a member; a sharder's identity once fenced. */
  readonly holder: string;
  /** The Lease as last seen, whose resourceVersion makes a conditional update. */
  readonly lease: Lease;
  /** Local time at which the record last changed. */
  readonly observedAt: number;
  /** `observedAt` plus the record's own duration: on this clock, the holder has let go after it. */
  readonly expiresAt: number;
  /** Held by the replica it names and not expired on this clock. */
  readonly live: boolean;
}

/**
 * The members of a sharded controller as one replica sees them, emitted by
 * the members' Lease informer.
 *
 * ## Example
 * ```ts
 * import type { ShardMembers } from 'rxkube/core';
 *
 * const describe = (m: ShardMembers) => `${m.live.length} live of ${m.leases.size}`;
 * ```
 */
export interface ShardMembers {
  /** The live members, sorted. */
  readonly live: readonly string[];
  /** Every shard Lease seen, live or not, by name. */
  readonly leases: ReadonlyMap<string, ObservedShardLease>;
}

/**
 * Turns the events of an informer over a sharded controller's Leases into
 * its live members, the way the leader election judges a Lease: a member is
 * live while its Lease names it as holder and the record changed less than
 * `leaseDurationSeconds` ago *on this replica's clock* (`scheduler`). The
 * times written in the Lease are only compared, never trusted, so replicas
 * whose clocks disagree still agree on who is live, up to the delay with
 * which each sees a change.
 *
 * A Lease first seen counts from the moment it is seen: a replica that
 * just started takes every listed member for live until it has watched its
 * Lease stand still for a whole lease duration. A timer fires at the next
 * expiry, so a member whose replica died leaves the live set without any
 * event. It emits after every change of a record or of the live set; wait
 * for the informer's sync (`status$`) before taking an absent Lease for a fact.
 */
export function liveShards(scheduler: SchedulerLike): OperatorFunction<InformerEvent<Lease>, ShardMembers> {
  return (events) =>
    new Observable<ShardMembers>((subscriber) => {
      const seen = new Map<string, ObservedShardLease & { readonly raw: string }>();
      let timer: Subscription | undefined;
      let lastLive = '';

      const publish = (force: boolean): void => {
        const now = scheduler.now();
        const leases = new Map<string, ObservedShardLease>();
        const live: string[] = [];
        let nextExpiry = Infinity;
        for (const [name, l] of seen) {
          const isLive = l.holder === name && l.expiresAt > now;
          if (isLive) {
            live.push(name);
            nextExpiry = Math.min(nextExpiry, l.expiresAt);
          }
          leases.set(name, { name, holder: l.holder, lease: l.lease, observedAt: l.observedAt, expiresAt: l.expiresAt, live: isLive });
        }
        live.sort();
        timer?.unsubscribe();
        timer = nextExpiry === Infinity ? undefined : scheduler.schedule(() => publish(false), timerDelay(nextExpiry - now));
        const key = live.join('\n');
        if (!force && key === lastLive) return;
        lastLive = key;
        subscriber.next({ live, leases });
      };

      const see = (lease: Lease): boolean => {
        const name = lease.metadata?.name;
        if (name === undefined) return false;
        const s = lease.spec ?? {};
        const holder = typeof s.holderIdentity === 'string' ? s.holderIdentity : '';
        const seconds = typeof s.leaseDurationSeconds === 'number' ? s.leaseDurationSeconds : 0;
        const raw = JSON.stringify([holder, seconds, s.acquireTime ?? null, s.renewTime ?? null, s.leaseTransitions ?? null]);
        const prev = seen.get(name);
        const observedAt = prev?.raw === raw ? prev.observedAt : scheduler.now();
        seen.set(name, { name, holder, lease, raw, observedAt, expiresAt: observedAt + seconds * 1000, live: false });
        return prev?.raw !== raw || prev.lease.metadata?.resourceVersion !== lease.metadata?.resourceVersion;
      };

      // An empty set until the first event, so a controller with no member yet is a fact, not a silence.
      subscriber.next({ live: [], leases: new Map() });
      const sub = events.subscribe({
        next: (ev) => {
          const gone = ev.type === 'delete' ? unwrapTombstone(ev.obj)?.metadata?.name : undefined;
          if (ev.type === 'delete' ? gone !== undefined && seen.delete(gone) : see(ev.obj)) publish(true);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
      return () => {
        sub.unsubscribe();
        timer?.unsubscribe();
      };
    });
}

/**
 * Options of {@link shardMembers}.
 */
export interface ShardMembersOptions {
  /** The clock expiry is judged on, and its timers. */
  readonly scheduler: SchedulerLike;
  /** Where the shard Leases are. */
  readonly namespace: string;
  /** The sharded controller's name (see {@link shardLabels}). */
  readonly controller: string;
  /** Receives the Lease informer's errors. @default undefined (reportError) */
  readonly onError?: (err: Error) => void;
}

/**
 * The live members of a sharded controller, read from its Leases: an
 * informer over the Leases labelled for `controller` in `namespace`, through
 * `liveShards`. Nothing is emitted before the Leases' first list is in,
 * then the members after every change. Subscribing starts the informer;
 * unsubscribing stops it. Its callers checked the options.
 *
 * @param kc The kubeconfig; its identity needs list and watch on leases in the namespace.
 * @param opts The namespace, the controller and the clock.
 * @returns The members, for as long as it is subscribed.
 */
export function shardMembers(kc: KubeConfig, opts: ShardMembersOptions): Observable<ShardMembers> {
  const labels = shardLabels(opts.controller);
  const live = liveShards(opts.scheduler);
  return defer(() => {
    const leases = informer(kubeSource<Lease>(kc, 'coordination.k8s.io/v1/leases', { namespace: opts.namespace, labelSelector: labels.leaseSelector }), {
      ...(opts.onError !== undefined && { onError: opts.onError }),
    });
    return combineLatest([syncedOf(leases).pipe(filter(Boolean), take(1)), leases.pipe(live)]).pipe(map(([, m]) => m));
  });
}
