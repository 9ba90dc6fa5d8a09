import { randomUUID } from 'node:crypto';
import type { Snapshot } from './storageKeys.js';
import { History, HistoryEvent, withResourceVersion, type ObjectEventType } from './history.js';
import type { StoredObject } from './storedObject.js';
import type { ResourceType } from './resources.js';
import { serialize } from './serialize.js';
import { keyRange, objectKey, pastSnapshot } from './storageKeys.js';
import {
  checkName,
  checkPreconditions,
  checkTypeMeta,
  finalizers,
  isRecord,
  jsonEqual,
  randomSuffix,
  resolveNamespace,
  specEqual,
  timestamp,
  type Preconditions,
} from '../writes/objectRules.js';
import { alreadyExists, conflict, expired, invalid, notFound, resourceVersionRequired, tooLargeResourceVersion } from '../server/status.js';

export { jsonEqual, timestamp, type Preconditions } from '../writes/objectRules.js';

/** What a write through the API asks of the storage beyond the object itself. */
export interface WriteHooks {
  /** Answer what would be stored, storing nothing (`dryRun=All`). */
  readonly dryRun?: boolean;
  /** The `metadata.managedFields` of the object about to be stored, given the stored version (undefined on create). */
  readonly managedFields?: (prev: Record<string, unknown> | undefined, next: Record<string, unknown>) => unknown;
}

export type { Snapshot } from './storageKeys.js';

interface Table {
  /** Replaced when a CRD's update redefines the resource; the objects stay. */
  type: ResourceType;
  readonly objects: Map<string, StoredObject>;
  /** Sorted keys, rebuilt lazily after a key appears or disappears; pages binary-search it. */
  sorted: string[] | undefined;
}

const SNAPSHOT_CACHE_SIZE = 8;

/**
 * The simulator's MVCC storage: one global resourceVersion, current state
 * per resource, and an event log from which older states and watch streams
 * are served. Objects passed in must be owned by the storage (callers
 * clone); objects handed out are shared and must not be mutated.
 */
export class Storage {
  // The single global counter every write bumps, as etcd's revision.
  #rv = 1;
  // Current state per resource id.
  readonly #tables = new Map<string, Table>();
  // The event log: watch replay and the undo log for older snapshots.
  readonly #history: History;
  // Age-based compaction is applied lazily, on each write and read of the history.
  readonly #maxAgeMs: number | undefined;
  // Paged lists at an old resourceVersion rebuild the same view page after page; keep the last few.
  readonly #snapshots = new Map<string, Snapshot>();
  // The server's watch fan-out, called synchronously for every write.
  readonly #onEvent: (event: HistoryEvent) => void;

  constructor(maxEvents: number, maxAgeMs: number | undefined, onEvent: (event: HistoryEvent) => void) {
    this.#history = new History(maxEvents, this.#rv);
    this.#maxAgeMs = maxAgeMs;
    this.#onEvent = onEvent;
  }

  get resourceVersion(): number {
    return this.#rv;
  }

  get historySize(): number {
    this.#trimByAge();
    return this.#history.size;
  }

  /** Number of objects across every resource. */
  get objectCount(): number {
    return [...this.#tables.values()].reduce((n, t) => n + t.objects.size, 0);
  }

  /** Adds a resource's table, or gives an existing one its new definition (a CRD's update), keeping its objects. */
  addResource(type: ResourceType): void {
    const table = this.#tables.get(type.id);
    if (table === undefined) this.#tables.set(type.id, { type, objects: new Map(), sorted: undefined });
    else table.type = type;
  }

  /**
   * Rewrites stored objects in place, keeping their resourceVersions and
   * writing no event: what a read would decode them as (a CRD's new
   * defaults), stored so every later read sees it.
   */
  rewriteInPlace(type: ResourceType, rewrite: (obj: Record<string, unknown>) => Record<string, unknown>): void {
    const table = this.#table(type);
    for (const [key, o] of table.objects) {
      const next = rewrite(JSON.parse(o.json) as Record<string, unknown>);
      if (!jsonEqual(next, o.obj)) table.objects.set(key, makeStored(next, o.rv, key, o.namespace, o.name));
    }
  }

  #table(type: ResourceType): Table {
    const t = this.#tables.get(storeId(type));
    if (t === undefined) throw new Error(`storage: unknown resource ${type.id}`);
    return t;
  }

  get(type: ResourceType, namespace: string, name: string): StoredObject | undefined {
    return this.#table(type).objects.get(objectKey(type, namespace, name));
  }

  /** Current objects of a resource, optionally in one namespace, in key order. */
  list(type: ResourceType, namespace?: string): StoredObject[] {
    const snap = this.snapshot(type, undefined);
    const [from, to] = keyRange(snap.keys, type, namespace);
    const out: StoredObject[] = [];
    for (let i = from; i < to; i++) {
      const o = snap.at(i);
      if (o !== undefined) out.push(o);
    }
    return out;
  }

