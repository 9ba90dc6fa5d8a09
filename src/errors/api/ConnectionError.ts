/**
 * The request never got an HTTP answer or its body broke off: connection
 * refused or reset, DNS failure, TLS failure, or an idle watch that went
 * silent past its timeout. Retried with backoff.
 *
 * ## Example
 * ```ts
 * import { ConnectionError, type Informer } from 'rxkube';
 * declare const informer: Informer<unknown>;
 *
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof ConnectionError && err.code === 'IDLE_TIMEOUT') console.warn('watch went silent; re-watching');
 * });
 * ```
 */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  /** The system error code when there was one (`ECONNREFUSED`, `ECONNRESET`, `IDLE_TIMEOUT` …). */
  readonly code: string | undefined;

  constructor(message: string, opts: { code?: string | undefined; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = opts.code;
  }
}
