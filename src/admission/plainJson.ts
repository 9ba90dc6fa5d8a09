// Cheap paths for the two copies a mutating webhook makes per request, each taken only where it gives exactly what
// the general one would: an object parsed from a review body, and the object a handler returns, are plain JSON
// data almost always, and walking them costs a fraction of structuredClone or a JSON.stringify and parse.

// Deeper than this the walks give up and the general path decides (it throws where it must).
const MAX_DEPTH = 100;

const GIVE_UP = Symbol('give up');

/**
 * A deep copy of `value` that is what `structuredClone(value)` gives. Plain objects, arrays and primitives are copied
 * by a walk; anything else (a Date, a class instance, a null-prototype object, an array with holes or extra
 * properties, a value reached twice or a cycle, a depth past 100) goes to structuredClone itself, which also throws
 * what it throws (a function, a symbol, a structure too deep).
 */
export function cloneRequestObject<T>(value: T): T {
  const copy = copyPlain(value, new Set(), 0);
  return copy === GIVE_UP ? structuredClone(value) : (copy as T);
}

function copyPlain(value: unknown, seen: Set<object>, depth: number): unknown {
  if (typeof value !== 'object') return typeof value === 'function' || typeof value === 'symbol' ? GIVE_UP : value;
  if (value === null) return null;
  if (depth > MAX_DEPTH || seen.has(value)) return GIVE_UP;
  seen.add(value);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto === Array.prototype) {
    const from = value as unknown[];
    const length = from.length;
    if (Object.keys(from).length !== length) return GIVE_UP;
    const out: unknown[] = new Array<unknown>(length);
    for (let i = 0; i < length; i++) {
      const item = copyPlain(from[i], seen, depth + 1);
      if (item === GIVE_UP) return GIVE_UP;
      out[i] = item;
    }
    return out;
  }
  if (proto !== Object.prototype) return GIVE_UP;
  const from = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(from)) {
    const item = copyPlain(from[key], seen, depth + 1);
    if (item === GIVE_UP) return GIVE_UP;
    // A key such as `__proto__` is set as an own property, as structuredClone sets it.
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}

/**
 * Whether `value` is already what `JSON.parse(JSON.stringify(value))` gives, so it may stand for it: plain objects
 * and arrays (no holes, no extra properties, no `toJSON`) of strings, booleans, null and finite numbers (not -0), no
 * `undefined` field, at most 100 deep. A value reached twice is fine (its JSON is written twice, the same).
 */
export function isPlainJson(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth > MAX_DEPTH) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto === Array.prototype) {
    const from = value as unknown[];
    const length = from.length;
    if (Object.keys(from).length !== length) return false;
    for (let i = 0; i < length; i++) if (!isPlainJson(from[i], depth + 1)) return false;
    return true;
  }
  if (proto !== Object.prototype) return false;
  const from = value as Record<string, unknown>;
  for (const key of Object.keys(from)) {
    if (key === 'toJSON' || !isPlainJson(from[key], depth + 1)) return false;
  }
  return true;
}
