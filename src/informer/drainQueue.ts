// One microtask for the handlers an event reached, instead of one each.

/**
 * The drains of the handler registrations that have something to deliver,
 * run in one microtask in the order they were asked for. An event reaching
 * ten handlers costs one microtask rather than ten; each handler is still
 * called after the informer applied the event and before the next event is
 * applied, and in the same order as before.
 */
export class DrainQueue {
  #due: (() => void)[] = [];
  #scheduled = false;

  readonly #run = (): void => {
    this.#scheduled = false;
    const due = this.#due;
    this.#due = [];
    let failure: unknown;
    for (let i = 0; i < due.length; i++) {
      try {
        (due[i] as () => void)();
      } catch (err) {
        // A drain reports its handler's failures itself; anything else is a fault, thrown once the rest have run.
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  };

  /** Whether drains wait for this queue's microtask. */
  get due(): boolean {
    return this.#scheduled;
  }

  /**
   * Runs `drain` in the next microtask of this queue.
   *
   * @param drain a registration's drain
   */
  add(drain: () => void): void {
    this.#due.push(drain);
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(this.#run);
  }
}
