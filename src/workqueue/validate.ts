import type { SchedulerLike } from 'rxjs';

/** Renders a bad value for an error message without throwing on odd inputs. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  // JSON would print NaN and Infinity as null.
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'symbol') return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Checks that `options` is an object holding only `names`, so a misspelt
 * option (say `ratelimiter`) fails loudly instead of silently meaning the default.
 */
export function checkOptionNames(where: string, options: unknown, names: readonly string[]): Record<string, unknown> {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${where}: options must be an object, got ${show(options)}`);
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
  { min = 0, integer = false, finite = true }: { min?: number; integer?: boolean; finite?: boolean } = {},
): number {
  if (value === undefined) return fallback;
  const ok =
    typeof value === 'number' &&
    !Number.isNaN(value) &&
    value >= min &&
    (!finite || Number.isFinite(value)) &&
    (!integer || Number.isInteger(value) || value === Infinity);
  if (!ok) {
    const kind = integer ? 'an integer' : finite ? 'a finite number' : 'a number';
    throw new TypeError(`${where}: option "${name}" must be ${kind} >= ${min}, got ${show(value)}`);
  }
  return value;
}

/** A required duration: a finite number (negative allowed where the caller says so). */
export function delayArgument(where: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${where}: ${name} must be a finite number of milliseconds, got ${show(value)}`);
  }
  return value;
}

/** An rxjs scheduler, of which only `now()` and `schedule()` are used. */
export function schedulerOption(where: string, value: unknown, fallback: SchedulerLike): SchedulerLike {
  if (value === undefined) return fallback;
  const s = value as Partial<SchedulerLike> | null;
  if (typeof value !== 'object' || s === null || typeof s.now !== 'function' || typeof s.schedule !== 'function') {
    throw new TypeError(`${where}: option "scheduler" must be an rxjs SchedulerLike (now and schedule), got ${show(value)}`);
  }
  return value as SchedulerLike;
}

/** An optional callback option. */
export function functionOption<F>(where: string, name: string, value: unknown): F | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') throw new TypeError(`${where}: option "${name}" must be a function, got ${show(value)}`);
  return value as F;
}
