/**
 * A signal of one's own that follows other signals, and lets go of them when
 * done. `AbortSignal.any` would do the following, but its composite stays
 * attached to a long-lived input as a dependant, so a caller signal that
 * outlives thousands of requests or reconciles would gather thousands of
 * them. A listener removed at the end leaves nothing behind.
 */

/** What {@link followSignals} gives: the signal, a way to abort it, and the end of the following. */
export interface SignalFollower {
  /** Aborts with the reason of the first followed signal that aborts, or of {@link abort}. */
  readonly signal: AbortSignal;
  /** Aborts `signal` with `reason` (a DOMException `AbortError` when none is given); once aborted, it stays so. */
  abort(reason?: unknown): void;
  /** Removes every listener put on the followed signals; calling it again does nothing. */
  release(): void;
}

/**
 * A new controller's signal that aborts with the reason of whichever of
 * `signals` aborts first (at once, with the first one's reason in argument
 * order, when some are already aborted); `undefined` entries are skipped.
 * Call `release()` when the work the signal guards is over, so the followed
 * signals keep no listener of it.
 *
 * Internal (not exported from the package, so no `## Example`):
 * `const f = followSignals(callerSignal); try { await send({ signal: f.signal }) } finally { f.release() }`.
 *
 * @param signals the signals to follow
 * @returns the follower: its signal, `abort(reason)` and `release()`
 */
export function followSignals(...signals: readonly (AbortSignal | undefined)[]): SignalFollower {
  const controller = new AbortController();
  const followed = signals.filter((s): s is AbortSignal => s !== undefined);
  // One listener for all, so a signal given twice holds it once.
  const onAbort = (event: Event): void => controller.abort((event.target as AbortSignal).reason);
  const already = followed.find((s) => s.aborted);
  if (already !== undefined) controller.abort(already.reason);
  else for (const s of followed) s.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    abort: (reason?: unknown): void => controller.abort(reason),
    release: (): void => {
      for (const s of followed) s.removeEventListener('abort', onAbort);
    },
  };
}
