import { ConnectionError, DecodeError, isExpired, isTooManyRequests, KubeApiError } from '../errors/api/index.js';
import { isRefusedBody } from '../errors/api/DecodeError.js';
import { InitialEventsIncompleteError, VeryShortWatchError, WatchDeadlineExceededError, WatchStalledError } from './errors.js';
import type { RelistReason, RetryKind } from './types.js';

export { isExpired, isTooManyRequests } from '../errors/api/index.js';

export { isTooLargeResourceVersion } from '../sources/httpErrors.js';

/**
 * An answer retrying cannot change: 400 BadRequest or 422 Invalid. Final by
 * default for a LIST or a plain WATCH; for the streaming-list request it only
 * means paged lists must be used instead.
 */
export function isTerminalByDefault(err: unknown): boolean {
  // A throttle is retried whatever status carries it (a proxy may send reason TooManyRequests with a 400).
  return err instanceof KubeApiError && (err.status === 400 || err.status === 422) && !isTooManyRequests(err);
}

/** What to do after a failure: which kind of retry it is, what to run next, and how long the server asked to wait. */
export interface Disposition {
  readonly kind: RetryKind;
  /** The request to make next: resume the watch, or list again. */
  readonly then: 'watch' | 'list';
  /** Why a failed watch leads to a relist (only when `then` is 'list' after a watch). */
  readonly relist?: RelistReason;
  /** The server's Retry-After, in milliseconds (429 and 5xx), waited within the policy's bounds (HI-50). */
  readonly retryAfterMs?: number;
}

/**
 * The server's Retry-After in milliseconds, for the answers it is honoured on:
 * a throttle (429, or reason TooManyRequests) and any 5xx, as client-go's
 * REST client does (HI-51). How long is actually waited is the retry
 * policy's call (capped, HI-50).
 */
function honouredRetryAfterMs(err: unknown): number | undefined {
  if (!(err instanceof KubeApiError) || (err.status < 500 && !isTooManyRequests(err))) return undefined;
  // From the `Retry-After` header, else from the Status's details.
  const seconds = err.retryAfterSeconds ?? err.details?.details?.retryAfterSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

function withRetryAfter(d: Disposition, err: unknown): Disposition {
  const ms = honouredRetryAfterMs(err);
  return ms === undefined ? d : { ...d, retryAfterMs: ms };
}

/** Codes of a connection that never carried a response: the request did not reach a server that answered. */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'CREDENTIALS']);

/**
 * Sorts a failure of the list phase (paged or streaming) or of the watch
 * into its retry kind and next step.
 *
 * After a watch: stalls, idle timeouts, undecodable lines and broken
 * connections resume from the last resourceVersion (the watch replays what
 * was missed; when that is too old the server answers 410); a connection cut
 * after the watch was established is a watch that ended (HI-53); 429 resumes
 * after its wait; 410, a very short watch and anything else relist, as
 * client-go does. A list failure always lists again. A 429 or 5xx carries
 * the server's Retry-After.
 *
 * @param err what failed
 * @param phase where it failed
 * @param established for a watch: it delivered something or stayed open past the very-short limit
 * @returns the kind, the next step and any Retry-After
 */
export function classifyFailure(err: unknown, phase: 'list' | 'watch', established = false): Disposition {
  if (isTooManyRequests(err)) return withRetryAfter({ kind: 'throttled', then: phase }, err);
  // A watch that went silent past the source's idle timeout is a stall too, re-watched at once.
  if (err instanceof WatchStalledError || (err instanceof ConnectionError && err.code === 'IDLE_TIMEOUT')) return { kind: 'stalled', then: phase };
  // A body refused by a bound or an encoding will likely come again: it waits as a server fault does (HI-28).
  if (err instanceof DecodeError) return { kind: isRefusedBody(err) ? 'server' : 'decode', then: phase };
  // A streaming list whose initial events ran past the request's deadline is as incomplete as one cut short (HI-61).
  if (err instanceof InitialEventsIncompleteError || err instanceof WatchDeadlineExceededError) return { kind: 'initial-events-incomplete', then: 'list' };
  if (phase === 'list') return withRetryAfter({ kind: isExpired(err) ? 'expired' : 'server', then: 'list' }, err);
  if (err instanceof ConnectionError) {
    const cut = established && !NEVER_CONNECTED.has(err.code ?? '');
    return { kind: cut ? 'watch-closed' : 'server', then: 'watch' };
  }
  if (isExpired(err)) return { kind: 'expired', then: 'list', relist: 'expired' };
  if (err instanceof VeryShortWatchError) return { kind: 'very-short-watch', then: 'list', relist: 'very-short-watch' };
  return withRetryAfter({ kind: 'server', then: 'list', relist: 'watch-failed' }, err);
}
