import { EMPTY, map, Observable, ReplaySubject, share, startWith, Subject, tap } from 'rxjs';
import { abortInFlight, controller, type Controller } from '../controller/controller.js';
import type { ControllerSource, ReconcileAction } from '../controller/types.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import { reportTo } from '../errors/reportTo.js';
import { ownerPointers } from '../operators/ownerKeys.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../store/types.js';
import { labelWriter, type LabelWrite } from './labelWriter.js';
import { LeaseFences } from './leaseFences.js';
import type { ObservedShardLease, ShardMembers } from './members.js';
import { OWNER_INDEX, resolveSharderOptions, type ResolvedOwns, type SharderOptions, type ShardingEvent } from './sharderOptions.js';
import { hashRing, type HashRing } from './ring.js';

/**
 * Runs the sharder of a sharded controller while subscribed: it writes on
 * every object the label of the replica that owns it, by a consistent hash
 * ring over the live members, so that each replica's informers can ask the
 * API server for their share alone (`labelSelector: shard=<identity>`).
 * Run one at a time, by the leader of an election among the replicas
 * (`shardedController` does this).
 *
 * It is a {@link controller} over the sharded objects whose reconcile
 * writes the shard label, so an object is judged by one worker at a time
 * and a failed write backs off; every change of the membership enqueues
 * every object. An unassigned object gets its ring owner's label; one whose
 * live owner is no longer its ring owner only gets the drain label, and
 * moves once that owner let go of it; one of a member that is gone moves
 * directly, once the sharder took that member's Lease over; an owned object
 * (`owns`) follows its owner. Every write is conditional on the
 * resourceVersion it was decided on. docs/semantics.md states the rules
 * (SH-4…SH-7, LT-44…LT-47). It emits what it did.
 *
 * ## Example
 * ```ts
 * import { leaderElection, leaseLock } from 'rxkube';
 * import { sharder } from 'rxkube/core';
 * import { EMPTY, switchMap } from 'rxjs';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * leaderElection({ lock: leaseLock(kc, { namespace: 'shards', name: 'checker-sharder' }), identity: 'replica-a' })
 *   .pipe(switchMap(({ leading }) => (leading ? sharder({ kc, resource: 'v1/configmaps', controller: 'checker', leaseNamespace: 'shards', identity: 'replica-a' }) : EMPTY)))
 *   .subscribe((e) => {
 *     if (e.type === 'assigned') console.log(`${e.key} → ${e.shard}${e.from === undefined ? '' : ` (from ${e.from}, gone)`}`);
 *   });
 * ```
 *
 * @param opts What to shard, where the Leases are, the timings.
 * @returns What the sharder does, for as long as it is subscribed.
 * @throws {TypeError} when an option is invalid.
 */
