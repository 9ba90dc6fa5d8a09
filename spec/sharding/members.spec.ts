/**
 * Membership from shard Leases on a virtual clock: a member is live while its Lease names it and changed
 * less than its duration ago on the observer's clock; a silent Lease expires without any event.
 */
import { asyncScheduler, Subject, VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/leaderelection/leaseLock.js';
import { liveShards, type ShardMembers } from '../../src/sharding/members.js';
import type { InformerEvent } from '../../src/operators/informerEvent.js';

let rv = 0;
function lease(name: string, holder: string, renew: number, seconds = 10): Lease {
  rv++;
  return {
    metadata: { name, namespace: 'shards', resourceVersion: String(rv) },
    spec: { holderIdentity: holder, leaseDurationSeconds: seconds, renewTime: new Date(renew).toISOString(), leaseTransitions: 0 },
  };
}

function setup(): { clock: VirtualTimeScheduler; events: Subject<InformerEvent<Lease>>; seen: ShardMembers[]; at: (t: number, fn: () => void) => void } {
  const clock = new VirtualTimeScheduler(VirtualAction, Infinity);
  const events = new Subject<InformerEvent<Lease>>();
  const seen: ShardMembers[] = [];
  events.pipe(liveShards(clock)).subscribe((m) => seen.push(m));
  return { clock, events, seen, at: (t, fn) => void clock.schedule(fn, t) };
}

const liveAt = (seen: readonly ShardMembers[]): string[][] => seen.map((m) => [...m.live]);

describe('liveShards', () => {
  it('starts empty, takes listed members for live, and drops one whose Lease stood still for its duration', () => {
    const { clock, events, seen, at } = setup();
    at(0, () => {
      events.next({ type: 'add', obj: lease('a', 'a', 0), isInInitialList: true });
      events.next({ type: 'add', obj: lease('b', 'b', 0), isInInitialList: true });
    });
    // a renews every 2 s; b never does.
    for (let t = 2_000; t <= 20_000; t += 2_000) at(t, () => events.next({ type: 'update', oldObj: lease('a', 'a', t - 2_000), obj: lease('a', 'a', t) }));
    clock.flush();
    expect(seen[0]!.live).toEqual([]);
    const changes = liveAt(seen).filter((l, i, all) => i === 0 || l.join() !== all[i - 1]!.join());
    // a, too, leaves 10 s after its last renewal at 20 s.
    expect(changes).toEqual([[], ['a'], ['a', 'b'], ['a'], []]);
    // b leaves exactly 10 s after it was first seen, by a timer, with no event.
    const drop = seen.findIndex((m, i) => i > 0 && m.live.length === 1 && seen[i - 1]!.live.length === 2);
    expect(drop).toBeGreaterThan(0);
    expect(seen[drop]!.leases.get('b')).toMatchObject({ live: false, observedAt: 0, expiresAt: 10_000 });
  });

  it('counts from when this replica saw a change, never from the times written in the Lease', () => {
    const { clock, events, seen, at } = setup();
    // A renewTime far in the past (another machine's clock) does not make a freshly seen Lease expired.
    at(5_000, () => events.next({ type: 'add', obj: lease('a', 'a', -1e9), isInInitialList: true }));
    let liveAt9 = false;
    at(14_999, () => (liveAt9 = seen.at(-1)!.live.includes('a')));
    clock.flush();
    expect(liveAt9).toBe(true);
    expect(seen.at(-1)!.live).toEqual([]);
    expect(seen.at(-1)!.leases.get('a')!.expiresAt).toBe(15_000);
  });

  it('a Lease held by someone else (a sharder fencing it) or released is not a member', () => {
    const { clock, events, seen, at } = setup();
    at(0, () => {
      events.next({ type: 'add', obj: lease('a', 'a', 0), isInInitialList: false });
      events.next({ type: 'add', obj: lease('b', 'sharder-x', 0), isInInitialList: false });
      events.next({ type: 'add', obj: lease('c', '', 0, 1), isInInitialList: false });
    });
    at(1_000, () => events.next({ type: 'update', oldObj: lease('a', 'a', 0), obj: lease('a', 'someone', 1_000) }));
    at(2_000, () => events.next({ type: 'delete', obj: lease('b', 'sharder-x', 0) }));
    clock.flush();
    const at0 = seen.filter((m) => m.leases.size === 3)[0]!;
    expect(at0.live).toEqual(['a']);
    expect(seen.at(-1)!.live).toEqual([]);
    expect([...seen.at(-1)!.leases.keys()].sort()).toEqual(['a', 'c']);
  });

  it('a renewal that changes nothing but the resourceVersion keeps the clock', () => {
    const { clock, events, seen, at } = setup();
    const first = lease('a', 'a', 0);
    at(0, () => events.next({ type: 'add', obj: first, isInInitialList: false }));
    at(9_000, () => events.next({ type: 'update', oldObj: first, obj: { ...first, metadata: { ...first.metadata, resourceVersion: '999' } } }));
    clock.flush();
    expect(seen.at(-1)!.live).toEqual([]);
    expect(seen.at(-1)!.leases.get('a')!.observedAt).toBe(0);
  });

  it('unsubscribing clears the expiry timer', () => {
    const clock = new VirtualTimeScheduler(VirtualAction, Infinity);
    const events = new Subject<InformerEvent<Lease>>();
    const sub = events.pipe(liveShards(clock)).subscribe();
    events.next({ type: 'add', obj: lease('a', 'a', 0), isInInitialList: false });
    expect(clock.actions.length).toBe(1);
    sub.unsubscribe();
    expect(clock.actions.filter((a) => !a.closed).length).toBe(0);
  });

  it('forwards the source error', () => {
    const events = new Subject<InformerEvent<Lease>>();
    let error: unknown;
    events.pipe(liveShards(asyncScheduler)).subscribe({ error: (e: unknown) => (error = e) });
    events.error(new Error('gone'));
    expect((error as Error).message).toBe('gone');
  });
});
