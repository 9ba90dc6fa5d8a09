// The bytes of one value of a LIST body that the list decoder is reading
// (an item, or a key or value of the envelope), kept across the chunks it
// spans and bounded in size. Internal: the list decoder's memory.

/** What the bytes being captured will become once complete. */
export type CaptureKind = 'none' | 'key' | 'value' | 'item';

/**
 * Where the value being read began and the bytes of it that came in earlier
 * chunks. Only those are kept: a value that lies wholly in one chunk is
 * read from that chunk, and a value that spans chunks is joined once it is
 * complete. The kept bytes are held to the bound, `maxObjectBytes`.
 */
export class ListCapture {
  kind: CaptureKind = 'none';
  /** Whether the value is an object or array (it ends at its bracket) rather than a scalar or string. */
  container = false;
  string = false;
  /** Where the value begins in the current chunk: 0 when it began in an earlier one. */
  start = 0;
  /** Body offset where the value began, for error positions. */
  position = 0;
  /** Bytes of the value that arrived in earlier chunks. */
  #parts: Buffer[] = [];
  /** Their total length, held to {@link ListCapture.max}. */
  #partsBytes = 0;

  /** The most bytes one value may take. */
  readonly max: number;

  /** @param max the most bytes one value may take */
  constructor(max: number) {
    this.max = max;
  }

  /** Starts a value at `start` of the current chunk, which is `position` in the body. */
  begin(kind: CaptureKind, start: number, position: number, container: boolean, string: boolean): void {
    this.kind = kind;
    this.container = container;
    this.string = string;
    this.start = start;
    this.position = position;
    this.drop();
  }

  /** Whether the value began in an earlier chunk. */
  get spans(): boolean {
    return this.#parts.length > 0;
  }

  /** Whether the value, were it to end at `end` of the current chunk, would pass the bound. */
  over(end: number): boolean {
    return this.#partsBytes + end - this.start > this.max;
  }

  /**
   * Keeps what the current chunk holds of an unfinished value, at the end
   * of the chunk; false when that passes the bound (the caller refuses it).
   */
  hold(buf: Buffer): boolean {
    const n = buf.length;
    if (this.kind === 'none' || this.start >= n) return true;
    this.#partsBytes += n - this.start;
    if (this.#partsBytes > this.max) return false;
    this.#parts.push(buf.subarray(this.start, n));
    return true;
  }

  /** The value's bytes up to `end` (exclusive) of the current chunk, joined with the earlier chunks' share; undefined when that passes the bound. */
  take(buf: Buffer, end: number): Buffer | undefined {
    const tail = buf.subarray(this.start, end);
    const parts = this.#parts;
    if (this.#partsBytes + tail.length > this.max) return undefined;
    this.drop();
    if (parts.length === 0) return tail;
    parts.push(tail);
    return Buffer.concat(parts);
  }

  /** Forgets the bytes kept. */
  drop(): void {
    this.#parts = [];
    this.#partsBytes = 0;
  }
}
