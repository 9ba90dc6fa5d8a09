// client-go's negotiation of resync periods between an informer and its handlers (S-11, S-19, S-21).

import { HandlerRegistration } from './registration.js';
import type { Listener } from './listeners.js';

/**
 * client-go's resyncCheckPeriod: how often the reflector ticks for a lifetime — the informer's default period
 * (at least 1 s) or the smallest a handler asked for, whichever is smaller; 0 when nobody wants a resync.
 */
export function resyncCheckPeriod<T>(base: number, listeners: readonly Listener<T>[]): number {
  let period = base === 0 ? 0 : Math.max(base, 1000);
  for (const l of listeners) {
    if (l instanceof HandlerRegistration && l.requestedResyncPeriod !== 0 && (period === 0 || l.requestedResyncPeriod < period)) period = l.requestedResyncPeriod;
  }
  return period;
}

/**
 * A handler's resync period: never more often than the reflector ticks, which is fixed for a lifetime (0, no
 * resync at all, when no handler asked for one when it started).
 */
export function armResync<T>(reg: HandlerRegistration<T>, checkPeriod: number, now: number): void {
  if (reg.requestedResyncPeriod !== 0) reg.resyncPeriod = checkPeriod === 0 ? 0 : Math.max(reg.requestedResyncPeriod, checkPeriod);
  reg.resyncDue = reg.resyncPeriod !== 0;
  reg.nextResyncAt = now + reg.resyncPeriod;
}

/** client-go's shouldResync: marks which handlers are due at `now` and says whether any is. */
export function shouldResync<T>(listeners: readonly Listener<T>[], now: number): boolean {
  let any = false;
  for (const l of listeners) {
    if (!(l instanceof HandlerRegistration)) continue;
    const due = l.resyncPeriod !== 0 && now >= l.nextResyncAt;
    l.resyncDue = due;
    if (due) {
      l.nextResyncAt = now + l.resyncPeriod;
      any = true;
    }
  }
  return any;
}
