import { jsonText } from '../../store/jsonText.js';
import type { MetaVersion } from '../server/negotiate.js';
import { partialJson, partialJsonOf } from '../server/partialObjectMetadata.js';
import type { ResourceType } from './resources.js';
import type { StoredObject } from './storedObject.js';

export type ObjectEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * One write, as kept in the event log. The wire lines are built lazily and
 * cached here so every watcher shares one serialisation.
 */
export class HistoryEvent {
  readonly rv: number;
  readonly type: ObjectEventType;
  readonly resource: ResourceType;
  /** The object after the write; for DELETED its last state stamped with the deletion's resourceVersion. */
  readonly cur: StoredObject;
  /** The object before the write; undefined for ADDED. */
  readonly prev: StoredObject | undefined;
  /** Wall-clock time of the write, for age-based compaction. */
  readonly time: number;
  // Cached wire lines, by event type and meta.k8s.io version, so every watcher shares one serialisation.
  #lines: Map<string, string> | undefined;

  constructor(rv: number, type: ObjectEventType, resource: ResourceType, cur: StoredObject, prev: StoredObject | undefined, time: number) {
    this.rv = rv;
    this.type = type;
    this.resource = resource;
    this.cur = cur;
    this.prev = prev;
    this.time = time;
  }

  /** The event as every unfiltered watcher receives it (`view`: as PartialObjectMetadata of that version). */
  line(view?: MetaVersion): string {
    return this.#cached(this.type, view, () => (view === undefined ? this.cur.json : partialJson(this.cur, view)));
  }

  /** ADDED with the new object: the object entered a watcher's selector. */
  enterLine(view?: MetaVersion): string {
    if (this.type === 'ADDED') return this.line(view);
    return this.#cached('ADDED', view, () => (view === undefined ? this.cur.json : partialJson(this.cur, view)));
  }

  /**
   * DELETED with the previous content stamped with this event's
   * resourceVersion: the object left a watcher's selector (kube-apiserver's
   * watch cache does the same).
   */
  leaveLine(view?: MetaVersion): string {
    if (this.type === 'DELETED') return this.line(view);
    return this.#cached('DELETED', view, () => {
      const left = withResourceVersion((this.prev ?? this.cur).obj, this.rv);
      return view === undefined ? jsonText(left) : partialJsonOf(left, view);
    });
  }

  #cached(type: ObjectEventType, view: MetaVersion | undefined, objectJson: () => string): string {
    const key = view === undefined ? type : `${type}|${view}`;
    const lines = (this.#lines ??= new Map());
    let line = lines.get(key);
    if (line === undefined) {
      line = `{"type":"${type}","object":${objectJson()}}\n`;
      lines.set(key, line);
    }
    return line;
  }
}

/** A shallow copy of `obj` whose metadata.resourceVersion is `rv`. */
export function withResourceVersion(obj: Record<string, unknown>, rv: number): Record<string, unknown> {
  const meta = obj['metadata'] as Record<string, unknown>;
  return { ...obj, metadata: { ...meta, resourceVersion: String(rv) } };
}

/**
 * The event log as a ring: every write bumps the global resourceVersion by
 * one and appends exactly one event, so the event for resourceVersion `x`
 * sits at a computable slot and "events after x" is a slice, not a search.
 */
export class History {
  // Fixed-size ring so a long run never grows the log beyond maxEvents.
  readonly #ring: (HistoryEvent | undefined)[];
  #start = 0;
  #count = 0;
  /** Every event with rv ≤ compactedRv is gone; a watch can start at compactedRv or later. */
  #compactedRv: number;
  /** Set by an explicit compaction: consistent reads at or below it are refused even though a watch could start there. */
  #readFloor: number;

  constructor(maxEvents: number, initialRv: number) {
    this.#ring = new Array<HistoryEvent | undefined>(maxEvents);
    this.#compactedRv = initialRv;
    this.#readFloor = initialRv - 1;
  }

  get compactedRv(): number {
    return this.#compactedRv;
  }

  /** Oldest resourceVersion a consistent read (continue token, Exact list) can still be served at. */
  get oldestReadableRv(): number {
    return Math.max(this.#compactedRv, this.#readFloor + 1);
  }

  get size(): number {
    return this.#count;
  }

  push(event: HistoryEvent): void {
    const cap = this.#ring.length;
    if (cap === 0) {
      this.#compactedRv = event.rv;
      return;
    }
    if (this.#count === cap) this.#dropOldest();
    this.#ring[(this.#start + this.#count) % cap] = event;
    this.#count++;
  }

  /** Drops events older than `cutoff` (milliseconds since the epoch). */
  dropOlderThan(cutoff: number): void {
    while (this.#count > 0) {
      const oldest = this.#ring[this.#start];
      if (oldest === undefined || oldest.time >= cutoff) return;
      this.#dropOldest();
    }
  }

  /** Drops every event with rv ≤ `rv` and refuses consistent reads at or below it. */
  compact(rv: number): void {
    while (this.#count > 0) {
      const oldest = this.#ring[this.#start];
      if (oldest === undefined || oldest.rv > rv) break;
      this.#dropOldest();
    }
    if (rv > this.#compactedRv) this.#compactedRv = rv;
    if (rv > this.#readFloor) this.#readFloor = rv;
  }

  /** The event written at `rv`; the caller guarantees compactedRv < rv ≤ newest. */
  at(rv: number): HistoryEvent {
    const offset = rv - this.#compactedRv - 1;
    const event = this.#ring[(this.#start + offset) % this.#ring.length];
    if (event === undefined || event.rv !== rv) throw new Error(`history: no event at resourceVersion ${rv}`);
    return event;
  }

  #dropOldest(): void {
    const oldest = this.#ring[this.#start];
    this.#ring[this.#start] = undefined;
    this.#start = (this.#start + 1) % this.#ring.length;
    this.#count--;
    if (oldest !== undefined) this.#compactedRv = oldest.rv;
  }
}
