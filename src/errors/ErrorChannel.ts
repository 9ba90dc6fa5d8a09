import { Observable, Subject } from 'rxjs';
import { reportTo } from './reportTo.js';

/**
 * The way errors of a long-lived stream (an informer, a controller) reach
 * the user: its `onError` option when given; the subscribers of its
 * `errors$`; and, when neither listens, the process-wide reporter, so none is
 * silent.
 */
export class ErrorChannel {
  /** The user's redirect, when given: it takes every error. */
  readonly #onError: ((err: Error) => void) | undefined;
  /** Where errors$ subscribers listen. */
  readonly #errors = new Subject<Error>();
  /** Subscribers of errors$: with none and no onError, the process reporter speaks. */
  #listeners = 0;
  /** Every error reported, as an Observable that counts its subscribers. */
  readonly errors$: Observable<Error>;

  constructor(onError: ((err: Error) => void) | undefined) {
    this.#onError = onError;
    this.errors$ = new Observable<Error>((subscriber) => {
      this.#listeners++;
      const inner = this.#errors.subscribe(subscriber);
      return () => {
        this.#listeners--;
        inner.unsubscribe();
      };
    });
  }

  /** Hands `err` to onError, else (with nobody on errors$) to the process reporter, and to errors$ subscribers. */
  report(err: Error): void {
    if (this.#onError !== undefined || this.#listeners === 0) reportTo(this.#onError, err);
    this.#errors.next(err);
  }

  /** Ends errors$. */
  complete(): void {
    this.#errors.complete();
  }
}
