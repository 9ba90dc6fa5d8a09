// The writes this process made, as long as some cache may not show them yet (docs/semantics.md RYW-1…RYW-4):
// one log for the whole process, so objectClient and the controller share it with no wiring. Internal.

import { parseFieldSelector } from '../store/fieldSelector.js';
import { parseLabelSelector, type LabelSelector } from '../store/labelSelector.js';
import type { KubeObject } from '../store/types.js';
import { atOrPast, compareOrdered } from '../sources/resourceVersion.js';
import type { SourceIdentity } from '../sources/types.js';

/** One write, as the log keeps it. */
export interface WriteEntry {
  /** `resourceKey` of what was written to. */
  readonly resource: string;
  /** The store key of the object: `namespace/name`, or `name` when cluster-scoped. */
  readonly key: string;
  readonly namespace: string | undefined;
  /** The labels the object was left with, to tell whether a label-filtered cache will hear of the write. */
  readonly labels: Readonly<Record<string, string>> | undefined;
  /** The answer's resourceVersion (canonical decimal); undefined for a deletion answered by a Status. */
  readonly rv: string | undefined;
  /** The deleted object's uid, for a deletion answered by a Status: seen once no cache holds that uid. */
  readonly uid: string | undefined;
  /** When it was recorded, on the log's clock. */
  readonly at: number;
  /** False once it left the log: superseded by a newer write of the object, seen everywhere, too old, or evicted. */
  live: boolean;
}

/** A cache the log can ask how far it got: what it reads, and its store. */
export interface CacheView {
  readonly identity: SourceIdentity;
  /** `resourceKey(identity)`, computed once. */
  readonly resource: string;
  readonly store: { getByKey(key: string): unknown; lastSyncResourceVersion(): string };
}

/** The log's limits; the defaults are documented in docs/semantics.md (RYW-4). */
export interface WriteLogLimits {
  /** A write leaves the log this long after it was made, whoever has seen it. */
  readonly ttlMs: number;
  /** At most this many writes are kept; past it the oldest leave first. */
  readonly maxEntries: number;
  /** The clock of `ttlMs`. */
  readonly now: () => number;
}

const DEFAULT_LIMITS: WriteLogLimits = { ttlMs: 60_000, maxEntries: 10_000, now: () => performance.now() };
/** TTL pruning runs at most this often: a write costs a map update, not a sweep. */
const SWEEP_EVERY_MS = 1_000;

/** A source's namespace and selectors, parsed once. */
interface Filter {
  readonly label: LabelSelector | undefined;
  /** Requirements on metadata.name / metadata.namespace, as [field, value, negate]; undefined when none. */
  readonly fields: readonly (readonly [string, string, boolean])[] | undefined;
  /** The field selector names a field the log does not keep: writes are taken to match (RYW-3). */
  readonly fieldsUnknown: boolean;
}

const filters = new WeakMap<SourceIdentity, Filter>();

function filterOf(id: SourceIdentity): Filter {
  let f = filters.get(id);
  if (f !== undefined) return f;
  let label: LabelSelector | undefined;
  let fields: [string, string, boolean][] | undefined;
  let fieldsUnknown = false;
  try {
    if (id.labelSelector !== undefined && id.labelSelector !== '') label = parseLabelSelector(id.labelSelector);
  } catch {
    // A selector the source itself would have refused: nothing is filtered out.
  }
  try {
    if (id.fieldSelector !== undefined && id.fieldSelector !== '') {
      for (const r of parseFieldSelector(id.fieldSelector).requirements) {
        if (r.field !== 'metadata.name' && r.field !== 'metadata.namespace') fieldsUnknown = true;
        else (fields ??= []).push([r.field, r.value, r.op === '!=']);
      }
    }
  } catch {
    fieldsUnknown = true;
  }
  f = { label, fields, fieldsUnknown };
  filters.set(id, f);
  return f;
}

function nameOf(e: WriteEntry): string {
  const slash = e.key.indexOf('/');
  return slash < 0 ? e.key : e.key.slice(slash + 1);
}

