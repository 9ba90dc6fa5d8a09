import { asyncScheduler } from 'rxjs';
import { resolveOwnerOptions } from '../operators/ownerKeys.js';
import type { RateLimiter } from '../workqueue/rateLimiters.js';
import { booleanOption, checkOptionNames, functionOption, numberOption, optionNames, schedulerOption, describeValue } from '../options/validate.js';
import { resolveReadYourWrites, type ReadYourWritesSettings } from './readYourWrites.js';
import { checkPredicates } from '../operators/predicateFilter.js';
import type { Predicate } from '../operators/predicates.js';
import type { ControllerOptions, ControllerSource, ErrorPolicy, ForSource, OwnsSource, Reconciler, WatchesSource } from './types.js';

/**
 * Controller options after the checks: defaults applied where they need no other option, `for` split into its
 * source and predicates, `readYourWrites` with its timeout folded in.
 */
export type ResolvedControllerOptions<T> = Readonly<
  Required<Pick<ControllerOptions<T>, 'owns' | 'reconcile' | 'concurrency' | 'resyncPeriod' | 'shutdownTimeoutMs' | 'priorityQueue' | 'scheduler' | 'name'>> &
    Pick<ControllerOptions<T>, 'errorPolicy' | 'reconcileTimeoutMs' | 'fairBy' | 'signal' | 'rateLimiter' | 'onError'> & {
      for: ControllerSource<T>;
      /** The primary source's predicates; empty lets every change through. */
      forPredicates: readonly Predicate<T>[];
      watches: readonly WatchesSource<unknown>[];
      readYourWrites: ReadYourWritesSettings | undefined;
    }
>;

/**
 * Every option `controller()` takes, as a record the compiler checks against `ControllerOptions` (none missing,
 * none extra); the composite forms spread it, less the options they replace, so their lists follow it.
 */
export const CONTROLLER_OPTIONS = {
  for: true,
  owns: true,
  watches: true,
  reconcile: true,
  errorPolicy: true,
  concurrency: true,
  resyncPeriod: true,
  shutdownTimeoutMs: true,
  reconcileTimeoutMs: true,
  priorityQueue: true,
  fairBy: true,
  signal: true,
  rateLimiter: true,
  scheduler: true,
  onError: true,
  name: true,
  readYourWrites: true,
  readYourWritesTimeoutMs: true,
} as const satisfies { readonly [K in keyof Required<ControllerOptions<unknown>>]: true };

const CONTROLLER_OPTION_NAMES = optionNames<ControllerOptions<unknown>>(CONTROLLER_OPTIONS);

function checkSource(where: string, value: unknown): ControllerSource<unknown> {
  const s = value as Partial<ControllerSource<unknown>> | null;
  const ok =
    typeof value === 'object' &&
    s !== null &&
    typeof s.subscribe === 'function' &&
    typeof s.status$?.subscribe === 'function' &&
    typeof s.store?.getByKey === 'function' &&
    typeof s.store.keyOf === 'function';
  if (!ok) throw new TypeError(`controller: ${where} must be an informer (an Observable of events with store and status$), got ${describeValue(value)}`);
  return value as ControllerSource<unknown>;
}

function checkList(name: string, value: unknown): readonly unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`controller: option "${name}" must be an array, got ${describeValue(value)}`);
  return value;
}

/** Option `for`: an informer, or `{ source, predicates }` (CR-113). */
function resolveFor<T>(value: unknown): { source: ControllerSource<T>; predicates: readonly Predicate<T>[] } {
  const entry = value as Partial<ForSource<T>> | null;
  // An informer is an Observable; the entry form is a plain object with a source.
  if (typeof value !== 'object' || entry === null || typeof (value as { subscribe?: unknown }).subscribe === 'function' || !('source' in entry)) {
    return { source: checkSource('option "for"', value) as ControllerSource<T>, predicates: [] };
  }
  const extra = Object.keys(entry).filter((k) => k !== 'source' && k !== 'predicates');
  if (extra.length > 0) throw new TypeError(`controller: option "for" takes { source, predicates }, got unknown ${extra.map((k) => JSON.stringify(k)).join(', ')}`);
  const source = checkSource('for.source', entry.source) as ControllerSource<T>;
  const predicates = entry.predicates ?? [];
  checkPredicates('controller: for.predicates', predicates);
  return { source, predicates };
}

