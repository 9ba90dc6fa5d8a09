// Whether a cluster answers, judged from evidence in its informer's status, not its state alone (MC-4). Internal.

import type { SchedulerLike, Subscription } from 'rxjs';
import type { InformerStatus } from '../informer/informer.js';
import type { ReflectorStatus } from '../reflector/types.js';
import { timerDelay } from '../options/timerDelay.js';

/**
 * A watch that stayed open this long had an answer, events or not (MC-4): longer than the reflector's
 * `HEALTHY_WATCH_MS`, so a server cutting every watch within seconds is not reported back.
 */
export const ANSWERED_WATCH_MS = 30_000;

/**
 * The unreachable clock of one connection (MC-4): it starts at the first failure after the cluster last answered;
 * `afterMs` later with no answer, the cluster is unreachable, or, during an attempt, once that attempt fails.
 */
export class Reachability {
  readonly #scheduler: SchedulerLike;
  readonly #afterMs: number;
  readonly #onUnreachable: () => void;
  // Told when the cluster answers outside a status (an event arrived, a watch stayed open).
  readonly #onAnswered: () => void;
  // Fires when the current watch has stayed open long enough to count as answered.
  #openTimer: Subscription | undefined;
  // The previous status, to see transitions (a list that completed, events that arrived).
  #last: InformerStatus | undefined;
  // When the current watch attempt was opened, to credit a watch that stayed open.
  #watchOpenedAt: number | undefined;
  // The clock: when failures began, and the timer at their deadline.
  #failingSince: number | undefined;
  #timer: Subscription | undefined;
  // The deadline passed during an attempt: the attempt's failure decides.
  #overdue = false;
  #unreachable = false;

  constructor(scheduler: SchedulerLike, afterMs: number, onUnreachable: () => void, onAnswered: () => void = () => {}) {
    this.#scheduler = scheduler;
    this.#afterMs = afterMs;
    this.#onUnreachable = onUnreachable;
    this.#onAnswered = onAnswered;
  }

  /** Whether the cluster was declared unreachable and has not answered since. */
  get unreachable(): boolean {
    return this.#unreachable;
  }

  /**
   * Reads one status of the connection's informer.
   * @returns true when it shows that the cluster answered.
   */
  observe(s: InformerStatus): boolean {
    const prev = this.#last;
    this.#last = s;
    const r = s.reflector;
    const p = prev?.reflector;
    const now = this.#scheduler.now();
    const answered = this.#answered(s, prev, now);
    if (r?.state === 'watching' && p?.state !== 'watching') {
      this.#watchOpenedAt = now;
      this.#openTimer?.unsubscribe();
      // A quiet watch says nothing; one still open this long had an answer.
      this.#openTimer = this.#scheduler.schedule(() => this.#stayedOpen(), ANSWERED_WATCH_MS);
    } else if (r?.state !== 'watching') {
      this.#watchOpenedAt = undefined;
      this.#openTimer?.unsubscribe();
      this.#openTimer = undefined;
    }
    if (answered) this.reset();
    if (r?.state === 'error' && !r.terminal) {
      if (this.#failingSince === undefined) {
        this.#failingSince = now;
        this.#timer = this.#scheduler.schedule(() => this.#deadline(), timerDelay(this.#afterMs));
      } else if (this.#overdue) this.#declare();
    }
    return answered;
  }

  /** Something arrived from the cluster outside a status (an event of its informer): it answers. */
  heard(): void {
    if (this.#failingSince === undefined && !this.#unreachable) return;
    this.reset();
    this.#onAnswered();
  }

  /** Forgets every failure: the cluster answered, or a new connection starts. */
  reset(): void {
    this.#timer?.unsubscribe();
    this.#timer = undefined;
    this.#failingSince = undefined;
    this.#overdue = false;
    this.#unreachable = false;
  }

  /** A new lifetime of the same informer begins (after its cache was dropped): transitions start afresh, the clock runs on. */
  restart(): void {
    this.#last = undefined;
    this.#watchOpenedAt = undefined;
    this.#openTimer?.unsubscribe();
    this.#openTimer = undefined;
  }

  dispose(): void {
    this.reset();
    this.restart();
  }

  #stayedOpen(): void {
    this.#openTimer = undefined;
    if (this.#last?.reflector?.state === 'watching') this.heard();
  }

  #answered(s: InformerStatus, prev: InformerStatus | undefined, now: number): boolean {
    const r = s.reflector;
    const p = prev?.reflector;
    if (r === undefined) return false;
    // A first list applied.
    if (s.synced && prev !== undefined && !prev.synced) return true;
    // Events or bookmarks arrived.
    if (p !== undefined && r.counters.events > p.counters.events) return true;
    if (r.state === 'watching') {
      // After a list, a watch opens only when the list completed; after a watch, only when it ended cleanly.
      if (p?.state === 'listing' || p?.state === 'watching') return true;
    }
    // The server said something a retry deals with: it closed a watch, a resourceVersion expired, it throttled.
    if (r.state === 'backoff' && r.kind !== 'server' && r.kind !== 'stalled') return true;
    if (r.state === 'relisting' && r.reason === 'expired') return true;
    // A watch that stayed open long enough had an answer, even if nothing happened on it.
    if (r.state === 'error' && p?.state === 'watching' && this.#watchOpenedAt !== undefined && now - this.#watchOpenedAt >= ANSWERED_WATCH_MS) return true;
    return false;
  }

  #deadline(): void {
    this.#timer = undefined;
    const state: ReflectorStatus['state'] | undefined = this.#last?.reflector?.state;
    // An attempt in progress may yet succeed: its failure decides.
    if (state === 'listing' || state === 'watching') this.#overdue = true;
    else this.#declare();
  }

  #declare(): void {
    if (this.#unreachable) return;
    this.#unreachable = true;
    this.#overdue = false;
    this.#onUnreachable();
  }
}
