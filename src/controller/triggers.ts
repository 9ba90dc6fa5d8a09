import { merge, Observable } from 'rxjs';
import { CallbackError } from '../errors/CallbackError.js';
import { toError } from '../errors/reportError.js';
import { ownerPointers, resolveOwnerOptions } from '../operators/ownerKeys.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import type { KubeObject } from '../store/types.js';
import { OwnsCheck } from './ownsCheck.js';
import type { ControllerSource, OwnsSource, WatchesSource } from './types.js';
import { syncedOf } from '../informer/syncedOf.js';
import { describeValue } from '../options/validate.js';
import { filterBy, predicateError } from '../operators/predicateFilter.js';
import type { Predicate } from '../operators/predicates.js';

/** The sources a controller subscribes to, checked. */
export interface Triggers<T> {
  readonly primary: ControllerSource<T>;
  /** Only the primary's changes these pass enqueue (CR-113). @default [] */
  readonly primaryPredicates?: readonly Predicate<T>[];
  readonly owns: readonly OwnsSource[];
  readonly watches: readonly WatchesSource<unknown>[];
}

/** A key some source says needs a reconcile, and how urgently. */
export interface Trigger {
  readonly key: string;
  readonly priority: number;
}

/**
 * The priority of the keys an event enqueues: `backlog` for what the
 * controller has already seen or must see once anyway — the initial list
 * (and the cache replayed to a late subscriber), and resyncs (an update
 * whose resourceVersion did not change) — 0 for a live change, as
 * controller-runtime's handlers do with its priority queue.
 */
function priorityOf(event: InformerEvent<unknown>, backlog: number): number {
  if (event.type === 'add') return event.isInInitialList ? backlog : 0;
  if (event.type === 'update') {
    const before = (event.oldObj as KubeObject | undefined)?.metadata?.resourceVersion;
    const after = (event.obj as KubeObject | undefined)?.metadata?.resourceVersion;
    return before !== undefined && before === after ? backlog : 0;
  }
  return 0;
}

/**
 * A source's events that pass `predicates` (all of them when there are
 * none), with `predicateFilter`'s rules: adds pass the first time a key is
 * seen, updates when a value changed, deletes always (CR-113, CR-114).
 */
function passing<O>(source: ControllerSource<O>, predicates: readonly Predicate<O>[], report: (err: Error) => void): Observable<InformerEvent<O>> {
  if (predicates.length === 0) return source;
  const where = `controller: the predicates of ${source.name ?? 'a source'}`;
  const filter = filterBy(predicates as readonly Predicate<KubeObject>[], (err) => report(predicateError(where, err)));
  return filter(source as unknown as Observable<InformerEvent<KubeObject>>) as unknown as Observable<InformerEvent<O>>;
}

/** Keys from a source's events, with the priority of each event; what `keysOf` throws is reported and enqueues nothing. */
function keysFrom<O>(
  source: ControllerSource<O>,
  events$: Observable<InformerEvent<O>>,
  backlog: number,
  keysOf: (event: InformerEvent<O>) => Iterable<string>,
  onSynced?: () => void,
): Observable<Trigger> {
  return new Observable<Trigger>((subscriber) => {
    const events = events$.subscribe({
      next: (event) => {
        const priority = priorityOf(event, backlog);
        const scope = source.scopeKey;
        for (const key of keysOf(event)) subscriber.next({ key: scope === undefined ? key : scope(key, event), priority });
      },
      error: (err: unknown) => subscriber.error(err),
      complete: () => subscriber.complete(),
    });
    // After the events: a source replays its cache on subscribe, so a sync already reached was seen whole.
    if (onSynced !== undefined && !events.closed) {
      events.add(
        syncedOf(source).subscribe((synced) => {
          if (synced) onSynced();
        }),
      );
    }
    return events;
  });
}

/**
 * Every key any source says needs a reconcile, in arrival order (duplicates
 * included: the work queue collapses them, keeping the higher priority).
 * Subscribing subscribes to every source, and so starts their informers;
 * unsubscribing lets them go. `backlog` is the priority of keys from
 * initial lists and resyncs.
 */
export function triggerKeys<T>(triggers: Triggers<T>, backlog: number, report: (err: Error) => void): Observable<Trigger> {
  const { primary } = triggers;
  const primaryKeys = keysFrom(primary, passing(primary, triggers.primaryPredicates ?? [], report), backlog, (event) => {
    try {
      return [primary.store.keyOf(event.obj)];
    } catch (err) {
      report(toError(err));
      return [];
    }
  });
  const owned = triggers.owns.map(({ source, predicates, ...options }, i) => {
    const resolved = resolveOwnerOptions(`controller: owns[${i}]`, options);
    const check = new OwnsCheck(`owns[${i}]`, { kind: options.kind, apiVersion: options.apiVersion }, resolved, source.name ?? 'the owned source', report);
    return keysFrom(
      source,
      passing(source, predicates ?? [], report),
      backlog,
      (event) => {
        check.see(event);
        const objects = event.type === 'update' ? [event.oldObj, event.obj] : [event.type === 'delete' ? unwrapTombstone(event.obj) : event.obj];
        // Old owners first, then new ones, each once: a re-parented child wakes both.
        return new Set(objects.flatMap((obj) => ownerPointers(obj, resolved).map((owner) => owner.key)));
      },
      // A source scoped by key (a fleet's) says synced before its parts have listed anything: the check could only
      // judge on the first objects seen, so it waits for a match or for nothing (LT-13).
      source.scopeKey === undefined ? () => check.synced() : undefined,
    );
  });
  const watched = triggers.watches.map(({ source, map, predicates }) =>
    keysFrom(source, passing(source, predicates ?? [], report), backlog, (event) => {
      const objects = event.type === 'update' ? [event.oldObj, event.obj] : [unwrapTombstone(event.obj)];
      const keys = new Set<string>();
      for (const obj of objects) {
        // A tombstone learned by relist may carry no last state: there is nothing to map.
        if (obj === undefined) continue;
        try {
          const mapped = map(obj, event);
          if (mapped === undefined || mapped === null) continue;
          for (const key of typeof mapped === 'string' ? [mapped] : mapped) {
            if (typeof key !== 'string' || key === '') throw new TypeError(`a key must be a non-empty string, got ${describeValue(key)}`);
            keys.add(key);
          }
        } catch (err) {
          report(new CallbackError('controller', `the watches mapper of ${source.name ?? 'a source'} threw; nothing was enqueued for that object`, err));
        }
      }
      return keys;
    }),
  );
  return merge(primaryKeys, ...owned, ...watched);
}

/** Every source, for the sync gate. */
export function allSources<T>(triggers: Triggers<T>): ControllerSource<unknown>[] {
  return [triggers.primary as ControllerSource<unknown>, ...triggers.owns.map((o) => o.source as ControllerSource<unknown>), ...triggers.watches.map((w) => w.source)];
}