/** Whether the server would send `cache` an event for write `e` (RYW-3). */
export function counts(cache: CacheView, e: WriteEntry): boolean {
  const id = cache.identity;
  if (id.namespace !== undefined && e.namespace !== id.namespace) return false;
  // A cached object is always told about: as a change, or as a DELETED when it leaves the selectors.
  if (cache.store.getByKey(e.key) !== undefined) return true;
  if (e.rv === undefined) return false;
  const f = filterOf(id);
  if (f.label !== undefined && !f.label.matches(e.labels)) return false;
  if (f.fields !== undefined) {
    for (const [field, value, negate] of f.fields) {
      const actual = field === 'metadata.name' ? nameOf(e) : (e.namespace ?? '');
      if ((actual === value) === negate) return false;
    }
  }
  return true;
}

/** Whether `cache` shows write `e` (RYW-2): its resourceVersion is past it, or the object itself is. */
export function seen(cache: CacheView, e: WriteEntry): boolean {
  if (e.rv !== undefined && atOrPast(cache.store.lastSyncResourceVersion(), e.rv)) return true;
  const cached = cache.store.getByKey(e.key) as KubeObject | undefined;
  if (e.rv === undefined) return cached === undefined || cached.metadata?.uid !== e.uid;
  return cached !== undefined && atOrPast(cached.metadata?.resourceVersion, e.rv);
}

/** The writes to one resource of one cluster. */
class ResourceWrites {
  // Writes with a resourceVersion, oldest first; entries that left are dropped lazily.
  #ordered: WriteEntry[] = [];
  // Deletions answered by a Status (no resourceVersion), oldest first.
  #gone: WriteEntry[] = [];
  // The newest live write of each object: a newer one supersedes it.
  readonly #byKey = new Map<string, WriteEntry>();
  // Entries in the arrays that left the log, so the arrays are compacted before they hold mostly garbage.
  #dead = 0;
  // Caches of controllers that wait on this resource; writes every one of them saw leave at once.
  readonly caches = new Set<CacheView>();

