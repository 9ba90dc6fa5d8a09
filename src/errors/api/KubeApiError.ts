/** The `Status` object the API server returns with an error (Kubernetes' metav1.Status; its `details` are metav1.StatusDetails). */
export interface ApiStatus {
  readonly kind?: string;
  readonly apiVersion?: string;
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: {
    readonly causes?: readonly { readonly reason?: string; readonly message?: string; readonly field?: string }[];
    readonly retryAfterSeconds?: number;
    readonly [extra: string]: unknown;
  };
}

/**
 * An error answered by the API server (or built from an ERROR watch event).
 * Carries the HTTP status, the Status reason and the server's message; never
 * a credential or a request header.
 *
 * This is the one class for every API answer, as client-go's `StatusError`
 * and kube-rs's `Error::Api` are: tell the answers apart with the guards
 * ({@link isNotFound}, {@link isConflict}, {@link isExpired},
 * {@link isTooManyRequests}, {@link isForbidden}, …), which accept anything
 * caught and narrow it to a `KubeApiError`.
 *
 * ## Example
 * ```ts
 * import { isForbidden, KubeApiError } from 'rxkube';
 * const report = (err: unknown): void => {
 *   if (isForbidden(err)) console.error('check the RBAC rules:', err.serverMessage);
 *   else if (err instanceof KubeApiError) console.error(err.status, err.reason, err.serverMessage);
 * };
 * ```
 */
export class KubeApiError extends Error {
  override readonly name: string = 'KubeApiError';
  /** HTTP status code (or the Status `code` of an ERROR watch event). */
  readonly status: number;
  /** The Status `reason` (`Expired`, `Forbidden`, …), when the server gave one. */
  readonly reason: string | undefined;
  /** The server's own message, escaped, cut to 2,048 characters and without the request's credential (HI-79). */
  readonly serverMessage: string | undefined;
  /** The Status, when the body was one: a copy of its Status fields, each string as `serverMessage` is (HI-79). */
  readonly details: ApiStatus | undefined;
  /**
   * Seconds the server asked the client to wait before trying again, from the
   * `Retry-After` header or the Status details (client-go's `SuggestsClientDelay`).
   */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    status: number,
    message: string,
    opts: {
      reason?: string | undefined;
      serverMessage?: string | undefined;
      details?: ApiStatus | undefined;
      retryAfterSeconds?: number | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.status = status;
    this.reason = opts.reason;
    this.serverMessage = opts.serverMessage;
    this.details = opts.details;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
}
