import { reportError, toError } from './reportError.js';

/**
 * Hands an error to the user's callback (an `onError` option) or, when there
 * is none, to the process-wide reporter: the one place this fallback is made
 * (internal). What the callback throws is reported, and so is the error it
 * could not take, so neither is silent and the caller's stream goes on.
 *
 * @param onError the user's callback, when given.
 * @param err what went wrong; anything thrown becomes an Error.
 */
export function reportTo(onError: ((err: Error) => void) | undefined, err: unknown): void {
  const e = toError(err);
  if (onError === undefined) {
    reportError(e);
    return;
  }
  try {
    onError(e);
  } catch (thrown) {
    reportError(thrown);
    reportError(e);
  }
}
