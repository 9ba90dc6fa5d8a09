// The fan-out of a multi-cluster informer, alone: who hears an event, and
// what a subscriber that joins mid-run is told during its replay and for the
// rest of that turn (LT-25, LT-26, LT-29).

import type { V1Pod } from '@kubernetes/client-node';
import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { clusterFanOut, type Attached, type ClusterFanOut } from '../../src/multicluster/clusterFanOut.js';
import type { ClusterEvent } from '../../src/multicluster/types.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import { createIndexer } from '../../src/store/indexer.js';
import type { Indexer } from '../../src/store/types.js';
import { pod } from '../helpers/objects.js';

/** Two clusters' stores, a fan-out over them, and the events a cluster would announce. */
function fleetOf(names: readonly string[]) {
  const stores = new Map<string, Indexer<V1Pod>>(names.map((n) => [n, createIndexer<V1Pod>()]));
  const fanOut: ClusterFanOut<V1Pod> = clusterFanOut<V1Pod>(() => stores.keys(), (c) => stores.get(c));
  const key = (cluster: string, p: V1Pod) => `${cluster}/default/${p.metadata?.name}`;
  const add = (cluster: string, p: V1Pod): ClusterEvent<V1Pod> => ({ type: 'add', obj: p, isInInitialList: false, cluster, key: key(cluster, p) });
  const update = (cluster: string, was: V1Pod, p: V1Pod): ClusterEvent<V1Pod> => ({ type: 'update', oldObj: was, obj: p, cluster, key: key(cluster, p) });
  const del = (cluster: string, p: V1Pod | DeletedFinalStateUnknown<V1Pod>, name: string): ClusterEvent<V1Pod> => ({ type: 'delete', obj: p, cluster, key: `${cluster}/default/${name}`, reason: 'deleted' });
  /** Subscribes a listener (of one cluster, or all), with `onEvent` run inside each delivery; replays when asked. */
  const join = (cluster: string | undefined, replay: boolean, onEvent: (e: ClusterEvent<V1Pod>, heard: string[]) => void = () => {}) => {
    const heard: string[] = [];
    let attached: Attached | undefined;
    const sub = new Observable<ClusterEvent<V1Pod>>((subscriber) => {
      attached = fanOut.attach(subscriber, cluster);
      return () => attached?.detach();
    }).subscribe((e) => {
      heard.push(`${e.type} ${e.key}`);
      onEvent(e, heard);
    });
    if (replay) attached?.replay();
    return { heard, sub, replay: () => attached?.replay() };
  };
  return { stores, fanOut, add, update, del, join, store: (c: string) => stores.get(c) as Indexer<V1Pod> };
}

const named = (name: string, uid = name, rv = '1'): V1Pod => pod(name, { uid, rv }) as V1Pod;

describe('clusterFanOut', () => {
  it("tells an event to every subscriber and to its cluster's views only, and not to a subscriber that left", () => {
    const f = fleetOf(['a', 'b']);
    const all = f.join(undefined, false);
    const viewA = f.join('a', false);
    const viewB = f.join('b', false);
    f.fanOut.emit(f.add('a', named('x')));
    viewA.sub.unsubscribe();
    f.fanOut.emit(f.add('a', named('y')));
    expect([all.heard, viewA.heard, viewB.heard]).toEqual([['add a/default/x', 'add a/default/y'], ['add a/default/x'], []]);
  });

  it('during a replay: a replayed key hears its events; an update or delete of a key yet to come is not told; an add is told once', () => {
    const f = fleetOf(['a', 'b']);
    const [p0, p1, p2] = [named('p0'), named('p1'), named('p2')];
    for (const p of [p0, p1, p2]) f.store('a').add(p);
    const q0 = named('q0');
    f.store('b').add(q0);
    const p0v2 = named('p0', 'p0', '2');
    const p1v2 = named('p1', 'p1', '2');
    const fresh = named('fresh');
    // At its first object the subscriber's handler makes cluster a change, as a store then its announcement would.
    const late = f.join(undefined, true, (_, heard) => {
      if (heard.length !== 1) return;
      f.store('a').update(p0v2);
      f.fanOut.emit(f.update('a', p0, p0v2));
      f.store('a').update(p1v2);
      f.fanOut.emit(f.update('a', p1, p1v2));
      f.store('a').delete(p2);
      f.fanOut.emit(f.del('a', p2, 'p2'));
      f.store('b').add(fresh);
      f.fanOut.emit(f.add('b', fresh));
    });
    expect(late.heard).toEqual(['add a/default/p0', 'update a/default/p0', 'add b/default/fresh', 'add a/default/p1', 'add b/default/q0']);
  });

  it('for the rest of the turn it joined in, what its replay gave is not told again; after that, every event is', async () => {
    const f = fleetOf(['x']);
    // A take-over as the member makes it: the store is already the new connection's when the differences are told.
    const same = named('same', 'uid-old');
    const gone = named('gone');
    const sameNow = named('same', 'uid-new');
    const added = named('new');
    f.store('x').add(sameNow);
    f.store('x').add(added);
    const late = f.join(undefined, true);
    f.fanOut.emit(f.del('x', new DeletedFinalStateUnknown('default/gone', gone), 'gone'));
    f.fanOut.emit(f.del('x', new DeletedFinalStateUnknown('default/same', same), 'same'));
    f.fanOut.emit(f.add('x', sameNow));
    f.fanOut.emit(f.add('x', added));
    expect(late.heard).toEqual(['add x/default/same', 'add x/default/new']);
    // A real change within the turn is told: another object, and a delete of what it holds.
    const addedV2 = named('new', 'new', '2');
    f.fanOut.emit(f.update('x', added, addedV2));
    f.fanOut.emit(f.del('x', sameNow, 'same'));
    expect(late.heard.slice(2)).toEqual(['update x/default/new', 'delete x/default/same']);
    await Promise.resolve();
    // Once the turn is over nothing is checked: the fan-out passes on what it is given.
    f.fanOut.emit(f.add('x', addedV2));
    f.fanOut.emit(f.del('x', gone, 'gone'));
    expect(late.heard.slice(4)).toEqual(['add x/default/new', 'delete x/default/gone']);
  });

  it('a replay of a cluster view gives only its cluster; a subscriber that leaves mid-replay hears nothing more', () => {
    const f = fleetOf(['a', 'b']);
    for (const n of ['a0', 'a1', 'a2']) f.store('a').add(named(n));
    f.store('b').add(named('b0'));
    const view = f.join('b', true);
    const leaving = f.join(undefined, false, () => leaving.sub.unsubscribe());
    leaving.replay();
    f.fanOut.emit(f.add('a', named('a3')));
    expect([view.heard, leaving.heard]).toEqual([['add b/default/b0'], ['add a/default/a0']]);
  });
});
