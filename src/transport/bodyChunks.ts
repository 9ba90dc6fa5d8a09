// The chunks of a response body as the socket delivered them. Internal: `send`
// hands an uncompressed body to its reader through this.

import { finished, type Readable } from 'node:stream';

/**
 * The chunks of `stream` one by one, as an async iterable to read once.
 *
 * Iterating a Readable with `for await` reads it in paused mode, where each
 * read takes everything buffered and copies it into one new buffer, and
 * every read costs a 'readable' event and a promise. Here the stream flows
 * and its chunks wait for the reader in a queue, never copied; the stream
 * pauses once the queue holds its high-water mark and resumes when the
 * reader has taken it all. So it holds at most about two high-water marks
 * (the queue, and the stream's own buffer behind it), the worst case of
 * `for await` too, and then it stops reading the socket (docs/semantics.md
 * PF-48). How the body ends is
 * told as `for await` tells it (`finished`): the stream's error, or a
 * premature close, with nothing more read from a stream destroyed before
 * its end; the stream is destroyed once the iteration ends, early or not,
 * as `for await` destroys it.
 *
 * @param stream a body stream nobody else reads
 * @returns its chunks
 */
export function bodyChunks(stream: Readable): AsyncIterable<Buffer> {
  return { [Symbol.asyncIterator]: () => new BodyChunks(stream) };
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
const EMPTY = Buffer.alloc(0);

class BodyChunks implements AsyncIterator<Buffer, undefined> {
  readonly #stream: Readable;
  /** Chunks that arrived while the reader was not waiting, oldest first from `#first`. */
  #held: Buffer[] = [];
  #first = 0;
  /** Their bytes: the stream pauses once they reach its high-water mark. */
  #heldBytes = 0;
  /** The high-water mark of the stream. */
  readonly #bound: number;
  /** The reader waiting for the next chunk, if any. */
  #waiting: { resolve(r: IteratorResult<Buffer, undefined>): void; reject(err: unknown): void } | undefined;
  /** How the stream ended: `null` at its end, its error otherwise; undefined while it runs. */
  #ended: Error | null | undefined;
  /** The iteration is over: nothing more is read and the stream was let go. */
  #over = false;
  /** Stops watching the stream's end. */
  readonly #cleanup: () => void;

  constructor(stream: Readable) {
    this.#stream = stream;
    this.#bound = stream.readableHighWaterMark;
    // Paused before the 'data' listener exists, so the stream flows only once the reader asks.
    stream.pause();
    stream.on('data', this.#onData);
    this.#cleanup = finished(stream, { writable: false }, (err) => this.#onEnd(err ?? null));
  }

  readonly #onData = (chunk: Buffer): void => {
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      waiting.resolve({ done: false, value: chunk });
      return;
    }
    this.#held.push(chunk);
    this.#heldBytes += chunk.length;
    if (this.#heldBytes >= this.#bound) this.#stream.pause();
  };

  #onEnd(err: Error | null): void {
    if (this.#ended !== undefined) return;
    this.#ended = err;
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    this.#waiting = undefined;
    this.#finish();
    if (err === null) waiting.resolve(DONE);
    else waiting.reject(err);
  }

  next(): Promise<IteratorResult<Buffer, undefined>> {
    // `for await` reads nothing more from a stream destroyed before its end and waits to be told why; so here.
    if (this.#stream.destroyed && !this.#stream.readableEnded) this.#drop();
    const chunk = this.#take();
    if (chunk !== undefined) return Promise.resolve({ done: false, value: chunk });
    if (this.#over) return Promise.resolve(DONE);
    const ended = this.#ended;
    if (ended !== undefined) {
      this.#finish();
      return ended === null ? Promise.resolve(DONE) : Promise.reject(ended);
    }
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#stream.resume();
    });
  }

  /** The oldest held chunk; the queue is emptied in place and let go once taken. */
  #take(): Buffer | undefined {
    if (this.#first >= this.#held.length) return undefined;
    const chunk = this.#held[this.#first] as Buffer;
    this.#held[this.#first++] = EMPTY;
    this.#heldBytes -= chunk.length;
    if (this.#first === this.#held.length) {
      this.#held = [];
      this.#first = 0;
    }
    return chunk;
  }

  #drop(): void {
    this.#held = [];
    this.#first = 0;
    this.#heldBytes = 0;
  }

  return(): Promise<IteratorResult<Buffer, undefined>> {
    this.#finish();
    return Promise.resolve(DONE);
  }

  /** Lets go of the stream, destroying it whatever state it is in, as a `for await` loop's end does. */
  #finish(): void {
    if (this.#over) return;
    this.#over = true;
    this.#drop();
    this.#stream.off('data', this.#onData);
    this.#cleanup();
    this.#stream.destroy();
  }
}
