/**
 * A watch closed in under a second without delivering a single event.
 * client-go treats this as a failure (a server or proxy that accepts and
 * immediately drops watches would otherwise be hammered in a tight loop), so
 * reflect() backs off and relists.
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
 * and must be requested again.
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
