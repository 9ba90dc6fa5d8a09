import type { ReflectorCounters } from './types.js';

/** {@link ReflectorCounters} as the reflector keeps them while counting, every count writable (internal). */
export type MutableCounters = { -readonly [K in keyof ReflectorCounters]: ReflectorCounters[K] extends number ? number : Record<keyof ReflectorCounters[K], number> };

/** Every counter at zero, with a key for every reason and kind, so each label value is there from the start. */
export function zeroCounters(): MutableCounters {
  return {
    lists: 0,
    watches: 0,
    relists: 0,
    events: 0,
    decodeErrors: 0,
    errors: 0,
    relistsByReason: { expired: 0, 'very-short-watch': 0, 'watch-failed': 0, 'list-failed': 0 },
    retriesByKind: { 'watch-closed': 0, 'very-short-watch': 0, expired: 0, decode: 0, stalled: 0, 'initial-events-incomplete': 0, throttled: 0, server: 0 },
  };
}

/** A copy that shares nothing with `c`. */
export function copyCounters(c: ReflectorCounters): MutableCounters {
  return { ...c, relistsByReason: { ...c.relistsByReason }, retriesByKind: { ...c.retriesByKind } };
}

/** The sum of two sets of counters (of two runs of a reflector), as a new object. */
export function addCounters(a: ReflectorCounters, b: ReflectorCounters): MutableCounters {
  return addRecords(a, b) as MutableCounters;
}

/** Adds `b`'s numbers to `a`'s, record by record, into new objects. */
function addRecords(a: object, b: object): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const mine = out[key];
    out[key] = typeof value === 'number' ? ((mine as number | undefined) ?? 0) + value : addRecords((mine as object | undefined) ?? {}, value as object);
  }
  return out;
}
