import type { Subscription } from 'rxjs';
import { isAlreadyExists, isConflict } from '../errors/api/guards.js';
import { reportTo } from '../errors/reportTo.js';
import { ConnectionError } from '../errors/api/ConnectionError.js';
import { JITTER_FACTOR, type ElectorConfig } from './options.js';
import type { LeaderElectionRecord, Leadership } from './types.js';
import { timerDelay } from '../options/timerDelay.js';

/** The record last read or written, with the version a conditional write must name. */
interface Observed {
  readonly record: LeaderElectionRecord;
  /** The record's fields in a fixed order: a change of any of them restarts the follower's clock. */
  readonly raw: string;
  readonly version: unknown;
}

/** What a write keeps of the record it follows: the holder's acquireTime (undefined for a new holder) and the count. */
type Carried = Pick<LeaderElectionRecord, 'acquireTime' | 'leaderTransitions'>;

/** Why an in-flight attempt was aborted; such aborts are not failures to report. */
const STOPPED = Symbol('stopped');

/**
 * One candidate's state machine (internal; {@link leaderElection} runs one per
 * subscription). It follows client-go's `LeaderElector`: acquire by create or
 * by a conditional update of an expired or released record, renew by a
 * conditional update, judge expiry by when the record last changed on the
 * local clock, and stop acting when no renewal succeeded within the renew
 * deadline.
 */
export class Elector {
  readonly #c: ElectorConfig;
  // Emits each new (leading, leader) pair to the subscriber.
  readonly #emit: (l: Leadership) => void;
  // What the lock held when last read or written; every write is conditional on its version.
  #observed: Observed | undefined;
  // Local time at which #observed last changed: the follower's expiry clock.
  #observedAt = 0;
  // True between onStartedLeading and onStoppedLeading.
  #leading = false;
  // Aborts the signal handed to onStartedLeading when leadership ends.
  #leaderAbort: AbortController | undefined;
  // Fires at the renew deadline: the leader stops acting if no renewal was sent-and-confirmed by then.
  #deadlineTimer: Subscription | undefined;
  // The next attempt.
  #loopTimer: Subscription | undefined;
  // The attempt in flight, so a deadline or an unsubscribe can cut its requests.
  #inflight: AbortController | undefined;
  // The holder last reported through onNewLeader, so each change is reported once.
  #reportedLeader = '';
  // The last emitted state, so only changes are emitted.
  #last: Leadership = { leading: false, leader: undefined };
  // Set by stop(): nothing is scheduled, emitted or called back after it (except the release).
  #stopped = false;

  constructor(config: ElectorConfig, emit: (l: Leadership) => void) {
    this.#c = config;
    this.#emit = emit;
  }

  /** Starts attempting at once. */
  start(): void {
    void this.#attempt();
  }

