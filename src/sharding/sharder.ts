import { combineLatest, filter, Observable, Subscription, take } from 'rxjs';
import { reportTo } from '../errors/reportTo.js';
import { ownerPointers } from '../operators/ownerKeys.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../store/types.js';
import { workQueue } from '../workqueue/WorkQueue.js';
import { Following } from './following.js';
import { LabelWriter } from './labelWriter.js';
import { LeaseFences } from './leaseFences.js';
import type { ShardMembers } from './members.js';
import { resolveSharderOptions, type SharderOptions, type ShardingEvent } from './sharderOptions.js';
import { workKey, workOf, type WorkKey } from './sharderWork.js';
import { hashRing, type HashRing } from './ring.js';
import { syncedOf } from '../informer/syncedOf.js';

/**
 * Runs the sharder of a sharded controller while subscribed: it writes on
 * every object the label of the replica that owns it, by a consistent hash
 * ring over the live members, so that each replica's informers can ask the
 * API server for their share alone (`labelSelector: shard=<identity>`).
 * Run one at a time, by the leader of an election among the replicas
 * (`shardedController` does this).
 *
 * For each object, whenever it or the membership changes:
 * - unassigned: it gets the shard label of its ring owner;
 * - owned by a live member that is no longer its ring owner: it gets the
 *   drain label, nothing else. The owner finishes its reconcile in flight,
 *   then removes both labels itself; only then is the object unassigned and
 *   given to its new owner. An object being drained is left alone, even if
 *   the ring changes back.
 * - owned by a member that is gone (its Lease expired or was released, on
 *   this replica's clock, or it has none): the sharder first takes the
 *   member's Lease over by a conditional write, which the member cannot
 *   undo for a lease duration, and then relabels the object directly, only
 *   while that write is younger than the renew deadline. A replica that was
 *   merely cut off has stopped acting by then (its own Lease's renew
 *   deadline passed), and cannot come back and list its old share before
 *   the moves landed.
 * - owned (`owns`): an object whose controlling owner is sharded gets the
 *   owner's shard label as soon as the owner has one, so the two are cached
 *   and reconciled by the same replica. It is not drained: its changes only
 *   ever enqueue its owner, and the owner is drained.
 *
 * Every write is a merge patch conditional on the resourceVersion it was
 * decided on; a conflict means the object changed, and its new version is
 * judged again when the informer delivers it. It emits what it did.
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
  const { labels, scheduler } = c;
  return new Observable<ShardingEvent>((subscriber) => {
    const report = (err: unknown): void => reportTo(c.onError, err);
    const queue = workQueue<WorkKey>({ name: `${c.controller}-sharder`, scheduler, onError: report });
    const subs = new Subscription();
    const emit = (event: ShardingEvent): void => subscriber.next(event);
    let members: ShardMembers | undefined;
    let ring: HashRing | undefined;
    // What the last full pass was decided on: a renewal of a live member changes nothing here.
    let signature = '';
    const forgetLater = (member: string, delayMs: number): void => queue.addAfter(workKey({ kind: 'forget', member }), delayMs);
    const writer = new LabelWriter(c);
    const fences = new LeaseFences(c, { members: () => members, emit, forgetLater });
    const following = new Following(c, writer, emit);

    /** A sharded object gets the label of its ring owner: assigned when it has none, drained from a live member, moved from a fenced one. */
    const place = async (key: string, signal: AbortSignal): Promise<void> => {
      const obj = c.objects.store.getByKey(key);
      if (obj === undefined || members === undefined || ring === undefined || obj.metadata?.name === undefined) return;
      const objLabels = obj.metadata.labels ?? {};
      const current = objLabels[labels.shard];
      const draining = objLabels[labels.drain] !== undefined;
      const desired = ring.ownerOf(c.ringKey(obj));
      if (desired === undefined) return;
      if (current === undefined || current === '') {
        if (await writer.patch(obj, { [labels.shard]: desired, [labels.drain]: null }, signal)) emit({ type: 'assigned', key, shard: desired, from: undefined });
        return;
      }
      if (members.live.includes(current)) {
        if (current === desired || draining) return;
        if (await writer.patch(obj, { [labels.drain]: 'true' }, signal)) emit({ type: 'draining', key, shard: current, to: desired });
        return;
      }
      const fenced = await fences.fence(current, signal);
      if (fenced === false) return;
      const item = workKey({ kind: 'place', key });
      if (typeof fenced === 'number') {
        queue.addAfter(item, fenced + 10);
        return;
      }
      // The write that fenced the member must still be young enough when this move is sent.
      if (!fences.fresh(current)) {
        queue.add(item);
        return;
      }
      if (await writer.patch(obj, { [labels.shard]: desired, [labels.drain]: null }, signal)) {
        emit({ type: 'assigned', key, shard: desired, from: current });
        // Its last object may just have gone: see whether its Lease can go too (deduplicated while waiting).
        forgetLater(current, 100);
      }
    };

    const work = (item: WorkKey, signal: AbortSignal): Promise<void> => {
      const w = workOf(item);
      switch (w.kind) {
        case 'place':
          return place(w.key, signal);
        case 'follow':
          return following.follow(w.owned, w.key, signal);
        case 'forget':
          return fences.forget(w.member, signal);
      }
    };

    subs.add(
      c.objects.subscribe({
        next: (ev) => {
          if (ring === undefined) return;
          const obj = ev.type === 'delete' ? unwrapTombstone(ev.obj) : ev.obj;
          if (ev.type === 'delete' || obj === undefined) return;
          const key = c.objects.store.keyOf(obj);
          queue.add(workKey({ kind: 'place', key }));
          for (const item of following.childrenOf(key)) queue.add(item);
        },
        error: (err: unknown) => subscriber.error(err),
      }),
    );
    c.owns.forEach((owned, i) => {
      subs.add(
        owned.objects.subscribe({
          next: (ev) => {
            const obj = ev.type === 'delete' ? unwrapTombstone(ev.obj) : ev.obj;
            if (obj === undefined) return;
            const key = owned.objects.store.keyOf(obj);
            following.index(i, key, ev.type === 'delete' ? undefined : ownerPointers(obj, owned.owner)[0]?.key);
            if (ev.type !== 'delete' && ring !== undefined) queue.add(workKey({ kind: 'follow', owned: i, key }));
          },
          error: (err: unknown) => subscriber.error(err),
        }),
      );
    });
    subs.add(
      combineLatest([
        combineLatest([c.objects, ...c.owns.map((o) => o.objects)].map((o) => syncedOf(o).pipe(filter(Boolean), take(1)))),
        c.members,
      ]).subscribe({
        next: ([, m]) => {
          members = m;
          const next = `${m.live.join(',')}|${[...m.leases.values()].filter((l) => !l.live).map((l) => `${l.name}:${l.holder}:${l.observedAt}`).join(',')}`;
          if (next === signature) return;
          const liveChanged = ring === undefined || ring.members.join(',') !== m.live.join(',');
          signature = next;
          if (liveChanged) {
            ring = hashRing(m.live, { virtualNodes: c.virtualNodes });
            emit({ type: 'ring', members: ring.members });
          }
          for (const key of c.objects.store.listKeys()) queue.add(workKey({ kind: 'place', key }));
          c.owns.forEach((owned, i) => {
            for (const key of owned.objects.store.listKeys()) queue.add(workKey({ kind: 'follow', owned: i, key }));
          });
          for (const l of m.leases.values()) if (!l.live) forgetLater(l.name, 100);
        },
        error: (err: unknown) => subscriber.error(err),
      }),
    );
    subs.add(
      queue.process(work, { concurrency: c.concurrency }).subscribe((o) => {
        if (!o.ok) report(o.error);
      }),
    );
    return () => {
      subs.unsubscribe();
      queue.shutDown();
    };
  });
}
