import { combineLatest, filter, Observable, Subscription, take } from 'rxjs';
import { isAlreadyExists, isConflict, isNotFound } from '../sources/errors/guards.js';
import { objectClient } from '../client/objectClient.js';
import type { ObjectClient } from '../client/types.js';
import type { CustomResourceRef } from '../sources/resources.js';
import { reportTo } from '../errors/reportTo.js';
import { microTime } from '../leaderelection/elector.js';
import type { Lease } from '../leaderelection/leaseLock.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../store/types.js';
import { ownerPointers } from '../operators/ownerKeys.js';
import { workQueue } from '../workqueue/WorkQueue.js';
import type { ShardMembers } from './members.js';
import { resolveSharderOptions, type SharderOptions, type ShardingEvent } from './sharderOptions.js';
import { hashRing, type HashRing } from './ring.js';

/** The sharder holds a departed member's Lease while it moves that member's objects. */
interface Fence {
  readonly lease: Lease;
  /** Local time the write was sent: the member cannot take its Lease back before this plus the lease duration. */
  readonly sentAt: number;
}

/**
 * Runs the sharder of a sharded controller while subscribed: it writes on
 * every object the label of the replica that owns it, by a consistent hash
 * ring over the live members, so that each replica's informers can ask the
 * API server for their share alone (`labelSelector: shard=<identity>`).
 * Run one at a time, by the leader of an election among the replicas
 * ({@link shardedController} does this).
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
 * import { leaderElection, leaseLock, sharder } from 'rxkube';
 * import { EMPTY, switchMap } from 'rxjs';
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
    const queue = workQueue<string>({ name: `${c.controller}-sharder`, scheduler, onError: report });
    const subs = new Subscription();
    // Label writers by resource (index into owns, or -1 for the sharded resource) and namespace.
    const clients = new Map<string, ObjectClient<KubeObject>>();
    // Never a member's name (identities have no '/'), so a fenced Lease never looks like its member renewed it, even when the sharder fences its own replica's Lease.
    const fenceHolder = `${c.identity}/sharder`;
    const leases = objectClient<Lease>(c.kc, 'coordination.k8s.io/v1/leases', { namespace: c.leaseNamespace, timeoutMs: c.requestTimeoutMs });
    const fences = new Map<string, Fence>();
    // One fencing write per member at a time, shared by every object of that member.
    const fencing = new Map<string, Promise<boolean | number>>();
    let members: ShardMembers | undefined;
    let ring: HashRing | undefined;
    // What the last full pass was decided on: a renewal of a live member changes nothing here.
    let signature = '';

    const clientFor = (owned: number, ns: string | undefined): ObjectClient<KubeObject> => {
      const k = `${owned}/${ns ?? ''}`;
      let client = clients.get(k);
      if (client === undefined) {
        const resource = owned < 0 ? c.resource : c.owns[owned]!.resource;
        client = objectClient<KubeObject>(c.kc, resource as CustomResourceRef, { ...(ns !== undefined && ns !== '' && { namespace: ns }), timeoutMs: c.requestTimeoutMs });
        clients.set(k, client);
      }
      return client;
    };

    /** A label patch conditional on the version decided on; false when the object changed or went. */
    const patch = async (obj: KubeObject, set: Record<string, string | null>, signal: AbortSignal, owned = -1): Promise<boolean> => {
      const md = obj.metadata!;
      try {
        await clientFor(owned, md.namespace).patch(md.name!, { metadata: { resourceVersion: md.resourceVersion, labels: set } }, { type: 'merge', signal });
        return true;
      } catch (err) {
        if (isConflict(err) || isNotFound(err)) return false;
        throw err;
      }
    };

    /** Holds `member`'s Lease: true when held now, a delay (ms) to try again after, false when the member is live. */
    const fence = (member: string, signal: AbortSignal): Promise<boolean | number> => {
      const held = fences.get(member);
      if (held !== undefined && scheduler.now() < held.sentAt + c.renewDeadline) return Promise.resolve(true);
      let p = fencing.get(member);
      if (p === undefined) {
        p = takeLease(member, held, signal).finally(() => fencing.delete(member));
        fencing.set(member, p);
      }
      return p;
    };

    const takeLease = async (member: string, held: Fence | undefined, signal: AbortSignal): Promise<boolean | number> => {
      const seen = members?.leases.get(member);
      const now = scheduler.now();
      if (seen?.live === true) return false;
      if (seen !== undefined && seen.holder !== '' && seen.holder !== fenceHolder && seen.expiresAt > now) return seen.expiresAt - now;
      const stamp = microTime(now);
      const spec = { holderIdentity: fenceHolder, leaseDurationSeconds: Math.ceil(c.leaseDuration / 1000), acquireTime: stamp, renewTime: stamp };
      try {
        let written: Lease;
        if (seen === undefined) {
          written = await leases.create(
            { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: member, namespace: c.leaseNamespace, labels: { [labels.lease]: c.controller } }, spec: { ...spec, leaseTransitions: 0 } },
            { signal },
          );
        } else {
          // Our own last write is newer than what the informer may have shown yet.
          const base = held !== undefined && seen.holder === fenceHolder ? held.lease : seen.lease;
          const transitions = (base.spec?.leaseTransitions ?? 0) + (seen.holder === fenceHolder ? 0 : 1);
          written = await leases.replace({ ...base, spec: { ...base.spec, ...spec, leaseTransitions: transitions } }, { signal });
        }
        fences.set(member, { lease: written, sentAt: now });
        if (held === undefined) subscriber.next({ type: 'fenced', shard: member });
        return true;
      } catch (err) {
        if (isConflict(err) || isAlreadyExists(err)) return 0;
        throw err;
      }
    };

    // Owned objects by owner key, so a change of an owner's label re-checks its children. Work items of
    // owned objects are `\0<index>\0<key>`: no object key contains a NUL.
    const children = new Map<string, Set<string>>();
    const childOwner = new Map<string, string>();
    const childItem = (i: number, key: string): string => `\0${i}\0${key}`;
    const indexChild = (item: string, ownerKey: string | undefined): void => {
      const before = childOwner.get(item);
      if (before === ownerKey) return;
      if (before !== undefined) {
        const set = children.get(before);
        set?.delete(item);
        if (set?.size === 0) children.delete(before);
      }
      if (ownerKey === undefined) childOwner.delete(item);
      else {
        childOwner.set(item, ownerKey);
        children.set(ownerKey, (children.get(ownerKey) ?? new Set()).add(item));
      }
    };

    /** An owned object takes the shard label its owner has now; while the owner has none, it keeps its own. */
    const follow = async (item: string, signal: AbortSignal): Promise<void> => {
      const [, index, key] = item.split('\0') as [string, string, string];
      const owned = c.owns[Number(index)]!;
      const child = owned.objects.store.getByKey(key);
      if (child?.metadata?.name === undefined) return;
      const pointer = ownerPointers(child, owned.owner)[0];
      if (pointer === undefined) return;
      const owner = c.objects.store.getByKey(pointer.key);
      if (owner === undefined || (pointer.uid !== '' && owner.metadata?.uid !== undefined && owner.metadata.uid !== pointer.uid)) return;
      const target = owner.metadata?.labels?.[labels.shard];
      if (target === undefined || target === '' || child.metadata.labels?.[labels.shard] === target) return;
      if (await patch(child, { [labels.shard]: target }, signal, Number(index))) subscriber.next({ type: 'followed', resource: owned.name, key, shard: target });
    };

    // Work items that clean up a departed member's Lease are `\u0001<member>`.
    const cleanupItem = (member: string): string => `\u0001${member}`;

    /**
     * Deletes the Lease of a departed member once no object carries its label, so replicas that come and go
     * (new pod names) leave nothing behind; conditional on the version last seen or written. A member that
     * comes back creates a new one.
     */
    const forget = async (member: string, signal: AbortSignal): Promise<void> => {
      const seen = members?.leases.get(member);
      if (seen === undefined || seen.live || fencing.has(member)) return;
      for (const k of c.objects.store.listKeys()) {
        if (c.objects.store.getByKey(k)?.metadata?.labels?.[labels.shard] === member) return;
      }
      const now = scheduler.now();
      // Someone else's fence (a previous sharder's) is theirs until it expires.
      if (seen.holder !== fenceHolder && seen.holder !== '' && seen.holder !== member && seen.expiresAt > now) {
        queue.addAfter(cleanupItem(member), seen.expiresAt - now + 10);
        return;
      }
      const held = fences.get(member);
      const version = (held !== undefined && seen.holder === fenceHolder ? held.lease : seen.lease).metadata?.resourceVersion;
      try {
        await leases.delete(member, { signal, ...(version !== undefined && { preconditions: { resourceVersion: version } }) });
        subscriber.next({ type: 'forgotten', shard: member });
      } catch (err) {
        // Changed since (it came back, or a newer write of ours): the next pass judges it again.
        if (!isConflict(err) && !isNotFound(err)) throw err;
      }
      fences.delete(member);
    };

    const work = async (key: string, signal: AbortSignal): Promise<void> => {
      if (key.startsWith('\0')) return follow(key, signal);
      if (key.startsWith('\u0001')) return forget(key.slice(1), signal);
      const obj = c.objects.store.getByKey(key);
      if (obj === undefined || members === undefined || ring === undefined || obj.metadata?.name === undefined) return;
      const objLabels = obj.metadata.labels ?? {};
      const current = objLabels[labels.shard];
      const draining = objLabels[labels.drain] !== undefined;
      const desired = ring.ownerOf(c.ringKey(obj));
      if (desired === undefined) return;
      if (current === undefined || current === '') {
        if (await patch(obj, { [labels.shard]: desired, [labels.drain]: null }, signal)) subscriber.next({ type: 'assigned', key, shard: desired, from: undefined });
        return;
      }
      if (members.live.includes(current)) {
        if (current === desired || draining) return;
        if (await patch(obj, { [labels.drain]: 'true' }, signal)) subscriber.next({ type: 'draining', key, shard: current, to: desired });
        return;
      }
      const fenced = await fence(current, signal);
      if (fenced === false) return;
      if (typeof fenced === 'number') {
        queue.addAfter(key, fenced + 10);
        return;
      }
      // The write that fenced the member must still be young enough when this move is sent.
      if (scheduler.now() >= fences.get(current)!.sentAt + c.renewDeadline) {
        queue.add(key);
        return;
      }
      if (await patch(obj, { [labels.shard]: desired, [labels.drain]: null }, signal)) {
        subscriber.next({ type: 'assigned', key, shard: desired, from: current });
        // Its last object may just have gone: see whether its Lease can go too (deduplicated while waiting).
        queue.addAfter(cleanupItem(current), 100);
      }
    };

    subs.add(
      c.objects.subscribe({
        next: (ev) => {
          if (ring === undefined) return;
          const obj = ev.type === 'delete' ? unwrapTombstone(ev.obj) : ev.obj;
          if (ev.type === 'delete' || obj === undefined) return;
          const key = c.objects.store.keyOf(obj);
          queue.add(key);
          for (const item of children.get(key) ?? []) queue.add(item);
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
            const item = childItem(i, owned.objects.store.keyOf(obj));
            indexChild(item, ev.type === 'delete' ? undefined : ownerPointers(obj, owned.owner)[0]?.key);
            if (ev.type !== 'delete' && ring !== undefined) queue.add(item);
          },
          error: (err: unknown) => subscriber.error(err),
        }),
      );
    });
    subs.add(
      combineLatest([
        combineLatest([c.objects, ...c.owns.map((o) => o.objects)].map((o) => o.synced$.pipe(filter(Boolean), take(1)))),
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
            subscriber.next({ type: 'ring', members: ring.members });
          }
          for (const k of c.objects.store.listKeys()) queue.add(k);
          c.owns.forEach((owned, i) => {
            for (const k of owned.objects.store.listKeys()) queue.add(childItem(i, k));
          });
          for (const l of m.leases.values()) if (!l.live) queue.addAfter(cleanupItem(l.name), 100);
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
