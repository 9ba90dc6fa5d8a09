import type { StoredObject } from '../storage/storedObject.js';
import type { ResourceType } from '../storage/resources.js';
import { badRequest, conflict, invalid } from '../server/status.js';

// The rules kube-apiserver applies to every object it writes: names, namespaces, type metadata,
// preconditions, and what counts as a change.

/** Preconditions a DELETE can carry (`DeleteOptions.preconditions`). */
export interface Preconditions {
  readonly uid?: string;
  readonly resourceVersion?: string;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** RFC 3339 without fractional seconds, as Kubernetes writes timestamps. */
export function timestamp(ms: number): string {
  const second = Math.floor(ms / 1000);
  // Bursts of writes share a second; formatting a date is a visible cost at 50k writes/s.
  if (second !== lastStampSecond) {
    lastStampSecond = second;
    lastStamp = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return lastStamp;
}
let lastStampSecond = Number.NaN;
let lastStamp = '';

/** Deep equality of JSON values, with an explicit stack: kube-apiserver holds objects nested 10,000 deep, past what recursion can walk. */
export function jsonEqual(left: unknown, right: unknown): boolean {
  const pending: [unknown, unknown][] = [[left, right]];
  while (pending.length > 0) {
    const [a, b] = pending.pop() as [unknown, unknown];
    if (a === b) continue;
    if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
    if (Array.isArray(a)) {
      if (!Array.isArray(b) || a.length !== b.length) return false;
      for (let i = 0; i < a.length; i++) pending.push([a[i], b[i]]);
      continue;
    }
    if (Array.isArray(b)) return false;
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    let na = 0;
    for (const k in ra) {
      if (ra[k] === undefined) continue;
      na++;
      pending.push([ra[k], rb[k]]);
    }
    let nb = 0;
    for (const k in rb) if (rb[k] !== undefined) nb++;
    if (na !== nb) return false;
  }
  return true;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const NOT_SPEC = new Set(['metadata', 'status', 'kind', 'apiVersion']);

/** Equality of everything but metadata and status: what a generation counts changes of. */
export function specEqual(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  for (const k in a) if (!NOT_SPEC.has(k) && !jsonEqual(a[k], b[k])) return false;
  for (const k in b) if (!NOT_SPEC.has(k) && a[k] === undefined && b[k] !== undefined) return false;
  return true;
}

/** 409 Conflict unless the object has the uid and resourceVersion a delete asked for. */
export function checkPreconditions(type: ResourceType, name: string, old: StoredObject, preconditions: Preconditions | undefined): void {
  const oldMeta = old.obj['metadata'] as Record<string, unknown>;
  if (preconditions?.uid !== undefined && preconditions.uid !== oldMeta['uid']) {
    throw conflict(type, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${String(oldMeta['uid'])}`);
  }
  if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== String(old.rv)) {
    throw conflict(
      type,
      name,
      `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${old.rv}`,
    );
  }
}

export function finalizers(meta: Record<string, unknown>): string[] {
  const f = meta['finalizers'];
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

export function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return s;
}

export function checkName(type: ResourceType, name: string): void {
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    throw invalid(
      `${type.kind} "${name}"`,
      'metadata.name',
      `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    );
  }
}

export function checkTypeMeta(type: ResourceType, input: Record<string, unknown>): void {
  const apiVersion = input['apiVersion'];
  // An object read through one version of a CRD and written back through it may carry the version it is stored in.
  const stored = type.storage !== undefined && typeof apiVersion === 'string' && apiVersion.startsWith(`${type.group}/`);
  if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== type.apiVersion && !stored) {
    throw badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${type.apiVersion})`);
  }
  const kind = input['kind'];
  if (kind !== undefined && kind !== '' && kind !== type.kind) {
    throw badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${type.kind})`);
  }
  if (input['metadata'] !== undefined && !isRecord(input['metadata'])) throw badRequest('metadata must be an object');
}

/** The namespace an object goes to: the request's, which the body may repeat but not contradict. */
export function resolveNamespace(type: ResourceType, meta: Record<string, unknown>, requested: string | undefined): string {
  if (!type.namespaced) return '';
  const inBody = meta['namespace'];
  if (inBody !== undefined && inBody !== '' && typeof inBody !== 'string') throw badRequest('metadata.namespace must be a string');
  if (requested !== undefined && typeof inBody === 'string' && inBody !== '' && inBody !== requested) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const ns = requested ?? (typeof inBody === 'string' && inBody !== '' ? inBody : undefined);
  if (ns === undefined) throw badRequest(`the server could not find the requested resource: a namespace is required for ${type.id}`);
  if (ns.length > 63 || !DNS_SUBDOMAIN.test(ns) || ns.includes('.')) {
    throw invalid(`${type.kind} ""`, 'metadata.namespace', `Invalid value: "${ns}": a lowercase RFC 1123 label is required`);
  }
  return ns;
}