  /**
   * Creates an object the caller owns. Assigns uid, resourceVersion,
   * creationTimestamp and generation; `namespace` is the request's.
   */
  create(type: ResourceType, input: Record<string, unknown>, namespace: string | undefined, hooks?: WriteHooks): StoredObject {
    checkTypeMeta(type, input);
    const meta = isRecord(input['metadata']) ? { ...input['metadata'] } : {};
    const ns = resolveNamespace(type, meta, namespace);
    let name = meta['name'];
    if ((name === undefined || name === '') && typeof meta['generateName'] === 'string' && meta['generateName'] !== '') {
      name = `${meta['generateName']}${randomSuffix()}`;
    }
    if (typeof name !== 'string' || name === '') throw invalid(`${type.kind} ""`, 'metadata.name', 'Required value: name or generateName is required');
    checkName(type, name);
    const table = this.#table(type);
    const key = ns === '' ? name : `${ns}/${name}`;
    if (table.objects.has(key)) throw alreadyExists(type, name);
    const now = Date.now();
    const rv = this.#rv + 1;
    const { kind: _k, apiVersion: _a, metadata: _m, ...rest } = input;
    for (const f of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'managedFields']) delete meta[f];
    let obj: Record<string, unknown> = {
      kind: type.kind,
      apiVersion: (type.storage ?? type).apiVersion,
      metadata: {
        ...meta,
        name,
        ...(ns === '' ? {} : { namespace: ns }),
        uid: randomUUID(),
        resourceVersion: String(rv),
        generation: 1,
        creationTimestamp: timestamp(now),
      },
      ...rest,
    };
    if (ns === '') delete (obj['metadata'] as Record<string, unknown>)['namespace'];
    type.defaults?.(obj);
    if (type.admit !== undefined) obj = type.admit(obj, undefined);
    const objMeta = obj['metadata'] as Record<string, unknown>;
    setManagedFields(objMeta, hooks?.managedFields?.(undefined, obj));
    type.validate?.(obj);
    if (hooks?.dryRun === true) {
      // What would be stored, as kube-apiserver answers a dry run: no resourceVersion, since nothing was written.
      delete objMeta['resourceVersion'];
      return makeStored(obj, this.#rv, key, ns, name);
    }
    const stored = makeStored(obj, rv, key, ns, name);
    this.#commit(table, 'ADDED', stored, undefined, now);
    return stored;
  }

