// The one fan-out of a multi-cluster informer's events to its subscribers
// and its `cluster(name)` views (LT-21, LT-25, LT-26). Internal.

import type { Subscriber } from 'rxjs';
import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import type { KubeObject, ReadonlyIndexer } from '../store/types.js';
import { clusterKey } from './clusterKey.js';
import type { ClusterEvent } from './types.js';

interface Listener<T> {
  readonly subscriber: Subscriber<ClusterEvent<T>>;
  // Set while it settles (its replay, then the rest of that turn): what it holds by multi-cluster key, so that an event
  // whose effect the replay already gave it, or which deletes what it was never given, is not told.
  held: Map<string, T> | undefined;
}

/** The subscribers of a run and of each cluster, and how an event reaches them. */
export interface ClusterFanOut<T> {
  /** Tells `e` to every subscriber and to the views of its cluster: one lookup, whatever the number of views. */
  emit(e: ClusterEvent<T>): void;
  /** Adds a subscriber of everything (`cluster` undefined) or of one cluster: it hears every event from now on. */
  attach(subscriber: Subscriber<ClusterEvent<T>>, cluster: string | undefined): Attached;
}

/** A subscriber on the fan-out. */
export interface Attached {
  /** Gives it the cache (of its cluster) as adds; events meanwhile reach it, each once (LT-25, LT-26). */
  replay(): void;
  detach(): void;
}

/** Where a cluster's store is read for a replay: each read asks again, so a cluster that leaves or is taken over mid-replay is seen. */
type StoreOf<T> = (cluster: string) => ReadonlyIndexer<T> | undefined;

/** A fan-out over the clusters `clusters()` names, whose stores `storeOf` gives. */
export function clusterFanOut<T>(clusters: () => Iterable<string>, storeOf: StoreOf<T>): ClusterFanOut<T> {
  // By cluster (undefined: subscribers of everything); copied on change, so a delivery loop goes over the listeners
  // there when the event began.
  const listeners = new Map<string | undefined, readonly Listener<T>[]>();

  const deliver = (l: Listener<T>, e: ClusterEvent<T>): void => {
    if (l.held === undefined || isNews(l.held, e)) l.subscriber.next(e);
  };

  const replay = (l: Listener<T>, only: string | undefined): void => {
    const held = new Map<string, T>();
    l.held = held;
    for (const cluster of only === undefined ? [...clusters()] : [only]) {
      for (const key of storeOf(cluster)?.listKeys() ?? []) {
        if (l.subscriber.closed) return;
        const obj = storeOf(cluster)?.getByKey(key);
        const at = clusterKey(cluster, key);
        // An event during the replay already told it of this key (or of its deletion): the store says no more.
        if (obj === undefined || held.has(at)) continue;
        held.set(at, obj);
        l.subscriber.next({ type: 'add', obj, isInInitialList: true, cluster, key: at });
      }
    }
    // What a cluster was announcing when this subscriber came is announced within this turn; later events are news.
    queueMicrotask(() => (l.held = undefined));
  };

  return {
    emit: (e) => {
      for (const l of listeners.get(undefined) ?? []) deliver(l, e);
      for (const l of listeners.get(e.cluster) ?? []) deliver(l, e);
    },
    attach: (subscriber, cluster) => {
      const l: Listener<T> = { subscriber, held: undefined };
      listeners.set(cluster, [...(listeners.get(cluster) ?? []), l]);
      return {
        replay: () => replay(l, cluster),
        detach: () => {
          const rest = (listeners.get(cluster) ?? []).filter((x) => x !== l);
          if (rest.length === 0) listeners.delete(cluster);
          else listeners.set(cluster, rest);
        },
      };
    },
  };
}

/** Whether a settling subscriber holding `held` is to be told `e` (LT-26), keeping `held` up to date. */
function isNews<T>(held: Map<string, T>, e: ClusterEvent<T>): boolean {
  if (e.type === 'delete') {
    if (!held.has(e.key)) return false;
    // A tombstone of another object under this name (another uid) removes one it never held: the one it holds came after.
    if (e.obj instanceof DeletedFinalStateUnknown && isAnother(e.obj.obj, held.get(e.key))) return false;
    held.delete(e.key);
    return true;
  }
  const had = held.get(e.key);
  if (had === e.obj || (e.type === 'update' && had === undefined)) return false;
  held.set(e.key, e.obj);
  return true;
}

/** Whether two objects are known to be different objects (both have a uid, and they differ). */
function isAnother(a: unknown, b: unknown): boolean {
  const ua = (a as KubeObject | undefined)?.metadata?.uid;
  const ub = (b as KubeObject | undefined)?.metadata?.uid;
  return ua !== undefined && ub !== undefined && ua !== ub;
}
