/**
 * Node keeps timer delays in a signed 32-bit number of milliseconds: a delay
 * above 2³¹−1 ms (about 24.8 days) is replaced by 1 ms with a
 * `TimeoutOverflowWarning`, so a day-long `Retry-After` or a month-long
 * resync period would fire at once, again and again. rxjs's schedulers pass
 * their delay to the same timers.
 */

/** The longest delay a timer can be given: 2³¹−1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A delay a timer keeps as given: NaN and negatives become 0, anything over
 * {@link MAX_TIMER_MS} becomes that (a timer then fires early rather than at
 * once; callers that wait for a due time check it when the timer fires).
 * Every timer fed by an option or by a server's value goes through this.
 *
 * Internal (not exported from the package, so no `## Example`):
 * `setTimeout(fn, timerDelay(opts.timeoutMs))`.
 *
 * @param ms the wanted delay in milliseconds
 * @returns the delay in [0, 2³¹−1]
 */
export function timerDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return ms > MAX_TIMER_MS ? MAX_TIMER_MS : ms;
}