/** Checks every option up front, so a mistake throws at construction rather than on the first event. */
export function resolveControllerOptions<T>(opts: ControllerOptions<T>): ResolvedControllerOptions<T> {
  const o = checkOptionNames('controller', opts, CONTROLLER_OPTION_NAMES);
  const { source: primary, predicates: forPredicates } = resolveFor<T>(o['for']);
  const owns = checkList('owns', o['owns']).map((entry, i) => {
    if (typeof entry !== 'object' || entry === null) throw new TypeError(`controller: owns[${i}] must be { source, kind?, apiVersion?, … }, got ${describeValue(entry)}`);
    const { source, predicates, ...ownerOptions } = entry as OwnsSource;
    checkSource(`owns[${i}].source`, source);
    if (predicates !== undefined) checkPredicates(`controller: owns[${i}].predicates`, predicates);
    resolveOwnerOptions(`controller: owns[${i}]`, ownerOptions);
    return entry as OwnsSource;
  });
  const watches = checkList('watches', o['watches']).map((entry, i) => {
    if (typeof entry !== 'object' || entry === null) throw new TypeError(`controller: watches[${i}] must be { source, map }, got ${describeValue(entry)}`);
    const w = entry as WatchesSource<unknown>;
    checkSource(`watches[${i}].source`, w.source);
    if (typeof w.map !== 'function') throw new TypeError(`controller: watches[${i}].map must be a function, got ${describeValue(w.map)}`);
    if (w.predicates !== undefined) checkPredicates(`controller: watches[${i}].predicates`, w.predicates);
    return w;
  });
  const reconcile = o['reconcile'];
  if (typeof reconcile !== 'function') throw new TypeError(`controller: option "reconcile" must be a function, got ${describeValue(reconcile)}`);
  const signal = o['signal'];
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError(`controller: option "signal" must be an AbortSignal, got ${describeValue(signal)}`);
  const rateLimiter = o['rateLimiter'];
  const name = o['name'] ?? primary.name ?? 'controller';
  if (typeof name !== 'string' || name === '') throw new TypeError(`controller: option "name" must be a non-empty string, got ${describeValue(name)}`);
  const scheduler = schedulerOption('controller', o['scheduler'], asyncScheduler);
  const reconcileTimeoutMs = o['reconcileTimeoutMs'] === undefined ? undefined : numberOption('controller', 'reconcileTimeoutMs', o['reconcileTimeoutMs'], 0, { min: 1 });
  const priorityQueue = booleanOption('controller', 'priorityQueue', o['priorityQueue'], true);
  return {
    for: primary,
    forPredicates,
    owns,
    watches,
    reconcile: reconcile as Reconciler<T>,
    errorPolicy: functionOption<ErrorPolicy<T>>('controller', 'errorPolicy', o['errorPolicy']),
    concurrency: numberOption('controller', 'concurrency', o['concurrency'], 1, { min: 1, integer: true }),
    resyncPeriod: numberOption('controller', 'resyncPeriod', o['resyncPeriod'], 0),
    shutdownTimeoutMs: numberOption('controller', 'shutdownTimeoutMs', o['shutdownTimeoutMs'], 30_000),
    reconcileTimeoutMs,
    priorityQueue,
    fairBy: functionOption<(key: string) => string>('controller', 'fairBy', o['fairBy']),
    signal,
    rateLimiter: rateLimiter as RateLimiter<string> | undefined,
    scheduler,
    onError: functionOption<(err: Error) => void>('controller', 'onError', o['onError']),
    name,
    readYourWrites: resolveReadYourWrites(o['readYourWrites'], o['readYourWritesTimeoutMs']),
  };
}
