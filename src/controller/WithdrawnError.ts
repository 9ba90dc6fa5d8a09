// Internal: how a source that owns part of a controller's keys (a cluster of
// a multi-cluster controller) takes an attempt back. Not exported: only a
// composite built on controller() throws it.

/**
 * Thrown by a reconcile when the part of the source its key belongs to left
 * or was replaced while it ran (the reconcile was aborted for that reason):
 * the attempt is no outcome — not counted, not reported, no backoff
 * (docs/semantics.md LT-7). With `requeue` the key is taken again at once
 * (its part was replaced and still holds it); without, its failures are
 * forgotten (its part left).
 */
export class WithdrawnError extends Error {
  override readonly name = 'WithdrawnError';
  /** Whether the key runs again. */
  readonly requeue: boolean;

  constructor(message: string, requeue: boolean, cause: unknown) {
    super(message, { cause });
    this.requeue = requeue;
  }
}
