import { Observable, type Observer, type Subscriber, type Subscription, type TeardownLogic } from 'rxjs';

/**
 * An Observable that tells its subscribe function whether the subscription
 * being made reads the values: a `next` function or an observer with `next`
 * does (so does a piped subscription: the operator passes one);
 * `subscribe()` or an observer with only `error`/`complete` does not. A
 * controller, and a sharded controller's replica, report failures through
 * their error channel while nobody reads the outcomes that carry them (CR-13).
 */
export class ReadingObservable<T> extends Observable<T> {
  // Set for the duration of one subscribe() call; a holder, since `this` is not reachable before super().
  readonly #reading: { now: boolean };

  constructor(body: (subscriber: Subscriber<T>, reading: boolean) => TeardownLogic, reading = { now: false }) {
    super((subscriber) => body(subscriber, reading.now));
    this.#reading = reading;
  }

  override subscribe(observerOrNext?: Partial<Observer<T>> | ((value: T) => void) | null, error?: ((error: unknown) => void) | null, complete?: (() => void) | null): Subscription {
    const outer = this.#reading.now;
    this.#reading.now = typeof observerOrNext === 'function' || (typeof observerOrNext === 'object' && observerOrNext !== null && typeof observerOrNext.next === 'function');
    try {
      // The three-callback form only when it was used, so rxjs sees the call it was given.
      return error === undefined && complete === undefined ? super.subscribe(observerOrNext ?? undefined) : super.subscribe(observerOrNext as never, error, complete);
    } finally {
      this.#reading.now = outer;
    }
  }
}
