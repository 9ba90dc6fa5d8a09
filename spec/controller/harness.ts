import type { Subscription } from 'rxjs';
import { controller, type Controller } from '../../src/controller/controller.js';
import type { ControllerOptions, ReconcileOutcome } from '../../src/controller/types.js';
import type { KubeObject } from '../../src/store/types.js';
import { settle, virtualClock, type VirtualClock } from '../workqueue/virtualTime.js';
import type { MemorySource } from './memorySource.js';

/** A controller on a virtual clock, with what it did recorded. */
export interface Harness {
  readonly ctl: Controller<KubeObject>;
  readonly clock: VirtualClock;
  readonly outcomes: ReconcileOutcome<KubeObject>[];
  readonly errors: Error[];
  /** Every reconcile call: the key and the virtual time it started at. */
  readonly calls: { readonly key: string; readonly at: number }[];
  /** Lets worker loops and promise callbacks run, then moves virtual time. */
  advance(ms: number): Promise<void>;
  /** The times `key` was reconciled at. */
  timesOf(key: string): number[];
  readonly subscription: Subscription;
}

/**
 * Runs a controller over `primary` on a virtual clock. By default it
 * subscribes with a `next` callback (outcomes consumed); `consume: false`
 * subscribes with `subscribe()` alone.
 */
export function runController(
  primary: MemorySource<KubeObject>,
  opts: Partial<ControllerOptions<KubeObject>>,
  { consume = true }: { consume?: boolean } = {},
): Harness {
  const clock = virtualClock();
  const calls: { key: string; at: number }[] = [];
  const errors: Error[] = [];
  const outcomes: ReconcileOutcome<KubeObject>[] = [];
  const userReconcile = opts.reconcile;
  const ctl = controller<KubeObject>({
    for: primary,
    scheduler: clock.scheduler,
    onError: (err) => errors.push(err),
    ...opts,
    reconcile: (o, ctx) => {
      calls.push({ key: ctx.key, at: clock.scheduler.now() });
      return userReconcile?.(o, ctx);
    },
  });
  const subscription = consume ? ctl.subscribe({ next: (o) => outcomes.push(o), error: () => {} }) : ctl.subscribe();
  return {
    ctl,
    clock,
    outcomes,
    errors,
    calls,
    subscription,
    async advance(ms) {
      await settle(50);
      clock.advance(ms);
      await settle(50);
    },
    timesOf: (key) => calls.filter((c) => c.key === key).map((c) => c.at),
  };
}