  add(e: WriteEntry): WriteEntry | undefined {
    const previous = this.#byKey.get(e.key);
    this.#byKey.set(e.key, e);
    if (e.rv === undefined) this.#gone.push(e);
    else {
      // Answers come back mostly in resourceVersion order; a late one is moved back to its place.
      const rv = e.rv;
      let i = this.#ordered.length;
      while (i > 0 && compareOrdered((this.#ordered[i - 1] as WriteEntry).rv as string, rv) > 0) i--;
      this.#ordered.splice(i, 0, e);
    }
    return previous;
  }

  /** Marks `e` gone from this resource's indexes; the caller counts it. */
  remove(e: WriteEntry): void {
    if (this.#byKey.get(e.key) === e) this.#byKey.delete(e.key);
    this.#dead++;
    if (this.#dead > 64 && this.#dead * 2 > this.#ordered.length + this.#gone.length) {
      this.#ordered = this.#ordered.filter((x) => x.live);
      this.#gone = this.#gone.filter((x) => x.live);
      this.#dead = 0;
    }
  }

  newest(key: string): WriteEntry | undefined {
    return this.#byKey.get(key);
  }

  /** The writes `cache` should hear of and has not, newest first. Scans only writes newer than the cache. */
  unseen(cache: CacheView): WriteEntry[] {
    const out: WriteEntry[] = [];
    const cacheRv = cache.store.lastSyncResourceVersion();
    for (let i = this.#ordered.length - 1; i >= 0; i--) {
      const e = this.#ordered[i] as WriteEntry;
      if (atOrPast(cacheRv, e.rv as string)) break;
      if (e.live && counts(cache, e) && !seen(cache, e)) out.push(e);
    }
    for (const e of this.#gone) if (e.live && counts(cache, e) && !seen(cache, e)) out.push(e);
    return out;
  }

  /** Writes every interested cache has seen (or will never hear of); none while no cache is interested. */
  *seenByAll(): Generator<WriteEntry> {
    if (this.caches.size === 0) return;
    const done = (e: WriteEntry): boolean => {
      for (const c of this.caches) if (counts(c, e) && !seen(c, e)) return false;
      return true;
    };
    for (const e of this.#ordered) {
      if (!e.live) continue;
      if (!done(e)) break;
      yield e;
    }
    for (const e of this.#gone) if (e.live && done(e)) yield e;
  }

  /** The oldest live write, for eviction. */
  oldest(): WriteEntry | undefined {
    let best: WriteEntry | undefined;
    for (const list of [this.#ordered, this.#gone]) {
      for (const e of list) {
        if (!e.live) continue;
        if (best === undefined || e.at < best.at) best = e;
        break;
      }
    }
    return best;
  }

  /** Live writes made before `cutoff`, oldest first per list. */
  *olderThan(cutoff: number): Generator<WriteEntry> {
    for (const list of [this.#ordered, this.#gone]) {
      for (const e of list) {
        if (!e.live) continue;
        if (e.at >= cutoff) break;
        yield e;
      }
    }
  }

  get empty(): boolean {
    return this.#byKey.size === 0 && this.caches.size === 0;
  }
}

/**
 * The process's write log: what was written where, until every cache that
 * waits on the resource has seen it, or it is older than the TTL, or the log
 * is full (RYW-4).
 */
export class WriteLog {
  readonly #resources = new Map<string, ResourceWrites>();
  #limits: WriteLogLimits = DEFAULT_LIMITS;
  #size = 0;
  #lastSweep = Number.NEGATIVE_INFINITY;
  // Writes that left because the log was full (for specs and messages).
  evicted = 0;

  /** Live writes in the log. */
  get size(): number {
    return this.#size;
  }

  /** Adds a write; an older write of the same object leaves. */
  record(entry: Omit<WriteEntry, 'at' | 'live'>): void {
    const now = this.#limits.now();
    const e: WriteEntry = { ...entry, at: now, live: true };
    const r = this.#resourceOf(e.resource);
    const previous = r.add(e);
    this.#size++;
    if (previous !== undefined && previous.live) this.#drop(r, previous);
    this.#sweep(now);
    while (this.#size > this.#limits.maxEntries) {
      if (!this.#evictOldest()) break;
    }
  }

  /** The newest write of object `key` that `cache` should hear of and has not. */
  unseenObject(cache: CacheView, key: string): WriteEntry | undefined {
    const r = this.#resources.get(cache.resource);
    const e = r?.newest(key);
    if (e === undefined || !e.live) return undefined;
    return counts(cache, e) && !seen(cache, e) ? e : undefined;
  }

  /** The writes to the resource of `cache` that it should hear of and has not, newest first. */
  unseenResource(cache: CacheView): WriteEntry[] {
    return this.#resources.get(cache.resource)?.unseen(cache) ?? [];
  }

  /** Takes `cache` into account when deciding that a write was seen by everyone; returns how to stop. */
  register(cache: CacheView): () => void {
    const key = cache.resource;
    this.#resourceOf(key).caches.add(cache);
    return () => {
      const r = this.#resources.get(key);
      r?.caches.delete(cache);
      if (r?.empty === true) this.#resources.delete(key);
    };
  }

  /** Drops the writes every registered cache of the resource of `cache` has seen, and those past the TTL. */
  prune(cache: CacheView): void {
    const r = this.#resources.get(cache.resource);
    if (r !== undefined) for (const e of [...r.seenByAll()]) this.#drop(r, e);
    this.#sweep(this.#limits.now());
  }

  /** Test hook: new limits (and clock), and an empty log. */
  reset(limits: Partial<WriteLogLimits> = {}): void {
    this.#resources.clear();
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
    this.#size = 0;
    this.#lastSweep = Number.NEGATIVE_INFINITY;
    this.evicted = 0;
  }

  #resourceOf(key: string): ResourceWrites {
    let r = this.#resources.get(key);
    if (r === undefined) {
      r = new ResourceWrites();
      this.#resources.set(key, r);
    }
    return r;
  }

  #drop(r: ResourceWrites, e: WriteEntry): void {
    if (!e.live) return;
    e.live = false;
    this.#size--;
    r.remove(e);
  }

  /** Forgets writes older than the TTL; at most once a second. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    const cutoff = now - this.#limits.ttlMs;
    for (const [key, r] of this.#resources) {
      for (const e of [...r.olderThan(cutoff)]) this.#drop(r, e);
      if (r.empty) this.#resources.delete(key);
    }
  }

  #evictOldest(): boolean {
    let oldest: WriteEntry | undefined;
    let from: ResourceWrites | undefined;
    for (const r of this.#resources.values()) {
      const e = r.oldest();
      if (e !== undefined && (oldest === undefined || e.at < oldest.at)) {
        oldest = e;
        from = r;
      }
    }
    if (oldest === undefined || from === undefined) return false;
    this.#drop(from, oldest);
    this.evicted++;
    return true;
  }
}

/** The one log of the process: every objectClient writes to it, every controller reads it. */
export const writeLog = new WriteLog();
