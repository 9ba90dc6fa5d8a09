import { VirtualTimeScheduler } from 'rxjs';
import type { WorkQueue } from '../../src/workqueue/index.js';

/** A virtual clock for work queue specs: time moves only when a spec says so. */
export interface VirtualClock {
  readonly scheduler: VirtualTimeScheduler;
  /** Runs every timer due within `ms` and leaves the clock exactly `ms` later. */
  advance(ms: number): void;
  /** Timers still scheduled (0 means nothing would keep a process alive). */
  pendingTimers(): number;
}

export function virtualClock(): VirtualClock {
  const scheduler = new VirtualTimeScheduler();
  return {
    scheduler,
    advance(ms) {
      const target = scheduler.now() + ms;
      // A no-op at the target moves the frame there even when no timer of the queue is due.
      const marker = scheduler.schedule(() => {}, ms);
      scheduler.maxFrames = target;
      scheduler.flush();
      marker.unsubscribe();
    },
    pendingTimers: () => scheduler.actions.length,
  };
}

/** Lets promise callbacks (resolved get() calls, loop bodies) run. */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}

/**
 * Takes every item waiting now, one at a time (one worker), marking each done: what `pick` makes of each
 * taken item, the item itself by default.
 */
export async function drainNow<T, R = T>(
  queue: WorkQueue<T>,
  pick: (got: { readonly item: T; readonly priority: number }) => R = (got) => got.item as unknown as R,
): Promise<R[]> {
  const out: R[] = [];
  while (queue.len() > 0) {
    const got = await queue.get();
    if (got.shutdown) break;
    out.push(pick(got));
    queue.done(got.item);
  }
  return out;
}
