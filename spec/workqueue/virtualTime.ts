import { VirtualTimeScheduler } from 'rxjs';

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
