import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { ResourceLock } from './types.js';
import { describeValue } from '../options/validate.js';

/**
 * client-go's `JitterFactor`: a candidate waits `retryPeriod × (1 + r × 1.2)`
 * (r uniform in [0, 1)) between attempts, and `renewDeadline` must exceed
 * `retryPeriod × 1.2`.
 */
export const JITTER_FACTOR = 1.2;

/**
 * asyncScheduler's timers, with a clock that only moves forward: a follower that took a wall-clock jump for
 * elapsed time could judge a live lease expired (client-go relies on Go's monotonic clock for the same reason).
 */
const monotonicScheduler: SchedulerLike = {
  now: () => performance.timeOrigin + performance.now(),
  schedule: ((work: Parameters<SchedulerLike['schedule']>[0], delay?: number, state?: unknown) =>
    asyncScheduler.schedule(work as never, delay, state)) as SchedulerLike['schedule'],
};

/**
 * Options of {@link leaderElection}.
 *
 * ## Example
 * ```ts
 * import { leaderElection, leaseLock, type LeaderElectionOptions } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const opts: LeaderElectionOptions = {
 *   lock: leaseLock(kc, { namespace: 'default', name: 'my-controller' }),
 *   identity: 'replica-a',
 *   leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000,
 * };
 * leaderElection(opts).subscribe();
 * ```
 */
export interface LeaderElectionOptions {
  /** Where the record lives, usually {@link leaseLock}. */
  readonly lock: ResourceLock<unknown>;
  /** This replica's identity, unique among the candidates (e.g. the pod name plus a random suffix). */
  readonly identity: string;
  /**
   * Milliseconds a follower waits, after it last saw the record change on its own clock, before it may take over.
   * Written to the lock in whole seconds, rounded up.
   * @default 15_000
   */
  readonly leaseDuration?: number;
  /**
   * Milliseconds after its last successful renewal was sent within which the leader must renew again, or stop
   * acting. Must be less than `leaseDuration`.
   * @default 10_000
   */
  readonly renewDeadline?: number;
  /**
   * Milliseconds between attempts: the leader renews this often; candidates retry this often, with jitter.
   * Must be less than `renewDeadline / 1.2`.
   * @default 2_000
   */
  readonly retryPeriod?: number;
  /**
   * On unsubscribe, a leader stops acting and then empties the holder of the lock (a conditional update with a 1 s
   * duration), so that a successor takes over at its next attempt instead of waiting out the lease.
   * @default false
   */
  readonly releaseOnCancel?: boolean;
  /**
   * Called when this replica starts leading, with a signal that aborts when it stops. What it returns (a promise)
   * is awaited only to report a rejection.
   * @default undefined
   */
  readonly onStartedLeading?: (signal: AbortSignal) => unknown;
  /** Called when this replica stops leading (renewal failed, another holder seen, or unsubscribed). @default undefined */
  readonly onStoppedLeading?: () => void;
  /** Called with the identity of each new holder observed, this replica included. @default undefined */
  readonly onNewLeader?: (identity: string) => void;
  /**
   * Receives every failure: lock reads and writes that failed for another reason than contention (409), and what
   * the callbacks throw. Without it, failures go to the process-wide `reportError`.
   * @default undefined
   */
  readonly onError?: (err: Error) => void;
  /**
   * The clock and timers; a `VirtualTimeScheduler` in tests. Its `now()` measures every duration and stamps
   * `acquireTime`/`renewTime`, so it should not jump: the default never does, where `Date.now()` may when the
   * system clock is set.
   * @default asyncScheduler's timers with a monotonic clock (`performance.timeOrigin + performance.now()`)
   */
  readonly scheduler?: SchedulerLike;
  /** Random numbers in [0, 1) for the retry jitter. @default Math.random */
  readonly random?: () => number;
}

/** The callbacks, which stay optional once the options are checked. */
type Callbacks = 'onStartedLeading' | 'onStoppedLeading' | 'onNewLeader' | 'onError';

/** Options with defaults applied. */
export type ElectorConfig = Required<Omit<LeaderElectionOptions, Callbacks>> & Pick<LeaderElectionOptions, Callbacks>;

/** Checks every option up front, throwing a TypeError that names the bad one and its value. */
export function validateOptions(opts: LeaderElectionOptions): ElectorConfig {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`leaderElection: options must be an object, got ${describeValue(opts)}`);
  const lock = opts.lock;
  if (lock === null || typeof lock !== 'object' || typeof lock.get !== 'function' || typeof lock.create !== 'function' || typeof lock.update !== 'function') {
    throw new TypeError(`lock: expected a ResourceLock (get, create, update), got ${describeValue(lock)}`);
  }
  if (typeof opts.identity !== 'string' || opts.identity === '') throw new TypeError(`identity: expected a non-empty string, got ${describeValue(opts.identity)}`);
  const leaseDuration = duration(opts.leaseDuration, 'leaseDuration', 15_000);
  const renewDeadline = duration(opts.renewDeadline, 'renewDeadline', 10_000);
  const retryPeriod = duration(opts.retryPeriod, 'retryPeriod', 2_000);
  if (leaseDuration <= renewDeadline) {
    throw new TypeError(`leaseDuration: must be greater than renewDeadline (${renewDeadline} ms), got ${leaseDuration} ms`);
  }
  if (renewDeadline <= JITTER_FACTOR * retryPeriod) {
    throw new TypeError(`renewDeadline: must be greater than retryPeriod × ${JITTER_FACTOR} (${JITTER_FACTOR * retryPeriod} ms), got ${renewDeadline} ms`);
  }
  const releaseOnCancel = opts.releaseOnCancel ?? false;
  if (typeof releaseOnCancel !== 'boolean') throw new TypeError(`releaseOnCancel: expected a boolean, got ${describeValue(releaseOnCancel)}`);
  for (const name of ['onStartedLeading', 'onStoppedLeading', 'onNewLeader', 'onError', 'random'] as const) {
    const fn = opts[name];
    if (fn !== undefined && typeof fn !== 'function') throw new TypeError(`${name}: expected a function, got ${describeValue(fn)}`);
  }
  const scheduler = opts.scheduler ?? monotonicScheduler;
  if (scheduler === null || typeof scheduler !== 'object' || typeof scheduler.now !== 'function' || typeof scheduler.schedule !== 'function') {
    throw new TypeError(`scheduler: expected an rxjs SchedulerLike, got ${describeValue(scheduler)}`);
  }
  return {
    lock,
    identity: opts.identity,
    leaseDuration,
    renewDeadline,
    retryPeriod,
    releaseOnCancel,
    onStartedLeading: opts.onStartedLeading,
    onStoppedLeading: opts.onStoppedLeading,
    onNewLeader: opts.onNewLeader,
    onError: opts.onError,
    scheduler,
    random: opts.random ?? Math.random,
  };
}

function duration(value: unknown, name: string, fallback: number): number {
  const v = value ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new TypeError(`${name}: expected a positive number of milliseconds, got ${describeValue(value)}`);
  return v;
}
