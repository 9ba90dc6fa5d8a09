import type { SchedulerLike } from 'rxjs';
import type { RateLimiter } from '../workqueue/rateLimiters.js';
import type { ReadYourWrites } from './readYourWrites.js';
import type { Triggers } from './triggers.js';
import type { ErrorPolicy, ReconcileOutcome, Reconciler } from './types.js';

// What a controller's run is built from and what it tells the controller, apart from the run itself, so that the
// run and the reconcile step it drives both import this file and neither imports the other.

/** A controller's options once checked, with defaults applied. */
export interface RunConfig<T> {
  readonly name: string;
  readonly triggers: Triggers<T>;
  readonly reconcile: Reconciler<T>;
  readonly errorPolicy: ErrorPolicy<T> | undefined;
  readonly concurrency: number;
  readonly resyncPeriod: number;
  readonly shutdownTimeoutMs: number;
  readonly reconcileTimeoutMs: number | undefined;
  readonly priorityQueue: boolean;
  /** Groups keys for fairness; never throws (a throw is filed under `''`). */
  readonly fairBy: ((key: string) => string) | undefined;
  readonly rateLimiter: RateLimiter<string>;
  readonly scheduler: SchedulerLike;
  readonly readYourWrites?: ReadYourWrites | undefined;
}

/** The fairness group of `key`, for metrics; undefined without `fairBy`. A `fairBy` that throws (the queue reported it) files the key under `''`. */
export function groupOf(config: Pick<RunConfig<unknown>, 'fairBy'>, key: string): string | undefined {
  if (config.fairBy === undefined) return undefined;
  try {
    const group = config.fairBy(key);
    return typeof group === 'string' ? group : '';
  } catch {
    return '';
  }
}

/** What a run tells the controller that started it. */
export interface RunHooks<T> {
  outcome(outcome: ReconcileOutcome<T>): void;
  report(err: Error): void;
  /** A reconcile of `key` failed (its outcome follows); `terminal` when it is not retried. */
  failed(key: string, error: Error, terminal: boolean): void;
  /** `key` reconciled fine, or is gone. */
  settled(key: string): void;
  /** Something the status shows changed. */
  changed(): void;
  /** A source ended (with an error nothing can heal, or because it was stopped). */
  ended(err: Error | undefined): void;
}
