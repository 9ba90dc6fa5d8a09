import { EMPTY, merge, mergeMap, type Observable } from 'rxjs';
import { CallbackError } from '../errors/CallbackError.js';
import { toError } from '../errors/reportError.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import type { InformerEvent } from '../store/events.js';
import type { KubeObject } from '../store/types.js';
import { ownerKeys } from '../operators/ownerKeys.js';
import type { ControllerSource, OwnsSource, WatchesSource } from './types.js';

/** The sources a controller subscribes to, checked. */
export interface Triggers<T> {
  readonly primary: ControllerSource<T>;
  readonly owns: readonly OwnsSource[];
  readonly watches: readonly WatchesSource<unknown>[];
}

/**
 * Every key any source says needs a reconcile, in arrival order (duplicates
 * included: the work queue collapses them). Subscribing subscribes to every
 * source, and so starts their informers; unsubscribing lets them go.
 */
export function triggerKeys<T>(triggers: Triggers<T>, report: (err: Error) => void): Observable<string> {
  const { primary } = triggers;
  const primaryKeys = primary.pipe(
    mergeMap((event: InformerEvent<T>) => {
      try {
        return [primary.store.keyOf(event.obj)];
      } catch (err) {
        report(toError(err));
        return EMPTY;
      }
    }),
  );
  const owned = triggers.owns.map(({ source, ...options }) => source.pipe(ownerKeys<KubeObject>(options)));
  const watched = triggers.watches.map(({ source, map }) =>
    source.pipe(
      mergeMap((event: InformerEvent<unknown>) => {
        const objects = event.type === 'update' ? [event.oldObj, event.obj] : [unwrapTombstone(event.obj)];
        const keys = new Set<string>();
        for (const obj of objects) {
          // A tombstone learned by relist may carry no last state: there is nothing to map.
          if (obj === undefined) continue;
          try {
            const mapped = map(obj);
            if (mapped === undefined || mapped === null) continue;
            for (const key of typeof mapped === 'string' ? [mapped] : mapped) {
              if (typeof key !== 'string' || key === '') throw new TypeError(`a key must be a non-empty string, got ${JSON.stringify(key)}`);
              keys.add(key);
            }
          } catch (err) {
            report(new CallbackError('controller', `the watches mapper of ${source.name ?? 'a source'} threw; nothing was enqueued for that object`, err));
          }
        }
        return [...keys];
      }),
    ),
  );
  return merge(primaryKeys, ...owned, ...watched);
}

/** Every source, for the sync gate. */
export function allSources<T>(triggers: Triggers<T>): ControllerSource<unknown>[] {
  return [triggers.primary as ControllerSource<unknown>, ...triggers.owns.map((o) => o.source as ControllerSource<unknown>), ...triggers.watches.map((w) => w.source)];
}