  /**
   * Replaces an object (PUT). A non-empty `metadata.resourceVersion` must be
   * the current one; without one the update is unconditional where the
   * resource allows it (422 otherwise), and a missing object is created where
   * the resource allows that (404 otherwise). `status` replaces only the
   * status (the `/status` subresource). A no-op update writes nothing and
   * keeps the resourceVersion.
   */
  update(type: ResourceType, input: Record<string, unknown>, namespace: string | undefined, subresource?: 'status', hooks?: WriteHooks): StoredObject {
    checkTypeMeta(type, input);
    const meta = isRecord(input['metadata']) ? input['metadata'] : {};
    const ns = resolveNamespace(type, meta, namespace);
    const name = meta['name'];
    if (typeof name !== 'string' || name === '') throw invalid(`${type.kind} ""`, 'metadata.name', 'Required value: name is required');
    const table = this.#table(type);
    const key = ns === '' ? name : `${ns}/${name}`;
    const old = table.objects.get(key);
    if (old === undefined) {
      // Some resources (leases) are created by a PUT, as kube-apiserver's AllowCreateOnUpdate strategies allow.
      if (type.createOnUpdate && subresource === undefined) return this.create(type, input, namespace, hooks);
      throw notFound(type, name);
    }
    const oldMeta = old.obj['metadata'] as Record<string, unknown>;
    const wantRv = meta['resourceVersion'];
    if ((wantRv === undefined || wantRv === '') && !type.unconditionalUpdate) throw resourceVersionRequired(type, name);
    if (wantRv !== undefined && wantRv !== '' && wantRv !== String(old.rv)) {
      throw conflict(type, name, 'the object has been modified; please apply your changes to the latest version and try again');
    }
    const wantUid = meta['uid'];
    if (wantUid !== undefined && wantUid !== '' && wantUid !== oldMeta['uid']) {
      throw conflict(type, name, `Precondition failed: UID in precondition: ${String(wantUid)}, UID in object meta: ${String(oldMeta['uid'])}`);
    }
    let next: Record<string, unknown>;
    let nextMeta: Record<string, unknown>;
    if (subresource === 'status') {
      nextMeta = { ...oldMeta };
      next = { ...old.obj, metadata: nextMeta };
      if (input['status'] === undefined) delete next['status'];
      else next['status'] = input['status'];
    } else {
      const { kind: _k, apiVersion: _a, metadata: _m, ...rest } = input;
      const newMeta: Record<string, unknown> = { ...meta };
      for (const f of ['uid', 'creationTimestamp', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'namespace', 'generateName']) {
        if (oldMeta[f] === undefined) delete newMeta[f];
        else newMeta[f] = oldMeta[f];
      }
      delete newMeta['selfLink'];
      // Ownership is the server's record: a body's managedFields are ignored, the stored ones kept.
      setManagedFields(newMeta, oldMeta['managedFields']);
      newMeta['resourceVersion'] = String(old.rv);
      next = { kind: type.kind, apiVersion: (type.storage ?? type).apiVersion, metadata: newMeta, ...rest };
      nextMeta = newMeta;
      if (oldMeta['deletionTimestamp'] !== undefined) {
        const added = finalizers(newMeta).filter((f) => !finalizers(oldMeta).includes(f));
        if (added.length > 0) {
          throw invalid(`${type.kind} "${name}"`, 'metadata.finalizers', `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`);
        }
      }
    }
    if (type.admit !== undefined) {
      next = type.admit(next, old.obj, subresource);
      // Admission hands back its own copy; the metadata stamped below is that copy's.
      nextMeta = { ...(next['metadata'] as Record<string, unknown>) };
      next['metadata'] = nextMeta;
    }
    if (subresource !== 'status' && !specEqual(old.obj, next)) nextMeta['generation'] = (Number(oldMeta['generation']) || 0) + 1;
    if (hooks?.managedFields !== undefined) setManagedFields(nextMeta, hooks.managedFields(old.obj, next));
    if (jsonEqual(old.obj, next)) return old;
    type.validate?.(next);
    if (hooks?.dryRun === true) return makeStored(next, old.rv, key, ns, name);
    const now = Date.now();
    const rv = this.#rv + 1;
    // nextMeta is this call's own copy, so it can be stamped in place.
    nextMeta['resourceVersion'] = String(rv);
    const stored = makeStored(next, rv, key, ns, name);
    // The last finalizer removed from an object being deleted completes the deletion.
    const completesDeletion = nextMeta['deletionTimestamp'] !== undefined && finalizers(nextMeta).length === 0;
    this.#commit(table, completesDeletion ? 'DELETED' : 'MODIFIED', stored, old, now);
    return stored;
  }

  /**
   * Deletes an object. One with finalizers only gets its deletionTimestamp
   * (a MODIFIED event) and goes when its last finalizer is removed.
   */
  delete(type: ResourceType, namespace: string, name: string, preconditions?: Preconditions): StoredObject {
    const table = this.#table(type);
    const key = objectKey(type, namespace, name);
    const old = table.objects.get(key);
    if (old === undefined) throw notFound(type, name);
    const oldMeta = old.obj['metadata'] as Record<string, unknown>;
    checkPreconditions(type, name, old, preconditions);
    const now = Date.now();
    const rv = this.#rv + 1;
    if (finalizers(oldMeta).length > 0) {
      if (oldMeta['deletionTimestamp'] !== undefined) return old;
      const meta = {
        ...oldMeta,
        resourceVersion: String(rv),
        deletionTimestamp: timestamp(now),
        deletionGracePeriodSeconds: 0,
        generation: (Number(oldMeta['generation']) || 0) + 1,
      };
      const stored = makeStored({ ...old.obj, metadata: meta }, rv, key, old.namespace, name);
      this.#commit(table, 'MODIFIED', stored, old, now);
      return stored;
    }
    const stored = makeStored(withResourceVersion(old.obj, rv), rv, key, old.namespace, name);
    this.#commit(table, 'DELETED', stored, old, now);
    return stored;
  }

  /**
   * Starts a deletion that a controller finishes (a namespace): sets
   * deletionTimestamp, lets `mark` change the rest of the copy (status), and
   * writes it as MODIFIED. The object stays until it is deleted again.
   */
  markDeleting(type: ResourceType, namespace: string, name: string, preconditions: Preconditions | undefined, mark: (obj: Record<string, unknown>) => void): StoredObject {
    const table = this.#table(type);
    const key = objectKey(type, namespace, name);
    const old = table.objects.get(key);
    if (old === undefined) throw notFound(type, name);
    checkPreconditions(type, name, old, preconditions);
    const now = Date.now();
    const rv = this.#rv + 1;
    // A JSON copy, because stored objects are shared with every reader and must not change under them.
    const next = JSON.parse(old.json) as Record<string, unknown>;
    mark(next);
    const meta = next['metadata'] as Record<string, unknown>;
    meta['deletionTimestamp'] = timestamp(now);
    meta['resourceVersion'] = String(rv);
    const stored = makeStored(next, rv, key, old.namespace, name);
    this.#commit(table, 'MODIFIED', stored, old, now);
    return stored;
  }

