/** The `Status` body kube-apiserver sends with every error. */
export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: { readonly continue?: string };
  readonly status: 'Failure' | 'Success';
  readonly message: string;
  readonly reason: string;
  readonly details?: StatusErrorDetails;
  readonly code: number;
}

/** `Status.details` of a simulated error (Kubernetes' metav1.StatusDetails): which object the error is about, and retry advice. */
export interface StatusErrorDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly retryAfterSeconds?: number;
  readonly causes?: readonly { readonly reason?: string; readonly message?: string; readonly field?: string }[];
}

/** The reason kube-apiserver gives for each status code when nothing more specific applies. */
const DEFAULT_REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/**
 * The reason kube-apiserver attaches to an HTTP status code by default
 * (`InternalError` for unknown 5xx, `Unknown` otherwise).
 */
export function defaultReason(code: number): string {
  return DEFAULT_REASONS[code] ?? (code >= 500 ? 'InternalError' : 'Unknown');
}

/**
 * An error the simulator answers with a `Status` body. The direct storage
 * methods (`server.create`, `server.update`…) throw it with the same code and
 * reason the HTTP verbs answer with, so a test can assert either way.
 *
 * ## Example
 * ```ts
 * import { startApiServer, StatusError } from 'rxkube/testing';
 * const server = await startApiServer();
 * const pod = await server.create('v1/pods', { metadata: { name: 'a', namespace: 'default' } });
 * await server.update('v1/pods', { ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } })
 *   .catch((err: StatusError) => err.code); // 409, reason "Conflict"
 * ```
 */
export class StatusError extends Error {
  /** The HTTP status code. */
  readonly code: number;
  /** The machine-readable reason (`Conflict`, `NotFound`, `Expired`…). */
  readonly reason: string;
  /** The full `Status` body sent on the wire. */
  readonly status: Status;

  /**
   * @param code the HTTP status code.
   * @param reason the Status reason; @default the kube-apiserver reason for `code`.
   * @param message the human-readable message.
   * @param details optional Status details.
   * @param continueToken a continue token carried in `metadata.continue` (410 on an expired list).
   */
  constructor(code: number, reason: string | undefined, message: string, details?: StatusErrorDetails, continueToken?: string) {
    super(message);
    this.name = 'StatusError';
    this.code = code;
    this.reason = reason ?? defaultReason(code);
    this.status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: continueToken === undefined ? {} : { continue: continueToken },
      status: 'Failure',
      message,
      reason: this.reason,
      ...(details === undefined ? {} : { details }),
      code,
    };
  }
}
