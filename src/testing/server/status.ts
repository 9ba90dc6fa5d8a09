import { StatusError, type StatusErrorDetails } from './StatusError.js';
import type { ResourceType } from '../storage/resources.js';

export { defaultReason, StatusError } from './StatusError.js';
export type { Status, StatusErrorDetails } from './StatusError.js';

/** Identifies the object an error is about, as kube-apiserver's Status details do. */
type ErrorSubject = Pick<ResourceType, 'group' | 'plural' | 'kind'>;

function qualified(r: ErrorSubject): string {
  return r.group === '' ? r.plural : `${r.plural}.${r.group}`;
}

function subjectDetails(r: ErrorSubject, name: string): StatusErrorDetails {
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

/** One field error of a 422 Invalid, as kube-apiserver's field.Error renders it. */
export interface FieldCause {
  /** `FieldValueForbidden`, `FieldValueInvalid`, `FieldValueNotSupported`… */
  readonly reason: string;
  readonly field: string;
  /** The error body, e.g. `Forbidden: …`. */
  readonly message: string;
}

/**
 * 422 Invalid carrying every field error of one validation pass, worded as
 * kube-apiserver's NewInvalid: one error is `<what> is invalid: <field>: <msg>`,
 * several are listed in brackets.
 */
export function invalidFields(group: string, kind: string, causes: readonly FieldCause[], name = ''): StatusError {
  // The core group's kinds are named without a group (`Event "x"`), others with it (`ListOptions.meta.k8s.io ""`).
  const what = `${group === '' ? kind : `${kind}.${group}`} ${JSON.stringify(name)}`;
  const parts = causes.map((c) => `${c.field}: ${c.message}`);
  const message = parts.length === 1 ? `${what} is invalid: ${parts[0]}` : `${what} is invalid: [${parts.join(', ')}]`;
  return new StatusError(422, 'Invalid', message, {
    ...(name === '' ? {} : { name }),
    ...(group === '' ? {} : { group }),
    kind,
    causes: causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })),
  });
}

/** A field another manager owns with another value than an apply asked for. */
export interface FieldConflict {
  /** How kube-apiserver names the manager: `"kubectl"`, or `"kubectl" using apps/v1` for an Update entry. */
  readonly manager: string;
  /** `.spec.replicas` */
  readonly field: string;
}

/**
 * 409 Conflict for a server-side apply that would change fields other
 * managers own, worded as kube-apiserver words it: one cause of type
 * `FieldManagerConflict` per field, and a message naming each manager and
 * its fields.
 */
export function applyConflict(conflicts: readonly FieldConflict[]): StatusError {
  let message: string;
  if (conflicts.length === 1) {
    const c = conflicts[0] as FieldConflict;
    message = `Apply failed with 1 conflict: conflict with ${c.manager}: ${c.field}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.field]);
    const lines = [...byManager.keys()].sort().flatMap((m) => [`conflicts with ${m}:`, ...(byManager.get(m) ?? []).map((f) => `- ${f}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError(409, 'Conflict', message, {
    causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${c.manager}`, field: c.field })),
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

/**
 * 422 Invalid for a PUT without `metadata.resourceVersion` on a resource that
 * refuses unconditional updates (leases, custom resources), worded as
 * kube-apiserver's generic registry words it (it names the resource, not
 * the kind, and prints the missing version as Go's `%#v` of a uint64).
 */
export function resourceVersionRequired(r: ErrorSubject, name: string): StatusError {
  const message = 'Invalid value: 0x0: must be specified for an update';
  return new StatusError(422, 'Invalid', `${qualified(r)} "${name}" is invalid: metadata.resourceVersion: ${message}`, {
    name,
    group: r.group,
    kind: r.plural,
    causes: [{ reason: 'FieldValueInvalid', message, field: 'metadata.resourceVersion' }],
  });
}
