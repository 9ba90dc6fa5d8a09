export { reflect } from './reflect.js';
export { VeryShortWatchError, InitialEventsIncompleteError, WatchStalledError, WatchDeadlineExceededError } from './errors.js';
export type {
  ReflectorEvent,
  ReflectOptions,
  ReflectorCounters,
  ReflectorState,
  ReflectorStatus,
  RelistReason,
  RetryKind,
} from './types.js';
export type { StallOptions } from './watchRhythm.js';
export type { BackoffOptions } from './backoff.js';
