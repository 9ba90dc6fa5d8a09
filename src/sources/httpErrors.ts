import { ConnectionError } from '../errors/api/ConnectionError.js';
import { KubeApiError, type ApiStatus } from '../errors/api/KubeApiError.js';
import { printable } from '../errors/printable.js';
import { wireStatus, type Redact } from '../errors/api/wireText.js';

/**
 * Turns an API server answer (HTTP status plus, when the body was one, its
 * `Status` object) into a {@link KubeApiError}.
 *
 * The error keeps the status, the Status reason, the server's message and the
 * Status itself; `retryAfterSeconds` comes from the `Retry-After` header or,
 * when there is none, the Status details. Tell the answers apart with the
 * guards ({@link isExpired}, {@link isTooManyRequests}, {@link isNotFound}, …):
 * a 410 with the Status `{ reason: 'Expired', message: 'too old resource
 * version: 1 (5)' }` becomes an error `isExpired` accepts. Internal to the
 * sources and the object client; a ListerWatcher of one's own builds a
 * `KubeApiError` directly.
 *
 * Everything the error keeps of the body (message, reason, the Status in
 * `details`) is the server's text with the request's credential replaced by
 * `<redacted>` (given `context.redact`), cut to 2,048 characters and escaped
 * with `printable`, so logging the error cannot drive a terminal or print a
 * token a server echoed (HI-79). `details` is a copy holding the fields of
 * a Status only.
 *
 * @param status The HTTP status, or the Status `code` of a watch ERROR event.
 * @param body The decoded `Status` body, when there was one.
 * @param context Optional request description (`list v1/pods`), `Retry-After` header value, and what removes the request's credential from text.
 * @returns The error; never includes request headers or credentials.
 */
export function errorFromStatus(
  status: number,
  body: ApiStatus | undefined,
  context: { readonly what?: string | undefined; readonly retryAfter?: string | undefined; readonly redact?: Redact | undefined } = {},
): KubeApiError {
  const retryAfter = retryAfterSeconds(context.retryAfter, body);
  body = body === undefined ? undefined : wireStatus(body, context.redact);
  const reason = typeof body?.reason === 'string' && body.reason !== '' ? body.reason : undefined;
  const serverMessage = typeof body?.message === 'string' && body.message !== '' ? body.message : undefined;
  const prefix = context.what === undefined ? '' : `${context.what}: `;
  const message = `${prefix}${status}${reason === undefined ? '' : ` ${reason}`}${serverMessage === undefined ? '' : `: ${serverMessage}`}`;
  return new KubeApiError(status, message, { reason, serverMessage, details: body, retryAfterSeconds: retryAfter });
}

/** The header wins over the Status details because proxies in front of the API server may set only the header. */
function retryAfterSeconds(header: string | undefined, body: ApiStatus | undefined): number | undefined {
  if (header !== undefined && header.trim() !== '') {
    const trimmed = header.trim();
    if (/^\d+$/.test(trimmed)) return Number(trimmed);
    const date = Date.parse(trimmed);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - Date.now()) / 1000));
  }
  const fromBody = body?.details?.retryAfterSeconds;
  return typeof fromBody === 'number' && Number.isFinite(fromBody) && fromBody >= 0 ? fromBody : undefined;
}

/**
 * Tells whether the API server refused a LIST because the requested
 * resourceVersion is newer than anything it has seen ("Too large resource
 * version"), which happens after switching to a lagging API server replica.
 * Like an expired resourceVersion, the cure is a consistent list (with the
 * resourceVersion unset).
 *
 * Recognised from the Status cause `ResourceVersionTooLarge` or, for servers
 * that only say it in words (a `Timeout` Status), from the message.
 *
 * ## Example
 * ```ts
 * import type { ListerWatcher } from 'rxkube';
 * import { isTooLargeResourceVersion } from 'rxkube/core';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const source: ListerWatcher<V1Pod>;
 * declare const signal: AbortSignal;
 *
 * try { await source.list({ resourceVersion: '999999' }, signal); }
 * catch (err) { if (isTooLargeResourceVersion(err)) { await source.list({}, signal); } }
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} that says the resourceVersion is too large.
 */
export function isTooLargeResourceVersion(err: unknown): boolean {
  if (!(err instanceof KubeApiError)) return false;
  const causes = err.details?.details?.causes ?? [];
  if (causes.some((c) => c.reason === 'ResourceVersionTooLarge' || /too large resource version/i.test(c.message ?? ''))) {
    return true;
  }
  return /too large resource version/i.test(`${err.serverMessage ?? ''} ${err.message}`);
}

/** Error codes that name a connection-level failure rather than a bug; anything else found on an error is kept as-is. */
const SOCKET_CODES: Readonly<Record<string, string>> = {
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_CLOSED: 'ECONNRESET',
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_HEADERS_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_BODY_TIMEOUT: 'ETIMEDOUT',
  ERR_STREAM_PREMATURE_CLOSE: 'ECONNRESET',
};

/**
 * Wraps a transport failure (refused, reset, DNS, TLS, a body cut short) in a
 * {@link ConnectionError} carrying the most specific system code found on
 * the error or its causes. Messages are scrubbed of `user:password@` parts
 * a proxy URL might carry: an undici error whose cause has the code
 * `ECONNREFUSED` becomes a ConnectionError with `code: 'ECONNREFUSED'`.
 * Internal to the sources and the object client.
 *
 * @param err The error thrown by the HTTP client.
 * @param what A short request description for the message (`watch v1/pods`).
 * @returns A ConnectionError (the given one unchanged when it already is one).
 */
export function connectionErrorFrom(err: unknown, what: string): ConnectionError {
  if (err instanceof ConnectionError) return err;
  const code = findCode(err, 0);
  const mapped = code === undefined ? undefined : (SOCKET_CODES[code] ?? code);
  const detail = printable(scrub(err instanceof Error ? err.message : String(err)));
  const label = mapped ?? 'connection failed';
  return new ConnectionError(`${what}: ${label}${detail !== '' && detail !== mapped ? `: ${detail}` : ''}`, { code: mapped, cause: withoutWireBytes(err) });
}

function findCode(err: unknown, depth: number): string | undefined {
  if (depth > 5 || typeof err !== 'object' || err === null) return undefined;
  const own = (err as { code?: unknown }).code;
  // undici wraps the system error; the inner code (ECONNREFUSED…) is the useful one.
  const inner = findCode((err as { cause?: unknown }).cause, depth + 1);
  if (inner !== undefined && (typeof own !== 'string' || own.startsWith('UND_ERR'))) return inner;
  if (err instanceof AggregateError) {
    for (const e of err.errors) {
      const c = findCode(e, depth + 1);
      if (c !== undefined) return c;
    }
  }
  if (typeof own === 'string' && own !== '') return own;
  if (typeof err === 'object' && /socket hang up/i.test((err as { message?: unknown }).message as string ?? '')) return 'ECONNRESET';
  return inner;
}

/**
 * undici's HTTPParserError keeps the bytes it could not parse as `data`: a
 * hostile server's, escapes and an echoed credential among them. Such a
 * cause is replaced by one with its class, code and escaped message only.
 */
function withoutWireBytes(err: unknown): unknown {
  if (!(err instanceof Error) || !('data' in err)) return err;
  const copy = new Error(printable(err.message));
  copy.name = err.name;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') Object.assign(copy, { code });
  return copy;
}

function scrub(message: string): string {
  return message.replace(/\/\/[^/@\s]*:[^/@\s]*@/g, '//***@');
}
