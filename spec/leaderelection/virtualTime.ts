import { VirtualAction, VirtualTimeScheduler, type Subscription } from 'rxjs';
import { leaderElection } from '../../src/leaderelection/leaderElection.js';
import type { LeaderElectionOptions } from '../../src/leaderelection/options.js';
import type { Leadership } from '../../src/leaderelection/types.js';
import { MemoryLockStore, type MemoryLockClient } from './memoryLock.js';

/** Lets every settled promise run its continuations. */
async function drain(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** A virtual clock that also runs the promise continuations each timer starts, so async state machines step exactly. */
export class Clock {
  readonly scheduler = new VirtualTimeScheduler(VirtualAction, Infinity);

  now(): number {
    return this.scheduler.now();
  }

  /** Runs every timer due up to `t` (and the promise chains they start), then sets the clock to `t`. */
  async to(t: number): Promise<void> {
    const s = this.scheduler;
    for (;;) {
      await drain();
      const next = s.actions[0];
      if (next === undefined || next.delay > t) break;
      s.maxFrames = next.delay;
      s.flush();
    }
    if (t > s.frame) s.frame = t;
    await drain();
  }

  /** Advances by `ms`. */
  by(ms: number): Promise<void> {
    return this.to(this.now() + ms);
  }
}

/** One candidate with everything it said, timestamped on the virtual clock. */
export interface Candidate {
  readonly identity: string;
  readonly client: MemoryLockClient;
  /** `started@t`, `stopped@t`, `new:<id>@t` in call order. */
  readonly log: string[];
  readonly states: Leadership[];
  readonly errors: Error[];
  readonly leading: () => boolean;
  stop(): void;
}

/** A fresh store on a fresh clock. */
export function world(): { clock: Clock; store: MemoryLockStore; candidate: (identity: string, opts?: Partial<LeaderElectionOptions>) => Candidate } {
  const clock = new Clock();
  const store = new MemoryLockStore(clock.scheduler);
  const candidate = (identity: string, opts: Partial<LeaderElectionOptions> = {}): Candidate => {
    const client = store.client(identity);
    const log: string[] = [];
    const states: Leadership[] = [];
    const errors: Error[] = [];
    const at = (): number => clock.now();
    const sub: Subscription = leaderElection({
      lock: client,
      identity,
      scheduler: clock.scheduler,
      random: () => 0,
      onStartedLeading: () => void log.push(`started@${at()}`),
      onStoppedLeading: () => void log.push(`stopped@${at()}`),
      onNewLeader: (id) => void log.push(`new:${id}@${at()}`),
      onError: (e) => void errors.push(e),
      ...opts,
    }).subscribe((s) => states.push(s));
    return {
      identity,
      client,
      log,
      states,
      errors,
      leading: () => states.at(-1)?.leading === true,
      stop: () => sub.unsubscribe(),
    };
  };
  return { clock, store, candidate };
}
