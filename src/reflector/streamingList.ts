/**
 * The streaming-list strategy of reflect() (`sendInitialEvents=true`): the
 * initial state arrives as events up to the bookmark annotated
 * `k8s.io/initial-events-end`, then the same stream carries on as the watch
 * (docs/semantics.md RF-20..RF-23).
 */
import { ConnectionError, DecodeError, KubeApiError } from '../errors/api/index.js';
import { isExpired, isTerminalByDefault, isTooManyRequests } from './classify.js';
import { InitialEventsIncompleteError, VeryShortWatchError, WatchDeadlineExceededError, WatchStalledError } from './errors.js';
import type { ReflectorContext } from './reflectorContext.js';
import { checkObject, isInitialEventsEnd, metaOf, objectKey } from './watchEvents.js';
import { WatchStream } from './watchStream.js';

/** A watch shorter than this with no events counts as a failure (docs/semantics.md RF-15). */
export const VERY_SHORT_WATCH_MS = 1000;

/**
 * How a streaming list ended: with the initial state (and the open stream to
 * watch on), or with an error and whether a paged list should be tried in its
 * place for this cycle.
 */
export type StreamingListResult<T> =
  | { readonly ok: true; readonly stream: WatchStream<T> }
  | { readonly ok: false; readonly error: unknown; readonly fallback: boolean };

/**
 * Errors after which the streaming list itself is tried again rather than
 * replaced by a paged list: faults a new request fixes (a stall, a line that
 * would not parse, a stream cut before its end bookmark or kept open past its
 * timeout without reaching it (HI-61), an expired resourceVersion), and faults a paged list would meet as well (connection
 * errors, 429, 5xx, 401/403; docs/semantics.md RF-22).
 */
function retriedAsStream(error: unknown): boolean {
  return (
    error instanceof WatchStalledError ||
    error instanceof DecodeError ||
    error instanceof InitialEventsIncompleteError ||
    error instanceof WatchDeadlineExceededError ||
    isExpired(error) ||
    error instanceof ConnectionError ||
    isTooManyRequests(error) ||
    (error instanceof KubeApiError && (error.status >= 500 || error.status === 401 || error.status === 403))
  );
}

/**
 * One streaming-list request. On success emits Replace and returns the still
 * open stream. A rejected request (400/422) and other unknown failures ask
 * for a paged fallback; so does a stream that closes within a second without
 * any event, as in client-go.
 *
 * @returns the outcome, or undefined when the subscription ended meanwhile
 */
export async function streamingList<T>(ctx: ReflectorContext<T>): Promise<StreamingListResult<T> | undefined> {
  let stream: WatchStream<T>;
  try {
    stream = new WatchStream(ctx, {
      resourceVersion: ctx.rvUnavailable ? '' : ctx.lastSyncRv,
      resourceVersionMatch: 'NotOlderThan',
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      timeoutSeconds: watchTimeoutSeconds(ctx),
    });
  } catch (error) {
    return { ok: false, error, fallback: !retriedAsStream(error) };
  }
  const state = new Map<string, T>();
  let received = 0;
  let endRv: string | undefined;
  let error: unknown;
  try {
    for (;;) {
      const next = await stream.next(true);
      if (ctx.stopped || next.done === true) break;
      const event = next.value;
      received += 1;
      ctx.count('events');
      if (isInitialEventsEnd(event)) {
        endRv = metaOf(event.object)?.resourceVersion ?? '';
        break;
      }
      if (event.type === 'BOOKMARK') continue;
      try {
        checkObject(event);
      } catch (unusable) {
        // As in a watch: reported and skipped, since a new request would meet it again.
        if (ctx.report(unusable)) return undefined;
        continue;
      }
      if (event.type === 'DELETED') state.delete(objectKey(event.object));
      else state.set(objectKey(event.object), event.object);
    }
  } catch (caught) {
    error = caught;
  }
  if (ctx.stopped) {
    stream.close();
    return undefined;
  }
  if (endRv !== undefined) {
    ctx.replace([...state.values()], endRv);
    return { ok: true, stream };
  }
  stream.close();
  if (error !== undefined) {
    // Our resourceVersion is too old for the server: the next streaming list starts from "now" (RF-22).
    if (isExpired(error)) ctx.rvUnavailable = true;
    return { ok: false, error, fallback: isTerminalByDefault(error) || !retriedAsStream(error) };
  }
  const lasted = ctx.now() - stream.startedAt;
  if (received === 0 && lasted < VERY_SHORT_WATCH_MS) return { ok: false, error: new VeryShortWatchError(lasted), fallback: true };
  return { ok: false, error: new InitialEventsIncompleteError(received), fallback: false };
}

/** A watch timeout at random in [min, 2·min) seconds, spreading reconnects (docs/semantics.md RF-13). */
export function watchTimeoutSeconds<T>(ctx: ReflectorContext<T>): number {
  const min = ctx.opts.minWatchTimeoutSeconds;
  const r = ctx.opts.random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 0.999_999) : 0;
  return Math.floor(min + unit * min);
}