  #commit(table: Table, type: ObjectEventType, stored: StoredObject, prev: StoredObject | undefined, now: number): void {
    this.#rv = stored.rv;
    if (type === 'DELETED') {
      table.objects.delete(stored.key);
      table.sorted = undefined;
    } else {
      if (prev === undefined) table.sorted = undefined;
      table.objects.set(stored.key, stored);
    }
    const event = new HistoryEvent(stored.rv, type, table.type, stored, prev, now);
    this.#history.push(event);
    this.#trimByAge(now);
    this.#onEvent(event);
  }

  #trimByAge(now = Date.now()): void {
    if (this.#maxAgeMs !== undefined) this.#history.dropOlderThan(now - this.#maxAgeMs);
  }

  /** Drops history up to `rv` (default: everything): older watches and continue tokens get 410. */
  compact(rv?: number): number {
    const target = rv === undefined ? this.#rv : Math.min(rv, this.#rv);
    this.#history.compact(target);
    this.#snapshots.clear();
    return target;
  }

  /**
   * The events after `rv` for one resource, or a 410 Expired error when
   * they are no longer all retained.
   */
  eventsSince(type: ResourceType, rv: number): HistoryEvent[] {
    this.#trimByAge();
    const compacted = this.#history.compactedRv;
    if (rv < compacted) throw expired(`too old resource version: ${rv} (${compacted})`);
    const out: HistoryEvent[] = [];
    const id = storeId(type);
    for (let x = rv + 1; x <= this.#rv; x++) {
      const e = this.#history.at(x);
      if (e.resource.id === id) out.push(e);
    }
    return out;
  }

  /**
   * A consistent view of a resource at `rv` (undefined: now). Throws 410
   * Expired when the history needed to rebuild it was compacted, 504 when
   * `rv` is in the future. A view of the past holds its own objects and
   * stays that version whatever is written later; the current view reads the
   * live table, so it is read in the same turn it was taken.
   */
  snapshot(type: ResourceType, rv: number | undefined, read?: 'exact' | 'continue'): Snapshot {
    const table = this.#table(type);
    const current = (): Snapshot => {
      const sorted = (table.sorted ??= [...table.objects.keys()].sort());
      return { rv: this.#rv, keys: sorted, at: (i) => table.objects.get(sorted[i] as string) };
    };
    if (rv === undefined || rv === this.#rv) {
      if (rv !== undefined && read !== undefined) this.#checkReadable(rv, read);
      return current();
    }
    if (rv > this.#rv) throw tooLargeResourceVersion(rv, this.#rv);
    this.#checkReadable(rv, read ?? 'exact');
    const id = storeId(type);
    const cacheKey = `${id}@${rv}`;
    const cached = this.#snapshots.get(cacheKey);
    if (cached !== undefined) return cached;
    // The state at rv is the current state with every later write of this resource undone.
    const overlay = new Map<string, StoredObject | undefined>();
    for (let x = rv + 1; x <= this.#rv; x++) {
      const e = this.#history.at(x);
      if (e.resource.id === id && !overlay.has(e.cur.key)) overlay.set(e.cur.key, e.prev);
    }
    const base = current();
    // Nothing written since: the current view, not cached, as it changes with the next write.
    if (overlay.size === 0) return { rv, keys: base.keys, at: base.at };
    const snap = pastSnapshot(rv, base, overlay, (k) => table.objects.get(k));
    this.#snapshots.set(cacheKey, snap);
    if (this.#snapshots.size > SNAPSHOT_CACHE_SIZE) {
      const oldest = this.#snapshots.keys().next().value;
      if (oldest !== undefined) this.#snapshots.delete(oldest);
    }
    return snap;
  }

  #checkReadable(rv: number, read: 'exact' | 'continue'): void {
    this.#trimByAge();
    if (rv >= this.#history.oldestReadableRv) return;
    if (read === 'continue') {
      throw expired(
        'The provided continue parameter is too old to display a consistent list result. ' +
          'You can start a new list without the continue parameter.',
      );
    }
    // kube-apiserver's exact wording (it names neither resourceVersion).
    throw expired('The resourceVersion for the provided list is too old.');
  }
}

/** The store a resource's objects are in: its own, or that of the CRD its version belongs to. */
function storeId(type: ResourceType): string {
  return (type.storage ?? type).id;
}

function setManagedFields(meta: Record<string, unknown>, entries: unknown): void {
  if (Array.isArray(entries) && entries.length > 0) meta['managedFields'] = entries;
  else delete meta['managedFields'];
}

function makeStored(obj: Record<string, unknown>, rv: number, key: string, namespace: string, name: string): StoredObject {
  return { obj, json: serialize(obj), rv, key, namespace, name };
}
