// How an informer's resync check period follows what its handlers ask for (S-11, S-19, S-21).

import { HandlerRegistration } from './registration.js';
import type { Listener } from './listeners.js';

/**
 * client-go's resyncCheckPeriod: how often the reflector ticks when a lifetime starts — the informer's
 * default period (at least 1 s) or the smallest a handler asked for, whichever is smaller; 0 when nobody
 * wants a resync.
 */
export function resyncCheckPeriod<T>(base: number, listeners: readonly Listener<T>[]): number {
  let period = base === 0 ? 0 : Math.max(base, 1000);
  for (const l of listeners) if (l instanceof HandlerRegistration) period = lowerCheckPeriod(period, l);
  return period;
}

/**
 * The check period once `reg` joins: lowered to its period when that is shorter (or when nothing resynced
 * before), so every handler resyncs at its own period whenever it was added. client-go instead raises a
 * handler added after start to the informer's check period; here the first handler is what starts the
 * informer, so every later one would be "after start" and one asking for a shorter period would never get it.
 * The period is not raised again when that handler leaves: extra ticks find no handler due and cost a check.
 */
export function lowerCheckPeriod<T>(checkPeriod: number, reg: HandlerRegistration<T>): number {
  const wanted = reg.resyncPeriod;
  return wanted !== 0 && (checkPeriod === 0 || wanted < checkPeriod) ? wanted : checkPeriod;
}

/** Starts a handler's resync clock: its first resync is one period after `now` (the start, or its registration). */
export function armResync<T>(reg: HandlerRegistration<T>, now: number): void {
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
