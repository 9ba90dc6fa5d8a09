import type { SchedulerLike } from 'rxjs';
import { errorFromStatus } from '../../src/sources/httpErrors.js';
import type { LeaderElectionRecord, LockObservation, ResourceLock } from '../../src/leaderelection/types.js';

/** One write the store accepted, for assertions. */
export interface StoredWrite {
  readonly at: number;
  readonly by: string;
  readonly op: 'create' | 'update';
  readonly record: LeaderElectionRecord;
}

/** What a client of the store can be made to suffer. */
export type LockFault = 'ok' | 'error500' | 'blackhole';

/**
 * The server side of an in-memory lock: one record, a version bumped by every
 * write, and compare-and-swap semantics with the same 409s the API server
 * answers. Time is a scheduler's, so virtual-time tests are exact.
 */
export class MemoryLockStore {
  record: LeaderElectionRecord | undefined;
  version = 0;
  readonly writes: StoredWrite[] = [];
  readonly #scheduler: SchedulerLike;

  constructor(scheduler: SchedulerLike) {
    this.#scheduler = scheduler;
  }

  /** A write made by someone outside the election (another tool, a human). */
  overwrite(record: LeaderElectionRecord): void {
    this.record = record;
    this.version++;
    this.writes.push({ at: this.#scheduler.now(), by: 'outside', op: 'update', record });
  }

  /** A client view, with its own latency and faults. */
  client(name: string): MemoryLockClient {
    return new MemoryLockClient(this, this.#scheduler, name);
  }
}

/** One candidate's connection to the store. */
export class MemoryLockClient implements ResourceLock<number> {
  /** Milliseconds from sending to the answer; the store acts when the request is sent. */
  latency = 0;
  fault: LockFault = 'ok';
  readonly calls: { at: number; op: string }[] = [];
  readonly #store: MemoryLockStore;
  readonly #scheduler: SchedulerLike;
  readonly #name: string;

  constructor(store: MemoryLockStore, scheduler: SchedulerLike, name: string) {
    this.#store = store;
    this.#scheduler = scheduler;
    this.#name = name;
  }

  get(signal: AbortSignal): Promise<LockObservation<number> | undefined> {
    return this.#call('get', signal, () => {
      const s = this.#store;
      return s.record === undefined ? undefined : { record: s.record, version: s.version };
    });
  }

  create(record: LeaderElectionRecord, signal: AbortSignal): Promise<number> {
    return this.#call('create', signal, () => {
      const s = this.#store;
      if (s.record !== undefined) throw errorFromStatus(409, { reason: 'AlreadyExists', message: 'leases "lock" already exists' });
      return this.#write('create', record);
    });
  }

  update(record: LeaderElectionRecord, version: number, signal: AbortSignal): Promise<number> {
    return this.#call('update', signal, () => {
      const s = this.#store;
      if (s.record === undefined) throw errorFromStatus(404, { reason: 'NotFound', message: 'leases "lock" not found' });
      if (s.version !== version) throw errorFromStatus(409, { reason: 'Conflict', message: 'the object has been modified' });
      return this.#write('update', record);
    });
  }

  describe(): string {
    return 'memory/lock';
  }

  #write(op: 'create' | 'update', record: LeaderElectionRecord): number {
    const s = this.#store;
    s.record = record;
    s.version++;
    s.writes.push({ at: this.#scheduler.now(), by: this.#name, op, record });
    return s.version;
  }

  #call<R>(op: string, signal: AbortSignal, act: () => R): Promise<R> {
    this.calls.push({ at: this.#scheduler.now(), op });
    return new Promise<R>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      let outcome: { ok: true; value: R } | { ok: false; err: unknown } | undefined;
      if (this.fault === 'error500') outcome = { ok: false, err: errorFromStatus(500, { reason: 'InternalError', message: 'injected' }) };
      else if (this.fault === 'ok') {
        try {
          outcome = { ok: true, value: act() };
        } catch (err) {
          outcome = { ok: false, err };
        }
      }
      const timer = outcome === undefined
        ? undefined
        : this.#scheduler.schedule(() => {
            signal.removeEventListener('abort', onAbort);
            if (outcome.ok) resolve(outcome.value);
            else reject(outcome.err);
          }, this.latency);
      const onAbort = (): void => {
        timer?.unsubscribe();
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
