import type { Notification } from './notification.js';
import { describeValue } from '../options/validate.js';

/**
 * How a handler's pending notifications are held while it is busy.
 * - `'unbounded'`: every notification is kept, in order (client-go's behaviour).
 * - `{ coalesce: 'byKey' }`: notifications for one key merge while pending, so
 *   memory is bounded by the number of keys rather than of events.
 * - `{ limit, overflow }`: at most `limit` pending; when full, `'dropOldest'`
 *   drops the oldest and reports it, `'error'` ends the registration.
 */
export type BufferPolicy =
  | 'unbounded'
  | { readonly coalesce: 'byKey' }
  | { readonly limit: number; readonly overflow: 'error' | 'dropOldest' };

/** A pending notification and whether it belongs to the initial list. */
export interface BufferEntry<T> {
  readonly n: Notification<T>;
  readonly initial: boolean;
}

/** What a push displaced: initial entries no longer pending, and what overflowed. */
export interface PushResult<T> {
  /** Initial-list entries that left the buffer without being handled (merged away or dropped). */
  readonly discardedInitial: number;
  /** The entry dropped by `dropOldest`, or `'full'` when an `'error'` buffer refused the push. */
  readonly overflow?: BufferEntry<T> | 'full';
}

const NOTHING_DISCARDED: PushResult<never> = { discardedInitial: 0 };

/** The buffer between the shared notification stream and one handler. */
export interface HandlerBuffer<T> {
  readonly size: number;
  push(entry: BufferEntry<T>): PushResult<T>;
  shift(): BufferEntry<T> | undefined;
  clear(): void;
}

/** Validates a policy and builds its buffer. */
export function createHandlerBuffer<T>(policy: BufferPolicy): HandlerBuffer<T> {
  if (policy === 'unbounded') return new FifoBuffer<T>(Infinity, 'error');
  if (typeof policy === 'object' && policy !== null) {
    if ('coalesce' in policy) {
      if (policy.coalesce !== 'byKey') throw new TypeError(`buffer.coalesce must be 'byKey', got ${describeValue(policy.coalesce)}`);
      return new CoalescingBuffer<T>();
    }
    if ('limit' in policy) {
      if (!Number.isInteger(policy.limit) || policy.limit < 1) throw new TypeError(`buffer.limit must be a positive integer, got ${describeValue(policy.limit)}`);
      if (policy.overflow !== 'error' && policy.overflow !== 'dropOldest') {
        throw new TypeError(`buffer.overflow must be 'error' or 'dropOldest', got ${describeValue(policy.overflow)}`);
      }
      return new FifoBuffer<T>(policy.limit, policy.overflow);
    }
  }
  throw new TypeError(`buffer must be 'unbounded', { coalesce: 'byKey' } or { limit, overflow }, got ${describeValue(policy)}`);
}

/** An array used as a queue with an advancing head, compacted when half is dead. */
class FifoBuffer<T> implements HandlerBuffer<T> {
  // Entries before #head were already shifted; compaction keeps shift O(1) amortised.
  #items: (BufferEntry<T> | undefined)[] = [];
  #head = 0;
  readonly #limit: number;
  readonly #overflow: 'error' | 'dropOldest';

  constructor(limit: number, overflow: 'error' | 'dropOldest') {
    this.#limit = limit;
    this.#overflow = overflow;
  }

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(entry: BufferEntry<T>): PushResult<T> {
    if (this.size < this.#limit) {
      this.#items.push(entry);
      return NOTHING_DISCARDED;
    }
    if (this.#overflow === 'error') return { discardedInitial: 0, overflow: 'full' };
    const dropped = this.shift();
    this.#items.push(entry);
    return dropped === undefined ? NOTHING_DISCARDED : { discardedInitial: dropped.initial ? 1 : 0, overflow: dropped };
  }

  shift(): BufferEntry<T> | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const entry = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return entry;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}

/**
 * Pending notifications merged per key. A key holds at most a delete followed
 * by an add (a re-creation); everything else folds into one entry, and the
 * key keeps the queue position of its first pending notification.
 */
class CoalescingBuffer<T> implements HandlerBuffer<T> {
  // Map iteration order is insertion order, which gives FIFO by first arrival.
  #byKey = new Map<string, BufferEntry<T>[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(entry: BufferEntry<T>): PushResult<T> {
    const pending = this.#byKey.get(entry.n.key);
    if (pending === undefined) {
      this.#byKey.set(entry.n.key, [entry]);
      this.#size++;
      return NOTHING_DISCARDED;
    }
    const last = pending[pending.length - 1] as BufferEntry<T>;
    const merged = mergeNotifications(last, entry);
    if (merged === 'append') {
      pending.push(entry);
      this.#size++;
      return NOTHING_DISCARDED;
    }
    const discardedInitial = last.initial && (merged === null || !merged.initial) ? 1 : 0;
    if (merged === null) {
      pending.pop();
      this.#size--;
      if (pending.length === 0) this.#byKey.delete(entry.n.key);
    } else {
      pending[pending.length - 1] = merged;
    }
    return discardedInitial === 0 ? NOTHING_DISCARDED : { discardedInitial };
  }

  shift(): BufferEntry<T> | undefined {
    for (const [key, pending] of this.#byKey) {
      const entry = pending.shift();
      if (pending.length === 0) this.#byKey.delete(key);
      this.#size--;
      return entry;
    }
    return undefined;
  }

  clear(): void {
    this.#byKey.clear();
    this.#size = 0;
  }
}

/**
 * Folds `next` into `last` (both for one key). Returns the merged entry,
 * `null` when the two cancel out (added then deleted while pending), or
 * `'append'` when both must be delivered (deleted then re-created).
 */
function mergeNotifications<T>(last: BufferEntry<T>, next: BufferEntry<T>): BufferEntry<T> | null | 'append' {
  const a = last.n.event;
  const b = next.n.event;
  if (a.type === 'delete') {
    if (b.type === 'delete') return last; // a second delete of a deleted key adds nothing
    return 'append';
  }
  if (b.type === 'add') return 'append'; // add after add/update cannot come from one store; keep both rather than guess
  if (b.type === 'delete') {
    if (a.type === 'add') return null;
    return { n: { event: b, key: next.n.key, isSync: false }, initial: false };
  }
  // b is an update
  if (a.type === 'add') {
    return { n: { event: { type: 'add', obj: b.obj, isInInitialList: a.isInInitialList }, key: last.n.key, isSync: false }, initial: last.initial };
  }
  return { n: { event: { type: 'update', oldObj: a.oldObj, obj: b.obj }, key: last.n.key, isSync: last.n.isSync && next.n.isSync }, initial: false };
}
