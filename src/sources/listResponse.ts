// One LIST response read in two steps (internal): first as far as the list's
// metadata, then to its end. The pager reads a page's continue token from the
// first step and opens the next page while this one decodes (docs/semantics.md
// P-1); a source without this view is read with `list` as before.

import { ListDecoder } from './listDecoder.js';
import type { ListerWatcher, ListOptions, ObjectList } from './types.js';

/** The method under which a source opens one LIST response to be read in steps. */
export const LIST_RESPONSE: unique symbol = Symbol('rxkube.listResponse');

/** One LIST response, read only as far as asked. */
export interface ListResponse<T> {
  /**
   * Reads until the list's metadata has been read or the items begin,
   * whichever comes first (and sends the request, on the first call).
   *
   * @returns The metadata when it came before the items, else `undefined`; the same promise every call.
   * @throws The request's error (a typed API error, a ConnectionError, a DecodeError, the abort reason).
   */
  head(): Promise<ObjectList<T>['metadata'] | undefined>;
  /**
   * Reads the rest of the body.
   *
   * @returns The page; the same promise every call.
   */
  page(): Promise<ObjectList<T>>;
  /** Ends the request wherever it is, and releases its connection; a pending `head` or `page` rejects. */
  cancel(): void;
}

/** A source that can open a LIST response to be read in steps. */
export interface SteppedLists<T> {
  [LIST_RESPONSE](opts: ListOptions, signal: AbortSignal): ListResponse<T>;
}

/** Whether `lw` offers the stepped view. */
export function hasSteppedLists<T>(lw: ListerWatcher<T>): lw is ListerWatcher<T> & SteppedLists<T> {
  return typeof (lw as Partial<SteppedLists<T>>)[LIST_RESPONSE] === 'function';
}

/** A response body decoded by {@link ListDecoder} as far as asked. */
export class DecodedListResponse<T> implements ListResponse<T> {
  readonly #controller = new AbortController();
  readonly #signal: AbortSignal;
  readonly #onAbort = (): void => this.#controller.abort(this.#signal.reason);
  readonly #chunks: AsyncGenerator<Buffer, void, undefined>;
  readonly #decoder: ListDecoder<T>;
  readonly #items: T[] = [];
  #ended = false;
  #head: Promise<ObjectList<T>['metadata'] | undefined> | undefined;
  #page: Promise<ObjectList<T>> | undefined;

  /**
   * @param open Starts the request (lazily, on the first chunk asked for) and yields its body's chunks; ends it when its signal aborts.
   * @param signal The caller's signal: aborting it ends the request too.
   */
  constructor(open: (signal: AbortSignal) => AsyncGenerator<Buffer, void, undefined>, signal: AbortSignal, dropManagedFields: boolean) {
    this.#signal = signal;
    // A listener rather than AbortSignal.any, removed when the response ends, as getBody does with its own.
    if (signal.aborted) this.#controller.abort(signal.reason);
    else signal.addEventListener('abort', this.#onAbort, { once: true });
    this.#chunks = open(this.#controller.signal);
    this.#decoder = new ListDecoder<T>({ dropManagedFields });
  }

  head(): Promise<ObjectList<T>['metadata'] | undefined> {
    this.#head ??= this.#readHead();
    return this.#head;
  }

  page(): Promise<ObjectList<T>> {
    this.#page ??= this.#readPage();
    return this.#page;
  }

  cancel(): void {
    this.#controller.abort(new DOMException('the list request was cancelled', 'AbortError'));
    this.#close();
  }

  async #readHead(): Promise<ObjectList<T>['metadata'] | undefined> {
    try {
      for (;;) {
        const meta = this.#decoder.earlyMetadata;
        if (meta !== undefined) return meta;
        if (this.#decoder.itemsBegun || this.#ended) return undefined;
        await this.#pull();
      }
    } catch (err) {
      this.#close();
      throw err;
    }
  }

  async #readPage(): Promise<ObjectList<T>> {
    try {
      await this.head();
      while (!this.#ended) await this.#pull();
      return { ...this.#decoder.end(), items: this.#items };
    } catch (err) {
      this.#close();
      throw err;
    } finally {
      this.#release();
    }
  }

  async #pull(): Promise<void> {
    const next = await this.#chunks.next();
    if (next.done === true) this.#ended = true;
    else this.#decoder.push(next.value, this.#items);
  }

  /** Ends the body's reader (a decode error leaves it suspended mid-body), which releases the connection. */
  #close(): void {
    this.#release();
    void this.#chunks.return(undefined).catch(() => undefined);
  }

  #release(): void {
    this.#signal.removeEventListener('abort', this.#onAbort);
  }
}
