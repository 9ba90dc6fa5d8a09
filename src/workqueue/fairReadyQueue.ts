import { CallbackError } from '../errors/CallbackError.js';
import { describeValue } from '../options/validate.js';
import { ReadyQueue } from './readyQueue.js';

/**
 * The ready items of a work queue with `fairBy`: one {@link ReadyQueue} per
 * group, and the groups with items waiting served in turn. A group served
 * goes to the back of the line if it still has items, so while several
 * groups wait each gets one item per round, whatever its backlog; within a
 * group, highest priority first and first in, first out (docs/semantics.md LT-1). Fairness
 * comes before priority: a group's live changes do not hold up another
 * group's backlog, as if each group had a queue of its own.
 */
export class FairReadyQueue<T> {
  // The group of each item: asked once per wait, so has() and the item's removal agree even if `groupOf` would not.
  readonly #groupOf: (item: T) => string;
  // Each group's waiting items; a group is here only while it has some.
  readonly #groups = new Map<string, ReadyQueue<T>>();
  // The group each waiting item was filed under.
  readonly #filed = new Map<T, string>();
  // Items re-added while a worker holds them, waiting outside this queue until done(): the group asked as they
  // started waiting, counted in depths() and used when they are pushed.
  readonly #held = new Map<T, string>();
  // Groups with items waiting, in the order they are served; `#head` is the next one.
  #turns: string[] = [];
  #head = 0;

  /**
   * @param fairBy names the group of an item; one that throws or gives no string is reported and the item
   * joins the group `''`.
   */
  constructor(fairBy: (item: T) => string, report: (err: Error) => void) {
    this.#groupOf = (item) => {
      try {
        const group = fairBy(item);
        if (typeof group === 'string') return group;
        throw new TypeError(`it returned ${describeValue(group)}, not a string`);
      } catch (err) {
        report(new CallbackError('workQueue', `fairBy failed for ${describeValue(item)}; it waits in the group ''`, err));
        return '';
      }
    };
  }

  /** How many items wait, over every group. */
  get size(): number {
    return this.#filed.size;
  }

  has(item: T): boolean {
    return this.#filed.has(item);
  }

  /** Items waiting per group, held ones included, for metrics: the groups sum to the work queue's depth. */
  depths(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [group, queue] of this.#groups) out.set(group, queue.size);
    for (const group of this.#held.values()) out.set(group, (out.get(group) ?? 0) + 1);
    return out;
  }

  /** `item` was re-added while a worker holds it: its group is asked now, once per wait, and kept until it is pushed. */
  hold(item: T): void {
    if (!this.#held.has(item)) this.#held.set(item, this.#groupOf(item));
  }

  /** Queues `item` at `priority` in its group, with {@link ReadyQueue.push}'s rules; a group that had nothing waiting joins the back of the line. */
  push(item: T, priority: number): 'added' | 'raised' | 'kept' {
    const group = this.#filed.get(item) ?? this.#held.get(item) ?? this.#groupOf(item);
    this.#held.delete(item);
    let queue = this.#groups.get(group);
    if (queue === undefined) {
      queue = new ReadyQueue<T>();
      this.#groups.set(group, queue);
      this.#turns.push(group);
    }
    const result = queue.push(item, priority);
    this.#filed.set(item, group);
    return result;
  }

  /** Takes the first item of the group whose turn it is, or undefined when none waits. */
  shift(): { readonly item: T; readonly priority: number } | undefined {
    if (this.#head >= this.#turns.length) return undefined;
    const group = this.#turns[this.#head++] as string;
    const queue = this.#groups.get(group) as ReadyQueue<T>;
    const next = queue.shift() as { item: T; priority: number };
    this.#filed.delete(next.item);
    if (queue.size > 0) this.#turns.push(group);
    else this.#groups.delete(group);
    if (this.#head > 1024 && this.#head * 2 > this.#turns.length) {
      this.#turns = this.#turns.slice(this.#head);
      this.#head = 0;
    }
    return next;
  }
}