export function sharder<T extends KubeObject = KubeObject>(opts: SharderOptions<T>): Observable<ShardingEvent> {
  const c = resolveSharderOptions(opts);
  const { labels, objects } = c;
  return new Observable<ShardingEvent>((subscriber) => {
    const report = (err: unknown): void => reportTo(c.onError, err);
    const emit = (event: ShardingEvent): void => subscriber.next(event);
    // The writes in flight are aborted when the sharder stops (another replica may be the sharder by then); what that fails is not news.
    let ended = false;
    const write = async <R>(ctx: { readonly signal: AbortSignal }, work: (signal: AbortSignal) => Promise<R>): Promise<R | undefined> => {
      try {
        return await work(ctx.signal);
      } catch (err) {
        if (ended) return undefined;
        throw err;
      }
    };
    let members: ShardMembers | undefined;
    let ring: HashRing | undefined;
    const members$ = c.members.pipe(
      tap((m) => {
        members = m;
        if (ring === undefined || ring.members.join(',') !== m.live.join(',')) {
          ring = hashRing(m.live, { virtualNodes: c.virtualNodes });
          emit({ type: 'ring', members: ring.members });
        }
      }),
      share({ connector: () => new ReplaySubject<ShardMembers>(1), resetOnRefCountZero: true }),
    );
    const leases = leaseSource(members$, () => members);
    // Members whose fence write or move ended: their keys go to the leases controller, through a source of its own.
    const woken = new Subject<string>();
    const writeLabels = labelWriter(c.kc, [c.resource, ...c.owns.map((o) => o.resource)], c.requestTimeoutMs);
    const patch = async (...args: Parameters<LabelWrite>): Promise<boolean> => (await writeLabels(...args)) === 'written';
    const fences = new LeaseFences(c, () => members, emit, (member) => woken.next(member));

    /** A sharded object gets the label of its ring owner: assigned when it has none, drained from a live member, moved from a fenced one. */
    const place = async (obj: T, key: string, signal: AbortSignal): Promise<ReconcileAction> => {
      if (members === undefined || ring === undefined || obj.metadata?.name === undefined) return;
      const objLabels = obj.metadata.labels ?? {};
      const current = objLabels[labels.shard];
      const desired = ring.ownerOf(c.ringKey(obj));
      if (desired === undefined) return;
      if (current === undefined || current === '') {
        if (await patch(obj, { [labels.shard]: desired, [labels.drain]: null }, signal)) emit({ type: 'assigned', key, shard: desired, from: undefined });
        return;
      }
      if (members.live.includes(current)) {
        if (current === desired || objLabels[labels.drain] !== undefined) return;
        if (await patch(obj, { [labels.drain]: 'true' }, signal)) emit({ type: 'draining', key, shard: current, to: desired });
        return;
      }
      const fenced = await fences.fence(current, signal);
      if (fenced === false) return;
      if (typeof fenced === 'number') return { requeueAfter: fenced + 10 };
      // The write that fenced the member must still be young enough when this move is sent.
      if (!fences.fresh(current)) return { requeueAfter: 0 };
      // The ring may have changed while the fence was written: the object goes to its owner on the ring now.
      const target = ring.ownerOf(c.ringKey(obj));
      if (target === undefined) return;
      await fences.moving(current, async () => {
        if (await patch(obj, { [labels.shard]: target, [labels.drain]: null }, signal)) emit({ type: 'assigned', key, shard: target, from: current });
      });
    };

    /** An owned object takes the shard label its owner has now; while the owner has none, it keeps its own. */
    const follow = async (owned: ResolvedOwns, index: number, child: KubeObject, key: string, signal: AbortSignal): Promise<void> => {
      const pointer = ownerPointers(child, owned.owner)[0];
      if (child.metadata?.name === undefined || pointer === undefined) return;
      const owner = objects.store.getByKey(pointer.key);
      if (owner === undefined || (pointer.uid !== '' && owner.metadata?.uid !== undefined && owner.metadata.uid !== pointer.uid)) return;
      const target = owner.metadata?.labels?.[labels.shard];
      if (target === undefined || target === '' || child.metadata.labels?.[labels.shard] === target) return;
      if (await patch(child, { [labels.shard]: target }, signal, index + 1)) emit({ type: 'followed', resource: owned.name, key, shard: target });
    };

    /** The member an object is labelled for, when that member is departed. */
    const departedShardOf = (obj: T): string | undefined => {
      const shard = obj.metadata?.labels?.[labels.shard];
      return shard !== undefined && members?.leases.get(shard)?.live === false ? shard : undefined;
    };
    // Writes are conditional, so a cache that lags only costs a conflict: no read-your-writes wait. Keys go first in, first out.
    const common = { concurrency: c.concurrency, scheduler: c.scheduler, onError: report, readYourWrites: false, shutdownTimeoutMs: 0, priorityQueue: false } as const;
    const controllers: Controller<unknown>[] = [
      controller<T>({
        ...common,
        name: `${c.controller}-sharder`,
        for: objects,
        // A membership change may move any object.
        watches: [{ source: leases, map: () => objects.store.listKeys() }],
        reconcile: (obj, ctx) => write(ctx, (signal) => place(obj, ctx.key, signal)),
      }),
      ...c.owns.map((owned, i) =>
        controller<KubeObject>({
          ...common,
          name: `${c.controller}-sharder-${owned.name}`,
          for: owned.objects,
          // A change of an owner (its shard label) wakes its children.
          watches: [{ source: objects, map: (owner: T) => owned.objects.store.byIndex(OWNER_INDEX, objects.store.keyOf(owner)).map((o) => owned.objects.store.keyOf(o)) }],
          reconcile: (child, ctx) => write(ctx, (signal) => follow(owned, i, child, ctx.key, signal)),
        }),
      ),
      controller<ObservedShardLease>({
        ...common,
        concurrency: 1,
        name: `${c.controller}-sharder-leases`,
        for: leaseSource(members$, () => members, woken),
        // An object leaving a departed member may have been its last.
        watches: [{ source: objects, map: (obj: T) => departedShardOf(obj) }],
        reconcile: (lease, ctx) => write(ctx, (signal) => fences.forget(lease.name, signal)),
      }),
    ] as Controller<unknown>[];
    // Subscribed without reading outcomes, so each controller reports its failures itself, at most once a minute per key (LT-53).
    const subs = controllers.map((ctl) => ctl.subscribe({ error: (err: unknown) => subscriber.error(err) }));
    return () => {
      ended = true;
      const stopped = new Error(`the sharder of ${c.controller} stopped`);
      for (const ctl of controllers) abortInFlight(ctl, stopped);
      for (const sub of subs) sub.unsubscribe();
    };
  });
}

/**
 * The member Leases as a controller source: the latest observation is the
 * store, and a Lease whose observation changed in a way the sharder acts on
 * (liveness; holder or record while departed) is an event. A live member's
 * renewal is none (LT-44). A member named by `woken` is an update to itself.
 */
function leaseSource(members$: Observable<ShardMembers>, latest: () => ShardMembers | undefined, woken: Observable<string> = EMPTY): ControllerSource<ObservedShardLease> {
  const events$ = new Observable<InformerEvent<ObservedShardLease>>((subscriber) => {
    let seen = new Map<string, ObservedShardLease>();
    let initial = true;
    const sub = members$.subscribe({
      next: (m) => {
        for (const [name, lease] of m.leases) {
          const before = seen.get(name);
          if (before === undefined) subscriber.next({ type: 'add', obj: lease, isInInitialList: initial });
          else if (before.live !== lease.live || (!lease.live && (before.holder !== lease.holder || before.observedAt !== lease.observedAt))) {
            subscriber.next({ type: 'update', oldObj: before, obj: lease });
          }
        }
        for (const [name, lease] of seen) if (!m.leases.has(name)) subscriber.next({ type: 'delete', obj: lease });
        seen = new Map(m.leases);
        initial = false;
      },
      error: (err: unknown) => subscriber.error(err),
    });
    // Only a Lease this subscriber was given: one it has not seen yet is enqueued by its add.
    sub.add(
      woken.subscribe((name) => {
        const lease = seen.get(name);
        if (lease !== undefined) subscriber.next({ type: 'update', oldObj: lease, obj: lease });
      }),
    );
    return sub;
  });
  return Object.assign(events$, {
    name: 'shard members',
    store: {
      getByKey: (name: string) => latest()?.leases.get(name),
      keyOf: (lease: Parameters<typeof unwrapTombstone<ObservedShardLease>>[0]) => unwrapTombstone(lease)?.name ?? '',
    },
    status$: members$.pipe(
      map(() => ({ synced: true })),
      startWith({ synced: false }),
    ),
  });
}
