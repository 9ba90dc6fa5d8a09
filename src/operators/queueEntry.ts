// What both queues do to an object as it enters: key it and transform it,
// reporting a failure of either and skipping that one object (D-19, PF-10).

import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { KeyError } from '../store/errors/KeyError.js';
import type { KeyFunc } from '../store/types.js';
import { TransformError } from './TransformError.js';

/** The user callbacks an entering object meets, and where their failures go. */
export interface EntryConfig<T> {
  readonly keyFunc: KeyFunc<T>;
  readonly transform: ((obj: T) => T) | undefined;
  readonly report: (err: Error) => void;
}

/**
 * The object's key (a tombstone's own), or `undefined` after reporting a
 * key function that threw or gave no string.
 */
export function keyOfEntry<T>(config: EntryConfig<T>, obj: T | DeletedFinalStateUnknown<T>): string | undefined {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  try {
    const key = config.keyFunc(obj);
    if (typeof key !== 'string') throw new TypeError(`key function returned ${typeof key}, not a string`);
    return key;
  } catch (err) {
    config.report(new KeyError(obj, err));
    return undefined;
  }
}

/** The object after the user transform, run once as it enters; tombstones pass untouched (D-5). */
export function transformedEntry<T>(config: EntryConfig<T>, key: string, obj: T): { ok: true; obj: T } | { ok: false } {
  const transform = config.transform;
  if (transform === undefined || obj instanceof DeletedFinalStateUnknown) return { ok: true, obj };
  try {
    return { ok: true, obj: transform(obj) };
  } catch (err) {
    config.report(new TransformError(key, obj, err));
    return { ok: false };
  }
}
