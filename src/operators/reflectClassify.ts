import { ConnectionError, ExpiredError, KubeApiError, TooManyRequestsError } from '../sources/errors/index.js';

/** 410 Gone / reason Expired: the resourceVersion or continue token is older than the server keeps. */
export function isExpired(err: unknown): boolean {
  if (err instanceof ExpiredError) return true;
  if (!(err instanceof KubeApiError)) return false;
  return err.status === 410 || err.reason === 'Expired' || err.reason === 'Gone';
}

export { isTooLargeResourceVersion } from '../sources/httpErrors.js';

/** 429: the server asked to slow down. */
export function isTooManyRequests(err: unknown): err is KubeApiError {
  return err instanceof TooManyRequestsError || (err instanceof KubeApiError && err.status === 429);
}

/** Seconds from `Retry-After` (header or Status details), when the server gave any. */
export function retryAfterSeconds(err: unknown): number | undefined {
  const fromHeader = err instanceof TooManyRequestsError ? err.retryAfterSeconds : undefined;
  const fromStatus = err instanceof KubeApiError ? err.details?.details?.retryAfterSeconds : undefined;
  const value = fromHeader ?? fromStatus;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A watch that went silent past the source's idle timeout: a normal end, re-watched at once. */
export function isIdleTimeout(err: unknown): boolean {
  return err instanceof ConnectionError && err.code === 'IDLE_TIMEOUT';
}

/**
 * The server refused the streaming-list request itself (400 BadRequest, 422
 * Invalid): it will not start accepting it on a retry, so paged lists are
 * used from now on.
 */
export function isWatchListRejected(err: unknown): boolean {
  return err instanceof KubeApiError && (err.status === 400 || err.status === 422);
}

/**
 * Errors after which a streaming list is retried (with backoff) rather than
 * replaced by a paged list: the paged list would meet the same outage or the
 * same credentials (client-go RF-22 retries connection errors and 429).
 */
export function isRetriedNotFallenBack(err: unknown): boolean {
  if (err instanceof ConnectionError || isTooManyRequests(err)) return true;
  return err instanceof KubeApiError && (err.status >= 500 || err.status === 401 || err.status === 403);
}
