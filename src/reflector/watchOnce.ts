/**
 * One watch of reflect(): from the last resourceVersion (or the stream a
 * streaming list handed over) until the server ends it, it fails, it is cut
 * for silence, or the client ends it past its timeout (HI-60); events go
 * downstream with their resourceVersions tracked as client-go does
 * (RF-13..RF-16).
 */
import { DecodeError } from '../errors/api/index.js';
import type { WatchEvent } from '../sources/types.js';
import { VeryShortWatchError, WatchDeadlineExceededError } from './errors.js';
import type { ReflectorContext } from './reflectorContext.js';
import { VERY_SHORT_WATCH_MS, watchTimeoutSeconds } from './streamingList.js';
import { toReflectorEvent, type WatchedEvent } from './watchEvents.js';
import { WatchStream } from './watchStream.js';

/**
 * A watch that lasted this long (or its whole requested timeout, when that is
 * shorter) was healthy: its end is routine, faults a new request fixes are
 * retried at once again, and the health backoff starts over (HI-52). Five
 * times the very-short limit, so a server that cuts every watch at once never
 * resets anything, while faults a minute apart each start from scratch.
 */
export const HEALTHY_WATCH_MS = 5_000;

/**
 * How a watch ended. `healthy` when it lasted long enough to prove the server
 * sound; `established` when it delivered something (a streaming list's
 * stream has) or outlived the very-short limit, so a connection cut then is
 * a watch that ended (HI-53).
 */
export type WatchOutcome =
  | { readonly ok: true; readonly healthy: boolean }
  | { readonly ok: false; readonly error: unknown; readonly healthy: boolean; readonly established: boolean };

/**
 * Runs one watch to its end.
 *
 * @param ctx the subscription's shared state
 * @param handoff the open stream of a streaming list that reached its end bookmark
 * @returns how it ended (ok for a clean end by the server, or when the subscription ended)
 */
export async function watchOnce<T>(ctx: ReflectorContext<T>, handoff: WatchStream<T> | undefined): Promise<WatchOutcome> {
  const startRv = ctx.lastSyncRv;
  let stream: WatchStream<T>;
  try {
    stream =
      handoff ?? new WatchStream(ctx, { resourceVersion: startRv, timeoutSeconds: watchTimeoutSeconds(ctx), allowWatchBookmarks: true });
  } catch (error) {
    return { ok: false, error, healthy: false, established: false };
  }
  // Resource versions of a stream opened at "" or "0" are only trusted once a non-ADDED event shows up (RF-16);
  // until then its ADDED events are a replay of the current state, a burst that says nothing of the rhythm.
  let propagate = handoff !== undefined || (startRv !== '' && startRv !== '0');
  let received = 0;
  let arrivals = 0;
  ctx.status({ state: 'watching', resourceVersion: startRv });
  const healthy = (): boolean => ctx.now() - stream.startedAt >= Math.min(HEALTHY_WATCH_MS, stream.timeoutMs);
  try {
    // The events of one arrival are read in one asynchronous step of the source, not one per event.
    reading: for (;;) {
      const batch = await stream.nextBatch(!propagate);
      if (ctx.stopped || batch === undefined) break;
      arrivals += 1;
      for (let i = 0; i < batch.length; i++) {
        // One microtask turn between events, as when they came one by one: work the last event scheduled
        // (a handler taking its notification) starts before the next event is applied. When the emitter
        // says nothing was queued, the turn would run nothing, and is skipped (PF-41).
        if (i > 0 && ctx.opts.workQueued()) await undefined;
        // Emitting may end the subscription (a consumer unsubscribing in its handler).
        if (ctx.stopped) break reading;
        // A lazy batch parses the event here: a line that cannot be decoded throws and ends the watch.
        const value = batch.at(i) as WatchEvent<T>;
        let event: WatchedEvent<T>;
        try {
          event = toReflectorEvent(value);
        } catch (invalid) {
          if (!(invalid instanceof DecodeError)) throw invalid;
          // A well-formed event that cannot be used (no name, unknown type) would come back on every
          // resume from the last resourceVersion, so it is reported and skipped, as client-go does;
          // only a line that cannot be parsed at all ends the watch.
          if (ctx.report(invalid)) return { ok: true, healthy: false };
          ctx.status({ state: 'watching', resourceVersion: ctx.lastSyncRv });
          continue;
        }
        received += 1;
        ctx.count('events');
        if (value.type !== 'ADDED') propagate = true;
        if (propagate) ctx.lastSyncRv = event.resourceVersion;
        ctx.emit(event);
      }
    }
  } catch (error) {
    // The client ended a watch the server kept open past its timeout: reported, then a routine end (HI-60).
    if (error instanceof WatchDeadlineExceededError && !ctx.stopped) {
      return ctx.report(error) ? { ok: true, healthy: false } : { ok: true, healthy: healthy() };
    }
    if (!ctx.stopped) return { ok: false, error, healthy: healthy(), established: handoff !== undefined || arrivals > 0 || ctx.now() - stream.startedAt >= VERY_SHORT_WATCH_MS };
  } finally {
    stream.close();
  }
  if (ctx.stopped) return { ok: true, healthy: false };
  const lasted = ctx.now() - stream.startedAt;
  if (handoff === undefined && received === 0 && lasted < VERY_SHORT_WATCH_MS) {
    return { ok: false, error: new VeryShortWatchError(lasted), healthy: false, established: false };
  }
  return { ok: true, healthy: healthy() };
}
