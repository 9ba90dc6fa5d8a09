// What V8 says when strict-mode code writes to a frozen or sealed object (or array).
const FROZEN_WRITE = /^Cannot (assign to read only property|add property .*, object is not extensible|delete property|define property .*, object is not extensible|redefine property)/;

/**
 * Explains a write to an object from the cache. Cached objects are
 * deep-frozen (shared with every other reader), so code that changes one in
 * place fails with the engine's terse TypeError; this gives a TypeError that
 * says why and how to copy the object, with the original as `cause`. Any
 * other error comes back unchanged.
 *
 * @param err what a reconcile or handler threw.
 * @returns the explained TypeError, or `err` itself.
 */
export function explainFrozenWrite<E>(err: E): E | TypeError {
  if (!(err instanceof TypeError) || !FROZEN_WRITE.test(err.message)) return err;
  return new TypeError(
    `${err.message}: objects from the cache are deep-frozen, shared with every other reader; change a copy instead, e.g. const copy = structuredClone(obj)`,
    { cause: err },
  );
}
