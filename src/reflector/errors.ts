/**
 * A watch closed in under a second without delivering a single event.
 * client-go treats this as a failure (a server or proxy that accepts and
 * immediately drops watches would otherwise be hammered in a tight loop), so
 * reflect() relists (at once the first time, with a growing backoff if it
 * keeps happening).
 *
 * ## Example
 * ```ts
 * import type { Informer } from 'rxkube';
 * import { VeryShortWatchError } from 'rxkube/core';
 * declare const pods: Informer<unknown>;
 *
 * pods.errors$.subscribe((err) => {
 *   if (err instanceof VeryShortWatchError) console.warn(`watch dropped after ${err.durationMs} ms; relisting`);
 * });
 * ```
 */
export class VeryShortWatchError extends Error {
  override readonly name = 'VeryShortWatchError';
  /** How long the watch lasted, in milliseconds. */
  readonly durationMs: number;

  constructor(durationMs: number) {
    super(`very short watch: the watch closed after ${Math.round(durationMs)} ms without any event`);
    this.durationMs = durationMs;
  }
}

/**
 * A streaming list (`sendInitialEvents=true`) ended before the bookmark
 * annotated `k8s.io/initial-events-end`, so the initial state is incomplete
 * and must be requested again: reflect() streams it again (at once the
 * first time).
 *
 * ## Example
 * ```ts
 * import type { Informer } from 'rxkube';
 * import { InitialEventsIncompleteError } from 'rxkube/core';
 * declare const pods: Informer<unknown>;
 *
 * pods.errors$.subscribe((err) => {
 *   if (err instanceof InitialEventsIncompleteError) console.warn(`initial list cut after ${err.received} objects`);
 * });
 * ```
 */
export class InitialEventsIncompleteError extends Error {
  override readonly name = 'InitialEventsIncompleteError';
  /** Objects received before the stream ended. */
  readonly received: number;

  constructor(received: number) {
    super(`streaming list ended after ${received} objects without the k8s.io/initial-events-end bookmark`);
    this.received = received;
  }
}

/**
 * A watch went silent for several of its usual intervals: events or
 * bookmarks had been arriving at a steady rhythm and stopped, while the
 * connection stayed open. reflect() aborts the watch and opens a new one from
 * the last resourceVersion at once, without waiting for the source's idle
 * timeout or for the server to drop the socket.
 *
 * ## Example
 * ```ts
 * import type { Informer } from 'rxkube';
 * import { WatchStalledError } from 'rxkube/core';
 * declare const pods: Informer<unknown>;
 *
 * pods.errors$.subscribe((err) => {
 *   if (err instanceof WatchStalledError) console.warn(`watch silent for ${err.silenceMs} ms (usually ${err.expectedIntervalMs} ms)`);
 * });
 * ```
 */
export class WatchStalledError extends Error {
  override readonly name = 'WatchStalledError';
  /** How long the watch had been silent when it was cut, in milliseconds. */
  readonly silenceMs: number;
  /** The longest interval between arrivals seen recently, in milliseconds: the rhythm the watch had. */
  readonly expectedIntervalMs: number;

  constructor(silenceMs: number, expectedIntervalMs: number) {
    super(
      `watch stalled: nothing for ${Math.round(silenceMs)} ms where something arrived at least every ${Math.round(expectedIntervalMs)} ms`,
    );
    this.silenceMs = silenceMs;
    this.expectedIntervalMs = expectedIntervalMs;
  }
}

/**
 * A watch outlived the `timeoutSeconds` it was sent with by more than the
 * grace the client allows (30 s): the server kept it open, events or not,
 * past the deadline it was asked to end it at. reflect() ends the watch itself and re-watches from the last
 * resourceVersion at once, exactly as after a watch the server ended on
 * time; this notice only says the server overran (HI-60). During a streaming
 * list's initial events it ends the list attempt, which is made again.
 *
 * ## Example
 * ```ts
 * import type { Informer } from 'rxkube';
 * import { WatchDeadlineExceededError } from 'rxkube/core';
 * declare const pods: Informer<unknown>;
 *
 * pods.errors$.subscribe((err) => {
 *   if (err instanceof WatchDeadlineExceededError) console.warn(`server kept a ${err.timeoutSeconds} s watch open for ${err.elapsedMs} ms`);
 * });
 * ```
 */
export class WatchDeadlineExceededError extends Error {
  override readonly name = 'WatchDeadlineExceededError';
  /** The timeout the watch was sent with, in seconds. */
  readonly timeoutSeconds: number;
  /** How long the watch had been open when the client ended it, in milliseconds. */
  readonly elapsedMs: number;

  constructor(timeoutSeconds: number, elapsedMs: number) {
    super(`watch deadline exceeded: the server kept a watch sent with timeoutSeconds=${timeoutSeconds} open for ${Math.round(elapsedMs)} ms; ended by the client`);
    this.timeoutSeconds = timeoutSeconds;
    this.elapsedMs = elapsedMs;
  }
}
