/** What {@link waitFor} throws when its condition did not hold in time, so a caller can tell a timeout from a condition that threw. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

/** Options of {@link waitFor}. */
export interface WaitOptions {
  /** What was seen last, added to the timeout's message so a failure says why. */
  readonly describe?: () => string;
  /** How long to wait between checks; a condition that asks a server something is not free. @default 5 */
  readonly everyMs?: number;
}

/**
 * Waits until `condition` gives a truthy value, which it returns, checking after every turn of the event loop
 * (at least every `everyMs`); fails with `what` (and `describe()`) after `timeoutMs`. The condition may be async;
 * if it throws, the wait fails with that error. This waits on a condition; it never sleeps a fixed time, and its
 * timeout only ends a wait that would hang: it is no bound on how fast something ran.
 */
export async function waitFor<R>(
  condition: () => R | undefined | false | null | Promise<R | undefined | false | null>,
  what: string,
  timeoutMs = 10_000,
  opts: WaitOptions = {},
): Promise<R> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) {
      const seen = opts.describe?.();
      throw new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${what}${seen === undefined ? '' : `: ${seen}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, opts.everyMs ?? 5));
  }
}

/** A promise and its resolver, for handlers a test wants to hold open. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
