// kubeSource's ListerWatcher.listResponse: one LIST response body decoded in two
// steps, first as far as the list's metadata, then to its end (docs/semantics.md P-1).

import { followSignals, type SignalFollower } from '../options/followSignals.js';
import { ListDecoder } from './listDecoder.js';
import type { ListResponse, ObjectList } from './types.js';

/** A response body decoded by {@link ListDecoder} as far as asked. */
export class DecodedListResponse<T> implements ListResponse<T> {
  // The request's signal: follows the caller's until the response ends, and is aborted by cancel().
  readonly #request: SignalFollower;
  readonly #chunks: AsyncGenerator<Buffer, void, undefined>;
  readonly #decoder: ListDecoder<T>;
  #items: T[] = [];
  #ended = false;
  #head: Promise<ObjectList<T>['metadata'] | undefined> | undefined;
  #page: Promise<ObjectList<T>> | undefined;

  /**
   * @param open Starts the request (lazily, on the first chunk asked for) and yields its body's chunks; ends it when its signal aborts.
   * @param signal The caller's signal: aborting it ends the request too.
   */
  constructor(
    open: (signal: AbortSignal) => AsyncGenerator<Buffer, void, undefined>,
    signal: AbortSignal,
    decoder: ConstructorParameters<typeof ListDecoder<T>>[0],
  ) {
    this.#request = followSignals(signal);
    this.#chunks = open(this.#request.signal);
    this.#decoder = new ListDecoder<T>(decoder);
  }

  head(): Promise<ObjectList<T>['metadata'] | undefined> {
    this.#head ??= this.#readHead();
    return this.#head;
  }

  page(): Promise<ObjectList<T>> {
    this.#page ??= this.#readPage();
    return this.#page;
  }

  async take(min: number): Promise<readonly T[] | undefined> {
    try {
      await this.head();
      while (!this.#ended && this.#items.length < min) await this.#pull();
    } catch (err) {
      this.#close();
      throw err;
    }
    if (this.#items.length < min) return undefined;
    const taken = this.#items;
    this.#items = [];
    return taken;
  }

  cancel(): void {
    this.#request.abort(new DOMException('the list request was cancelled', 'AbortError'));
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
      this.#request.release();
    }
  }

  async #pull(): Promise<void> {
    const next = await this.#chunks.next();
    if (next.done === true) this.#ended = true;
    else this.#decoder.push(next.value, this.#items);
  }

  /** Ends the body's reader (a decode error leaves it suspended mid-body), which releases the connection. */
  #close(): void {
    this.#request.release();
    void this.#chunks.return(undefined).catch(() => undefined);
  }
}
