import type { KubeObject } from '../store/types.js';
import type { EventDetails } from './types.js';
import { describeValue } from '../options/validate.js';

// The events.k8s.io/v1 Event a recorder writes, and the checks that keep kube-apiserver from refusing it.

/** kube-apiserver's limits on an Event. */
export const NOTE_LIMIT = 1024;
export const NAME_LIMIT = 128;

/** An `ObjectReference` as an Event's `regarding` and `related` hold it. */
export interface ObjectReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/** The fields of one events.k8s.io/v1 Event, as sent. */
export interface EventBody {
  readonly apiVersion: 'events.k8s.io/v1';
  readonly kind: 'Event';
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly eventTime: string;
  readonly reportingController: string;
  readonly reportingInstance: string;
  readonly action: string;
  readonly reason: string;
  readonly type: 'Normal' | 'Warning';
  readonly note: string;
  readonly regarding: ObjectReference;
  readonly related?: ObjectReference;
  readonly series?: { readonly count: number; readonly lastObservedTime: string };
}

/**
 * The reference to an object, or a TypeError naming what is missing.
 * rxkube's caches and lists give every object its `apiVersion` and `kind`
 * (docs/semantics.md P-15), but an object from elsewhere (client-node's
 * typed lists) may lack them, and then a recorder cannot tell what it is.
 */
export function referenceTo(obj: KubeObject | undefined, label: string): ObjectReference | TypeError {
  if (obj === null || typeof obj !== 'object') return new TypeError(`${label}: expected an object, got ${describeValue(obj)}`);
  const { apiVersion, kind } = obj;
  const meta = obj.metadata;
  if (typeof apiVersion !== 'string' || apiVersion === '' || typeof kind !== 'string' || kind === '') {
    return new TypeError(
      `${label}: ${meta?.name ?? 'the object'} has no apiVersion and kind, so no Event can name it (client-node's typed lists leave them out): pass { ...obj, apiVersion, kind }`,
    );
  }
  if (typeof meta?.name !== 'string' || meta.name === '') return new TypeError(`${label}: the ${kind} has no metadata.name`);
  return {
    apiVersion,
    kind,
    name: meta.name,
    ...(meta.namespace !== undefined && meta.namespace !== '' && { namespace: meta.namespace }),
    ...(meta.uid !== undefined && { uid: meta.uid }),
    ...(meta.resourceVersion !== undefined && { resourceVersion: meta.resourceVersion }),
  };
}

/** The checks of an event's fields; the first problem found, or undefined. */
export function checkDetails(event: EventDetails): TypeError | undefined {
  if (event === null || typeof event !== 'object') return new TypeError(`event: expected { type, reason, action, note? }, got ${describeValue(event)}`);
  if (event.type !== 'Normal' && event.type !== 'Warning') return new TypeError(`type: expected 'Normal' or 'Warning', got ${describeValue(event.type)}`);
  for (const field of ['reason', 'action'] as const) {
    const v: unknown = event[field];
    if (typeof v !== 'string' || v === '' || v.length > NAME_LIMIT) return new TypeError(`${field}: expected 1 to ${NAME_LIMIT} characters, got ${describeValue(v)}`);
  }
  if (event.note !== undefined && typeof event.note !== 'string') return new TypeError(`note: expected a string, got ${describeValue(event.note)}`);
  return undefined;
}

/** `note` cut to kube-apiserver's 1 KiB at a character boundary. */
export function truncateNote(note: string): string {
  if (Buffer.byteLength(note) <= NOTE_LIMIT) return note;
  let out = Buffer.from(note).subarray(0, NOTE_LIMIT).toString('utf8');
  // A character cut in half decodes as U+FFFD; drop it.
  while (out.endsWith('\uFFFD') || Buffer.byteLength(out) > NOTE_LIMIT) out = out.slice(0, -1);
  return out;
}

/** kube-apiserver's MicroTime: RFC 3339 with six digits of fractional seconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

let sequence = 0;

/** A unique name for a new Event about `name`: the object's name, a dot, and hex of the time and a counter. */
export function eventName(name: string, ms: number): string {
  sequence = (sequence + 1) % 0x10000;
  const suffix = `${Math.floor(ms).toString(16)}${sequence.toString(16).padStart(4, '0')}`;
  return `${name.slice(0, 253 - suffix.length - 1)}.${suffix}`;
}

/** Identifies the events that fold into one series: the same object, related object, type, reason, action and note. */
export function seriesKey(regarding: ObjectReference, related: ObjectReference | undefined, event: EventDetails, note: string): string {
  const ref = (r: ObjectReference | undefined): unknown[] => (r === undefined ? [] : [r.apiVersion, r.kind, r.namespace ?? '', r.name, r.uid ?? '']);
  return JSON.stringify([ref(regarding), ref(related), event.type, event.reason, event.action, note]);
}

/** The key of the object's token bucket: the same object under any version of it. */
export function objectKey(regarding: ObjectReference): string {
  return JSON.stringify([regarding.apiVersion, regarding.kind, regarding.namespace ?? '', regarding.name]);
}
