import { vi } from 'vitest';
import { reflect, type ReflectOptions, type ReflectorStatus } from '../../src/reflector/index.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
// A scripted, in-memory ListerWatcher for the timing tests of reflect(): a
// test double of the interface whose every answer is chosen by the test.
import type { ListerWatcher, ListOptions, ObjectList, WatchEvent, WatchOptions } from '../../src/sources/types.js';

export interface Pod {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion: string };
  readonly spec?: { readonly n?: number };
}

export const pod = (name: string, rv: string | number, n?: number): Pod => ({
  metadata: { name, namespace: 'default', resourceVersion: String(rv) },
  ...(n === undefined ? {} : { spec: { n } }),
});

export const bookmark = (rv: string | number, annotations?: Record<string, string>): WatchEvent<Pod> => ({
  type: 'BOOKMARK',
  object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: String(rv), ...(annotations ? { annotations } : {}) } },
});

function abortError(): Error {
  const err = new Error('aborted');
  err.name = 'AbortError';
  return err;
}

/** A watch response the test drives: push events, end it, or break it with an error. */
export class WatchChannel {
  readonly opts: WatchOptions;
  readonly signal: AbortSignal;
  #queue: (IteratorResult<WatchEvent<Pod>> | { error: unknown })[] = [];
  #waiting: ((item: IteratorResult<WatchEvent<Pod>> | { error: unknown }) => void) | undefined;

  constructor(opts: WatchOptions, signal: AbortSignal) {
    this.opts = opts;
    this.signal = signal;
    signal.addEventListener('abort', () => this.#deliver({ error: abortError() }), { once: true });
  }

  push(...events: WatchEvent<Pod>[]): this {
    for (const event of events) this.#deliver({ done: false, value: event });
    return this;
  }

  end(): void {
    this.#deliver({ done: true, value: undefined });
  }

  fail(error: unknown): void {
    this.#deliver({ error });
  }

  #deliver(item: IteratorResult<WatchEvent<Pod>> | { error: unknown }): void {
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting(item);
    } else this.#queue.push(item);
  }

  async *events(): AsyncGenerator<WatchEvent<Pod>> {
    for (;;) {
      const item =
        this.#queue.shift() ??
        (await new Promise<IteratorResult<WatchEvent<Pod>> | { error: unknown }>((resolve) => (this.#waiting = resolve)));
      if ('error' in item) throw item.error;
      if (item.done === true) return;
      yield item.value;
    }
  }
}

type ListAnswer = ObjectList<Pod> | Error | ((opts: ListOptions) => ObjectList<Pod> | Error | 'hang');
type WatchScript = (channel: WatchChannel) => void;

/**
 * Answers lists from a queue (else the default list) and hands every watch
 * to the next script in the queue (else leaves it open, silent).
 */
export class ScriptedLW implements ListerWatcher<Pod> {
  readonly lists: { opts: ListOptions; signal: AbortSignal }[] = [];
  readonly watches: WatchChannel[] = [];
  readonly listAnswers: ListAnswer[] = [];
  readonly watchScripts: WatchScript[] = [];
  defaultList: ObjectList<Pod> = { metadata: { resourceVersion: '10' }, items: [pod('a', 5)] };
  supportsWatchList?: boolean;

  constructor(opts: { supportsWatchList?: boolean } = {}) {
    if (opts.supportsWatchList !== undefined) this.supportsWatchList = opts.supportsWatchList;
  }

  list(opts: ListOptions, signal: AbortSignal): Promise<ObjectList<Pod>> {
    this.lists.push({ opts, signal });
    const next = this.listAnswers.shift() ?? this.defaultList;
    const answer = typeof next === 'function' ? next(opts) : next;
    if (answer === 'hang') {
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(abortError()), { once: true }));
    }
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  }

  watch(opts: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<Pod>> {
    const channel = new WatchChannel(opts, signal);
    this.watches.push(channel);
    const script = this.watchScripts.shift();
    if (script) queueMicrotask(() => script(channel));
    return channel.events();
  }

  /** The latest watch. */
  get watching(): WatchChannel {
    const w = this.watches.at(-1);
    if (!w) throw new Error('no watch was opened');
    return w;
  }
}

/** Lets promise chains run and fake timers fire up to `ms` of fake time from now. */
export async function advance(ms = 0): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  for (let i = 0; i < 5; i++) await vi.advanceTimersByTimeAsync(0);
}

/** Subscribes reflect() to `lw` with random() = 0 unless given, recording events, statuses and the outcome. */
export function runReflect(lw: ListerWatcher<Pod>, opts: ReflectOptions = {}) {
  const events: ReflectorEvent<Pod>[] = [];
  const statuses: (ReflectorStatus & { at: number })[] = [];
  const result: { error?: unknown; completed: boolean } = { completed: false };
  const sub = reflect(lw, { random: () => 0, ...opts, status: (s) => statuses.push({ ...s, at: Date.now() }) }).subscribe({
    next: (e) => events.push(e),
    error: (e: unknown) => (result.error = e),
    complete: () => (result.completed = true),
  });
  const of = <S extends ReflectorStatus['state']>(state: S) =>
    statuses.filter((s): s is Extract<ReflectorStatus, { state: S }> & { at: number } => s.state === state);
  return {
    events,
    statuses,
    result,
    sub,
    of,
    delays: () => of('backoff').map((s) => s.delayMs),
    last: () => statuses.at(-1)!,
    types: () => events.map((e) => e.type),
  };
}

/**
 * The most retries a schedule allows within `windowMs`: each retry waits at
 * least its base delay (jitter only stretches it), so count how many minimum
 * delays fit. `minDelays(n)` is the least wait before the n-th retry (1-based).
 */
export function maxRetriesWithin(windowMs: number, minDelay: (n: number) => number): number {
  let n = 0;
  let spent = 0;
  for (;;) {
    const next = minDelay(n + 1);
    if (spent + next > windowMs) return n;
    spent += next;
    n += 1;
  }
}

/** client-go's base delays: 800 ms × 2 up to 30 s; `nth` is 1-based. */
export const clientGoBase = (nth: number): number => Math.min(800 * 2 ** (nth - 1), 30_000);
/** A fault a new request fixes: the first retry is immediate (≥ 0 ms), the n-th waits client-go's (n−1)-th base delay. */
export const fastRetryBase = (nth: number): number => (nth === 1 ? 0 : clientGoBase(nth - 1));
