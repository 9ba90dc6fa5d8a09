import { changedFields, fromFieldsV1, leaves, overlaps, toFieldsV1, valueAt, type FieldScope, type FieldSet } from './fieldSets.js';
import { isRecord } from './objectRules.js';
import type { ResourceType } from '../storage/resources.js';

// metadata.managedFields as kube-apiserver keeps it: one entry per manager, operation (Apply or Update) and
// subresource, each with the set of fields that manager owns.

/** One `metadata.managedFields` entry, its field set decoded. */
export interface ManagedEntry {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion: string;
  /** When the set last changed (RFC 3339). */
  time: string;
  fields: FieldSet;
  readonly subresource: 'status' | undefined;
  /** The set as it was read, to tell whether it changed (and so whether `time` moves). */
  readonly before: string;
}

/** Who is writing, and to which part of the object. */
export interface FieldWriter {
  readonly manager: string;
  readonly subresource: 'status' | undefined;
  /** RFC 3339, the write's time. */
  readonly time: string;
}

/** The part of an object a write through `subresource` can own for this resource. */
export function scopeOf(type: ResourceType, subresource: 'status' | undefined): FieldScope {
  if (subresource === 'status') return 'status';
  return type.statusSubresource ? 'main' : 'all';
}

/** The entries of an object's `metadata.managedFields`; malformed entries are dropped. */
export function readEntries(obj: Record<string, unknown> | undefined): ManagedEntry[] {
  const meta = obj?.['metadata'];
  const raw = isRecord(meta) ? meta['managedFields'] : undefined;
  if (!Array.isArray(raw)) return [];
  const out: ManagedEntry[] = [];
  for (const e of raw) {
    if (!isRecord(e) || typeof e['manager'] !== 'string' || (e['operation'] !== 'Apply' && e['operation'] !== 'Update')) continue;
    const fields = fromFieldsV1(e['fieldsV1']);
    out.push({
      manager: e['manager'],
      operation: e['operation'],
      apiVersion: typeof e['apiVersion'] === 'string' ? e['apiVersion'] : '',
      time: typeof e['time'] === 'string' ? e['time'] : '',
      fields,
      subresource: e['subresource'] === 'status' ? 'status' : undefined,
      before: JSON.stringify([...fields.keys()].sort()),
    });
  }
  return out;
}

/** The entry of `manager` for `operation` through `subresource`, added (empty) when missing. */
export function entryFor(entries: ManagedEntry[], operation: 'Apply' | 'Update', writer: FieldWriter, apiVersion: string): ManagedEntry {
  let entry = entries.find((e) => e.manager === writer.manager && e.operation === operation && e.subresource === writer.subresource);
  if (entry === undefined) {
    entry = { manager: writer.manager, operation, apiVersion, time: writer.time, fields: new Map(), subresource: writer.subresource, before: '' };
    entries.push(entry);
  }
  return entry;
}

/** Drops from each entry the fields `obj` no longer has. */
export function dropMissing(entries: ManagedEntry[], obj: Record<string, unknown>): void {
  for (const e of entries) {
    for (const [key, path] of e.fields) if (valueAt(obj, path) === undefined) e.fields.delete(key);
  }
}

/** `metadata.managedFields` of the entries: empty ones left out, the time moved only where the set changed. */
export function writeEntries(entries: readonly ManagedEntry[], time: string): Record<string, unknown>[] | undefined {
  const out: Record<string, unknown>[] = [];
  for (const e of entries) {
    if (e.fields.size === 0) continue;
    const changed = JSON.stringify([...e.fields.keys()].sort()) !== e.before;
    out.push({
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      time: changed || e.time === '' ? time : e.time,
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(e.fields),
      ...(e.subresource === undefined ? {} : { subresource: e.subresource }),
    });
  }
  return out.length === 0 ? undefined : out;
}

/**
 * The managedFields after a create, update or non-apply patch by `writer`:
 * the writer's Update entry gains every field the write set or changed,
 * every other entry loses those fields (an update takes ownership without
 * conflict), and fields the object no longer has are owned by no one.
 *
 * @param prev the stored object before the write (undefined for a create).
 * @param next the object about to be stored.
 */
export function trackUpdate(type: ResourceType, prev: Record<string, unknown> | undefined, next: Record<string, unknown>, writer: FieldWriter): Record<string, unknown>[] | undefined {
  const entries = readEntries(prev);
  const changed = changedFields(prev, next, scopeOf(type, writer.subresource));
  const mine = entryFor(entries, 'Update', writer, type.apiVersion);
  const taken = [...changed.values()];
  for (const e of entries) {
    if (e === mine) continue;
    for (const [key, path] of e.fields) if (taken.some((c) => overlaps(path, c))) e.fields.delete(key);
  }
  for (const [key, path] of changed) mine.fields.set(key, path);
  dropMissing(entries, next);
  return writeEntries(entries, writer.time);
}

/** The managedFields of an object created by an apply: the applier owns what it sent. */
export function applyCreateEntries(type: ResourceType, config: Record<string, unknown>, writer: FieldWriter): Record<string, unknown>[] | undefined {
  const entries: ManagedEntry[] = [];
  entryFor(entries, 'Apply', writer, type.apiVersion).fields = leaves(config, scopeOf(type, writer.subresource));
  return writeEntries(entries, writer.time);
}