  /** Stops: cuts requests and timers, ends leadership (callbacks), and releases the lock when configured. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#loopTimer?.unsubscribe();
    this.#inflight?.abort(STOPPED);
    const wasLeading = this.#leading;
    this.#endLeadership();
    if (wasLeading && this.#c.releaseOnCancel) void this.#release();
  }

  async #attempt(): Promise<void> {
    if (this.#stopped) return;
    const controller = new AbortController();
    this.#inflight = controller;
    // Bounds a candidate's attempt; a leader's is cut sooner by its deadline.
    const timeout = this.#timeout(controller, 'attempt');
    let ok = false;
    try {
      ok = await this.#tryAcquireOrRenew(controller.signal);
    } catch (err) {
      // A lock that throws where it should reject must not end the loop.
      this.#report(err);
    } finally {
      timeout.unsubscribe();
      if (this.#inflight === controller) this.#inflight = undefined;
    }
    if (this.#stopped) return;
    if (ok && !this.#leading) this.#startLeading();
    this.#publish();
    // A subscriber may have unsubscribed from inside a callback or an emission just now.
    if (this.#stopped) return;
    const { retryPeriod, random } = this.#c;
    const r = random();
    // The leader renews at a steady pace; candidates spread out with client-go's jitter.
    const delay = this.#leading ? retryPeriod : retryPeriod * (1 + (r >= 0 && r < 1 ? r : 0) * JITTER_FACTOR);
    this.#loopTimer = this.#c.scheduler.schedule(() => void this.#attempt(), timerDelay(delay));
  }

  /** client-go's tryAcquireOrRenew; true when this replica holds the lock as of a write sent within its deadline. */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { lock, identity } = this.#c;
    const observed = this.#observed;
    // 1. Fast path: the leader writes over the version it last wrote, without reading first.
    if (this.#leading && observed !== undefined && observed.record.holderIdentity === identity && this.#leaseValid()) {
      // A conflict means someone wrote since: read what they wrote.
      const renewed = await this.#write(signal, observed.record, isConflict, (r) => lock.update(r, observed.version, signal));
      if (renewed !== undefined) return renewed;
    }
    // 2. Read (or create) the record.
    let read;
    try {
      read = await lock.get(signal);
    } catch (err) {
      return signal.aborted ? this.#aborted(signal) : this.#fail(err);
    }
    if (read === undefined) {
      const lost = (err: unknown): boolean => isAlreadyExists(err) || isConflict(err);
      const first = { acquireTime: undefined, leaderTransitions: 0 };
      return (await this.#write(signal, first, lost, (r) => lock.create(r, signal))) ?? false;
    }
    this.#see(read.record, read.version);
    const holder = read.record.holderIdentity;
    // 3. Held by someone else and not expired on our clock: wait.
    if (holder !== '' && holder !== identity && this.#leaseValid()) {
      // Another holder means this replica lost the lock, whatever its deadline says.
      if (this.#leading) this.#endLeadership();
      return false;
    }
    // 4. Take it over (or renew it, when the record names this replica), conditional on the version just read.
    const from = holder === identity ? read.record : { acquireTime: undefined, leaderTransitions: read.record.leaderTransitions + 1 };
    return (await this.#write(signal, from, isConflict, (r) => lock.update(r, read.version, signal))) ?? false;
  }

  /** Sends this replica's record, continuing `from`; undefined when it failed (reported unless `lost` says a lost race). */
  async #write(
    signal: AbortSignal,
    from: Carried,
    lost: (err: unknown) => boolean,
    send: (r: LeaderElectionRecord) => Promise<unknown>,
  ): Promise<boolean | undefined> {
    const sentAt = this.#now();
    const stamp = microTime(sentAt);
    const record: LeaderElectionRecord = {
      holderIdentity: this.#c.identity,
      leaseDurationSeconds: Math.ceil(this.#c.leaseDuration / 1000),
      acquireTime: from.acquireTime ?? stamp,
      renewTime: stamp,
      leaderTransitions: from.leaderTransitions,
    };
    try {
      return this.#wrote(record, await send(record), sentAt);
    } catch (err) {
      if (signal.aborted) return this.#aborted(signal);
      if (!lost(err)) this.#report(err);
      return undefined;
    }
  }

  /** A write landed: it counts only if confirmed before the deadline it sets, since others count from its sending. */
  #wrote(record: LeaderElectionRecord, version: unknown, sentAt: number): boolean {
    this.#see(record, version);
    const deadline = sentAt + this.#c.renewDeadline;
    const now = this.#now();
    if (now >= deadline) {
      if (this.#leading) this.#endLeadership();
      return false;
    }
    this.#deadlineTimer?.unsubscribe();
    this.#deadlineTimer = this.#c.scheduler.schedule(() => this.#onDeadline(), timerDelay(deadline - now));
    return true;
  }

  #onDeadline(): void {
    if (this.#stopped || !this.#leading) return;
    this.#inflight?.abort(STOPPED);
    this.#endLeadership();
    this.#publish();
  }

  #see(record: LeaderElectionRecord, version: unknown): void {
    const raw = rawRecord(record);
    if (this.#observed?.raw !== raw) this.#observedAt = this.#now();
    this.#observed = { record, raw, version };
  }

  /** client-go's isLeaseValid: the observed record's own duration, counted from when it changed on this clock. */
  #leaseValid(): boolean {
    const o = this.#observed;
    return o !== undefined && this.#observedAt + o.record.leaseDurationSeconds * 1000 > this.#now();
  }

  #startLeading(): void {
    this.#leading = true;
    const controller = new AbortController();
    this.#leaderAbort = controller;
    // The new holder (this replica) is reported before leading starts, as client-go does.
    this.#publish(false);
    const cb = this.#c.onStartedLeading;
    if (cb === undefined) return;
    try {
      const result: unknown = cb(controller.signal);
      if (result instanceof Promise) result.catch((err: unknown) => this.#report(err));
    } catch (err) {
      this.#report(err);
    }
  }

  #endLeadership(): void {
    if (!this.#leading) return;
    this.#leading = false;
    this.#deadlineTimer?.unsubscribe();
    this.#deadlineTimer = undefined;
    this.#leaderAbort?.abort();
    this.#leaderAbort = undefined;
    this.#call(this.#c.onStoppedLeading);
  }

  /** Reports a new holder, then emits the state if it changed. */
  #publish(emit = true): void {
    const holder = this.#observed?.record.holderIdentity ?? '';
    if (holder !== this.#reportedLeader) {
      this.#reportedLeader = holder;
      const cb = this.#c.onNewLeader;
      if (holder !== '' && cb !== undefined) this.#call(() => cb(holder));
    }
    if (!emit || this.#stopped) return;
    const next: Leadership = { leading: this.#leading, leader: holder === '' ? undefined : holder };
    if (next.leading === this.#last.leading && next.leader === this.#last.leader) return;
    this.#last = next;
    this.#emit(next);
  }

  /** client-go's release: empty the holder with a 1 s duration, conditional on what this replica last wrote. */
  async #release(): Promise<void> {
    const { lock, identity } = this.#c;
    const observed = this.#observed;
    if (observed === undefined || observed.record.holderIdentity !== identity) return;
    const controller = new AbortController();
    const timeout = this.#timeout(controller, 'release');
    const released = (transitions: number): LeaderElectionRecord => {
      const stamp = microTime(this.#now());
      return { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: stamp, renewTime: stamp, leaderTransitions: transitions };
    };
    try {
      try {
        await lock.update(released(observed.record.leaderTransitions), observed.version, controller.signal);
      } catch (err) {
        if (!isConflict(err)) throw err;
        // An aborted renewal may still have landed; release over it only if the record still names this replica.
        const read = await lock.get(controller.signal);
        if (read === undefined || read.record.holderIdentity !== identity) return;
        await lock.update(released(read.record.leaderTransitions), read.version, controller.signal);
      }
    } catch (err) {
      if (!isConflict(err)) this.#report(controller.signal.aborted ? controller.signal.reason : err);
    } finally {
      timeout.unsubscribe();
    }
  }

  /** Aborts `controller` with a TIMEOUT ConnectionError once `renewDeadline` has passed. */
  #timeout(controller: AbortController, what: string): Subscription {
    const { lock, scheduler, renewDeadline } = this.#c;
    return scheduler.schedule(() => {
      controller.abort(new ConnectionError(`leader election on ${lock.describe()}: ${what} took longer than ${renewDeadline} ms`, { code: 'TIMEOUT' }));
    }, timerDelay(renewDeadline));
  }

  #aborted(signal: AbortSignal): false {
    if (signal.reason !== STOPPED && !this.#stopped) this.#report(signal.reason);
    return false;
  }

  #fail(err: unknown): false {
    this.#report(err);
    return false;
  }

  #call(fn: (() => void) | undefined): void {
    if (fn === undefined) return;
    try {
      fn();
    } catch (err) {
      this.#report(err);
    }
  }

  #report(err: unknown): void {
    reportTo(this.#c.onError, err);
  }

  #now(): number {
    return this.#c.scheduler.now();
  }
}

/** A Kubernetes MicroTime: RFC 3339 in UTC with six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function rawRecord(r: LeaderElectionRecord): string {
  return JSON.stringify([r.holderIdentity, r.leaseDurationSeconds, r.acquireTime ?? null, r.renewTime ?? null, r.leaderTransitions]);
}
