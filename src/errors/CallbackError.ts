/**
 * A function you gave an operator (a predicate, a key function, an owner
 * store) threw; the operator kept running and says what it did instead.
 * The thrown value is the `cause`.
 *
 * ## Example
 * ```ts
 * import { setErrorReporter } from 'rxkube';
 * import { CallbackError } from 'rxkube/core';
 *
 * setErrorReporter((err) => {
 *   if (err instanceof CallbackError) console.warn(`${err.operator}:`, err.message, err.cause);
 * });
 * ```
 */
export class CallbackError extends Error {
  override readonly name = 'CallbackError';
  /** The operator whose callback threw (`predicateFilter`, `debounceByKey`, `joinOwner`). */
  readonly operator: string;

  constructor(operator: string, message: string, cause: unknown) {
    super(`${operator}: ${message}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.operator = operator;
  }
}
