import { StatusError, type StatusDetails } from './StatusError.js';

export { defaultReason, StatusError } from './StatusError.js';
export type { Status, StatusDetails } from './StatusError.js';

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
