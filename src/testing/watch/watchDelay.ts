import type { Sink } from '../server/sink.js';
import { describeValue } from '../../options/validate.js';
import { timerDelay } from '../../options/timerDelay.js';

/**
 * Options of {@link ApiServerFaults.delayWatches}.
 *
 * ## Example
 * ```ts
 * import { startApiServer, type WatchDelayOptions } from 'rxkube/testing';
 *
 * const server = await startApiServer();
 * const lag: WatchDelayOptions = { resource: 'v1/configmaps', delayMs: 50 };
 * server.faults.delayWatches(lag);
 * ```
 */
export interface WatchDelayOptions {
  /** Only watches of this resource (`v1/pods`, `apps/v1/deployments`…). @default every resource */
  readonly resource?: string;
  /** How long each watch line is held; `Infinity` holds them until `release()`. @default Infinity */
  readonly delayMs?: number;
}

/**
 * A delay of watch lines in force, from {@link ApiServerFaults.delayWatches}:
 * `release()` ends it and sends at once whatever it was holding.
 *
 * ## Example
 * ```ts
 * import { startApiServer, type WatchDelay } from 'rxkube/testing';
 *
 * const server = await startApiServer();
 * const hold: WatchDelay = server.faults.delayWatches({ resource: 'v1/configmaps' });
 * await server.create('v1/configmaps', { metadata: { name: 'cfg', namespace: 'default' } }); // watchers hear nothing yet
 * hold.release(); // now they do
 * ```
 */
export interface WatchDelay {
  /** Ends the delay: lines it holds go out now, in order; later lines are not delayed by it. */
  release(): void;
  /** Watch lines (events and bookmarks) this delay holds now. */
  readonly held: number;
}

/** One delay in force. */
export class DelayState implements WatchDelay {
  readonly resource: string | undefined;
  readonly delayMs: number;
  released = false;
  held = 0;
  // Outputs holding lines under this delay, to be pumped on release.
  readonly waiting = new Set<DelayedOutput>();
  readonly #onRelease: (d: DelayState) => void;

  constructor(resource: string | undefined, delayMs: number, onRelease: (d: DelayState) => void) {
    this.resource = resource;
    this.delayMs = delayMs;
    this.#onRelease = onRelease;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.#onRelease(this);
    for (const o of [...this.waiting]) o.pump();
    this.waiting.clear();
  }
}

/** The delays in force, as the watch hub consults them for every flush. */
export class WatchDelays {
  readonly #active = new Set<DelayState>();

  add(opts: WatchDelayOptions | undefined): DelayState {
    if (opts !== undefined && (opts === null || typeof opts !== 'object')) throw new TypeError(`faults.delayWatches: options must be an object, got ${describeValue(opts)}`);
    const resource = opts?.resource;
    if (resource !== undefined && (typeof resource !== 'string' || resource === '')) {
      throw new TypeError(`faults.delayWatches: resource must be a resource name like 'v1/pods', got ${describeValue(resource)}`);
    }
    const delayMs = opts?.delayMs ?? Infinity;
    if (typeof delayMs !== 'number' || Number.isNaN(delayMs) || delayMs < 0) {
      throw new TypeError(`faults.delayWatches: delayMs must be a number >= 0 or Infinity, got ${describeValue(opts?.delayMs)}`);
    }
    const d = new DelayState(resource, delayMs, (state) => this.#active.delete(state));
    this.#active.add(d);
    return d;
  }

  /** The longest delay in force for watches of `resourceId`, if any (a cheap check: usually none). */
  for(resourceId: string): DelayState | undefined {
    if (this.#active.size === 0) return undefined;
    let longest: DelayState | undefined;
    for (const d of this.#active) {
      if (d.resource !== undefined && d.resource !== resourceId) continue;
      if (longest === undefined || d.delayMs > longest.delayMs) longest = d;
    }
    return longest;
  }

  clear(): void {
    for (const d of [...this.#active]) d.release();
  }
}

/** A line (or the end of the response) waiting for its time. */
interface Pending {
  readonly chunk: string | undefined;
  readonly due: number;
  readonly delay: DelayState | undefined;
}

/**
 * One watcher's output while a delay holds some of it: chunks leave in the
 * order they were written, each once its delay has passed or was released,
 * and the end of the response only after them.
 */
export class DelayedOutput {
  readonly #sink: Sink;
  #queue: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  #dropped = false;

  constructor(sink: Sink) {
    this.#sink = sink;
  }

  /** True while something waits: later output must queue behind it. */
  get busy(): boolean {
    return this.#queue.length > 0;
  }

  write(chunk: string, delay: DelayState | undefined): void {
    if (this.#dropped) return;
    const due = delay === undefined ? 0 : Date.now() + delay.delayMs;
    this.#queue.push({ chunk, due, delay });
    if (delay !== undefined) {
      delay.held += countLines(chunk);
      delay.waiting.add(this);
    }
    this.pump();
  }

  /** Ends the response once everything before has gone out. */
  end(): void {
    if (this.#dropped) return;
    this.#queue.push({ chunk: undefined, due: 0, delay: undefined });
    this.pump();
  }

  /** Sends what is due, in order, and waits for the next due time. */
  pump(): void {
    if (this.#dropped) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const now = Date.now();
    while (this.#queue.length > 0) {
      const head = this.#queue[0] as Pending;
      if (head.delay !== undefined && !head.delay.released && head.due > now) {
        if (Number.isFinite(head.due)) {
          this.#timer = setTimeout(() => this.pump(), timerDelay(head.due - now));
          this.#timer.unref();
        }
        return;
      }
      this.#queue.shift();
      if (head.delay !== undefined) head.delay.held -= countLines(head.chunk);
      if (head.chunk === undefined) this.#sink.end();
      else this.#sink.write(head.chunk);
    }
  }

  /** The connection is gone: nothing more is written. */
  drop(): void {
    this.#dropped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    for (const p of this.#queue) {
      if (p.delay === undefined) continue;
      p.delay.held -= countLines(p.chunk);
      p.delay.waiting.delete(this);
    }
    this.#queue = [];
  }
}

function countLines(chunk: string | undefined): number {
  if (chunk === undefined) return 0;
  let n = 0;
  for (let i = chunk.indexOf('\n'); i >= 0; i = chunk.indexOf('\n', i + 1)) n++;
  return n;
}
