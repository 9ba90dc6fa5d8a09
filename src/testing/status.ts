/** The `Status` body kube-apiserver sends with every error. */
export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: { readonly continue?: string };
  readonly status: 'Failure' | 'Success';
  readonly message: string;
  readonly reason: string;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** `Status.details`: which object the error is about, and retry advice. */
export interface StatusDetails {
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
  constructor(code: number, reason: string | undefined, message: string, details?: StatusDetails, continueToken?: string) {
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

/** Identifies the object an error is about, as kube-apiserver's Status details do. */
export interface ErrorSubject {
  readonly group: string;
  readonly plural: string;
  readonly kind: string;
}

function qualified(r: ErrorSubject): string {
  return r.group === '' ? r.plural : `${r.plural}.${r.group}`;
}

function subjectDetails(r: ErrorSubject, name: string): StatusDetails {
  return { name, group: r.group, kind: r.plural };
}

/** 404 for a named object, worded as kube-apiserver words it. */
export function notFound(r: ErrorSubject, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualified(r)} "${name}" not found`, subjectDetails(r, name));
}

/** 409 AlreadyExists on create. */
export function alreadyExists(r: ErrorSubject, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, subjectDetails(r, name));
}

/** 409 Conflict on a stale resourceVersion or a failed precondition. */
export function conflict(r: ErrorSubject, name: string, why: string): StatusError {
  return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`, subjectDetails(r, name));
}

/** 400 BadRequest. */
export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

/** 422 Invalid, for request parameters or objects that fail validation. */
export function invalid(what: string, field: string, message: string): StatusError {
  return new StatusError(422, 'Invalid', `${what} is invalid: ${field}: ${message}`, {
    causes: [{ reason: 'FieldValueInvalid', message, field }],
  });
}

/** 410 Expired, for reads and watches older than the retained history. */
export function expired(message: string, continueToken?: string): StatusError {
  return new StatusError(410, 'Expired', message, undefined, continueToken);
}

/** 504 Timeout for a resourceVersion newer than the server's, as kube-apiserver answers after waiting for it. */
export function tooLargeResourceVersion(rv: number, current: number): StatusError {
  return new StatusError(504, 'Timeout', `Too large resource version: ${rv}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}
