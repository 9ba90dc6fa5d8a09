// The soak's faults, one at a time: each is armed once (the soak has one informer), taken by its next request or
// event, or cleared when it was not taken within its window, before the next is caused. Which fault is under
// way, and since when the server is healthy again, is what the liveness criterion needs.

import type { ApiServer } from 'rxkube/testing';
import { FAULT_KINDS, type FaultKind } from '../../spec/chaos/faults.js';
import type { Rng } from '../../spec/helpers/random.js';
import type { ServerProgress } from './liveness.js';

/** One fault of the run, as it went. Times are wall-clock milliseconds. */
export interface FaultRecord {
  readonly kind: string;
  readonly causedAt: number;
  /** When it was taken (or, for a restart, when the server listened again); undefined while pending or if it expired. */
  takenAt: number | undefined;
  /** When it was cleared untaken at the end of its window. */
  expiredAt: number | undefined;
  /** The server's newest resourceVersion when it became healthy again: the store has caught up once it reaches it. */
  healthyRv: number | undefined;
}

/**
 * Causes one fault at a time and tells how long the server was unhealthy for
 * the informer: while a fault it then took was armed, and while a restart
 * was under way. A fault the informer never took (it made no request, as
 * when it sits in a backoff) is not the server's doing.
 */
export class FaultSchedule {
  readonly records: FaultRecord[] = [];
  // The fault under way, until taken, expired, or (a restart) listening again.
  #current: FaultRecord | undefined;
  // Set while a restart is under way; the next fault waits for it.
  #restarting: Promise<void> | undefined;
  // Time the server was unhealthy for the informer, faults before the current one: from caused to taken (a restart:
  // to listening). A fault cleared untaken never reached the informer and adds nothing; the current one counts from
  // its causedAt until then.
  #unhealthyMs = 0;
  readonly #server: ApiServer;
  readonly #rng: Rng;
  readonly #touch: () => void;
  readonly #takeWindowMs: number;
  readonly #newestRv: () => number;

  /**
   * @param takeWindowMs how long a fault may stay armed and untaken before it is cleared.
   * @param newestRv the resourceVersion of the server's newest write.
   */
  constructor(server: ApiServer, rng: Rng, touch: () => void, takeWindowMs: number, newestRv: () => number) {
    this.#server = server;
    this.#rng = rng;
    this.#touch = touch;
    this.#takeWindowMs = takeWindowMs;
    this.#newestRv = newestRv;
  }

  /** Causes the next fault, after settling the one before (cleared if still armed); skipped while a restart is under way. */
  next(): void {
    this.settle();
    if (this.#restarting !== undefined) return;
    if (this.#current !== undefined) this.#expire(this.#current);
    const kind: FaultKind = this.#rng.pick(FAULT_KINDS);
    const record: FaultRecord = { kind: kind.name, causedAt: Date.now(), takenAt: undefined, expiredAt: undefined, healthyRv: undefined };
    this.records.push(record);
    this.#current = record;
    const done = kind.cause({ server: this.#server, rng: this.#rng, informers: 1, touch: this.#touch });
    if (done instanceof Promise) {
      this.#restarting = done.finally(() => {
        this.#restarting = undefined;
        this.settle();
      });
    }
    this.settle();
  }

  /** Notes a fault taken, or clears one whose window is over; called often (on every write tick). */
  settle(): void {
    const f = this.#current;
    if (f === undefined || this.#restarting !== undefined) return;
    if (this.#server.faults.pending() === 0) {
      f.takenAt = Date.now();
      this.#unhealthyMs += f.takenAt - f.causedAt;
      this.#healthy(f);
    } else if (Date.now() - f.causedAt >= this.#takeWindowMs) this.#expire(f);
  }

  /** Resolves once no restart is under way (at once when none is). */
  async listening(): Promise<void> {
    await this.#restarting;
  }

  /** Waits for a restart under way and clears what is still armed: the run is over. */
  async stop(): Promise<void> {
    await this.#restarting;
    this.settle();
    if (this.#current !== undefined) this.#expire(this.#current);
  }

  /** What the liveness criterion needs to know of the server now. */
  progress(): ServerProgress {
    this.settle();
    const ongoing = this.#current === undefined ? 0 : Date.now() - this.#current.causedAt;
    return { rv: this.#newestRv(), unhealthyMs: this.#unhealthyMs + ongoing };
  }

  #expire(f: FaultRecord): void {
    this.#server.faults.clear();
    f.expiredAt = Date.now();
    this.#healthy(f);
  }

  #healthy(f: FaultRecord): void {
    f.healthyRv = this.#newestRv();
    this.#current = undefined;
  }
}
