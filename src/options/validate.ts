import type { SchedulerLike } from 'rxjs';

// The one options validator: every public function checks its options up front with these, and names a bad
// value one way (`describeValue`), so a mistake reads the same wherever it is made.

/**
 * Names a bad value in an error message, without throwing on odd inputs and
 * without printing what an object holds, since an option object may carry a
 * KubeConfig or a token: a string quoted, a number as written (NaN and
 * Infinity too), a function by name, `{}`, a plain object by its keys, an
 * array by its length, any other object by its class.
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  if (typeof value !== 'object' || value === null) return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `an array of ${value.length}`;
  try {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null) {
      const keys = Object.keys(value);
      return keys.length === 0 ? '{}' : `an object with keys ${JSON.stringify(keys)}`;
    }
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' ? `a ${name}` : Object.prototype.toString.call(value);
  } catch {
    return 'an object';
  }
}

/**
 * Checks that `options` is an object holding only `names`, so a misspelt
 * option (say `ratelimiter`) fails loudly instead of silently meaning the default.
 */
export function checkOptionNames(where: string, options: unknown, names: readonly string[]): Record<string, unknown> {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${where}: options must be an object, got ${describeValue(options)}`);
  }
  const record = options as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    if (!names.includes(name)) throw new TypeError(`${where}: unknown option ${JSON.stringify(name)}`);
  }
  return record;
}

/** A duration or count option: a number, not NaN, within `min`…`max`; `undefined` gives `fallback`. */
export function numberOption(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  { min = 0, max = Infinity, integer = false, finite = true }: { min?: number; max?: number; integer?: boolean; finite?: boolean } = {},
): number {
  if (value === undefined) return fallback;
  const ok =
    typeof value === 'number' &&
    !Number.isNaN(value) &&
    value >= min &&
    value <= max &&
    (!finite || Number.isFinite(value)) &&
    (!integer || Number.isInteger(value) || value === Infinity);
  if (!ok) {
    const kind = integer ? 'an integer' : finite ? 'a finite number' : 'a number';
    const range = max === Infinity ? `>= ${min}` : `from ${min} to ${max}`;
    throw new TypeError(`${where}: option "${name}" must be ${kind} ${range}, got ${describeValue(value)}`);
  }
  return value;
}

/** A required duration: a finite number (negative allowed where the caller says so). */
export function delayArgument(where: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${where}: ${name} must be a finite number of milliseconds, got ${describeValue(value)}`);
  }
  return value;
}

/** An rxjs scheduler, of which only `now()` and `schedule()` are used. */
export function schedulerOption(where: string, value: unknown, fallback: SchedulerLike): SchedulerLike {
  if (value === undefined) return fallback;
  const s = value as Partial<SchedulerLike> | null;
  if (typeof value !== 'object' || s === null || typeof s.now !== 'function' || typeof s.schedule !== 'function') {
    throw new TypeError(`${where}: option "scheduler" must be an rxjs SchedulerLike (now and schedule), got ${describeValue(value)}`);
  }
  return value as SchedulerLike;
}

/** An optional callback option. */
export function functionOption<F>(where: string, name: string, value: unknown): F | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') throw new TypeError(`${where}: option "${name}" must be a function, got ${describeValue(value)}`);
  return value as F;
}

/** An optional boolean option; `undefined` gives `fallback`. */
export function booleanOption(where: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${where}: option "${name}" must be a boolean, got ${describeValue(value)}`);
  return value;
}

/** An optional option that is one of a few strings; `undefined` gives `fallback`. */
export function oneOf<const V extends string>(where: string, name: string, value: unknown, allowed: readonly V[], fallback: V): V {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new TypeError(`${where}: option "${name}" must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${describeValue(value)}`);
  }
  return value as V;
}

/** Every key of every member of a union (`keyof` of a union gives only the keys all members share). */
type KeysOfUnion<T> = T extends unknown ? keyof T : never;

/**
 * The names of an options interface, for `checkOptionNames`, checked by the
 * compiler against the interface: the record must list every key of `T`
 * (optional ones included; of every member where `T` is a union) and nothing
 * else, so an option added to the interface and not here, or one left here
 * after it was removed, does not compile.
 */
export function optionNames<T extends object>(names: { readonly [K in KeysOfUnion<T>]-?: true }): readonly (KeysOfUnion<T> & string)[] {
  return Object.keys(names) as (KeysOfUnion<T> & string)[];
}
