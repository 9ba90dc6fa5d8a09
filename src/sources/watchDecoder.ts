import { DecodeError } from '../errors/api/DecodeError.js';
import type { Redact } from '../errors/api/wireText.js';
import { type CachedLookup, CachedReader } from './cachedParts.js';
import type { WatchBatch, WatchEvent } from './types.js';
import { decodeBytes, isBlankBytes, WatchLines } from './watchLines.js';
import { DEFAULT_MAX_OBJECT_BYTES } from './wireLimits.js';

const NEWLINE = 0x0a;

/**
 * Decodes a watch response body — one JSON event per line — from byte chunks
 * as they arrive.
 *
 * Lines are found by scanning for `\n` in the bytes, and each line is turned
 * into text and `JSON.parse`d exactly once, when it is read (`lines` hands
 * them back undecoded, `push` decodes them all); the body is never joined
 * into one string. An `ERROR` event
 * becomes a `KubeApiError` carrying that status (a code that is no HTTP status counts as 500).
 * A line that is not a JSON object throws a {@link DecodeError} with the line
 * (truncated) and its byte position: such a line may have been an event, so
 * the stream can no longer be trusted. A parseable event that cannot be used
 * (no `metadata.name`, an unknown type) is passed on for the consumer to
 * report and skip.
 *
 * With `stripManagedFields`, each event's `object.metadata.managedFields` is
 * stripped from the bytes before parsing (docs/semantics.md P-7): the same
 * event without that field, for a fraction of the parsing and garbage.
 *
 * ## Example
 * ```ts
 * import type { WatchEvent } from 'rxkube';
 * import { WatchDecoder } from 'rxkube/core';
 *
 * const decoder = new WatchDecoder();
 * const events: WatchEvent<unknown>[] = [];
 * decoder.push(new TextEncoder().encode('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"ty'), events);
 * decoder.push(new TextEncoder().encode('pe":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}\n'), events);
 * decoder.end(events); // events: ADDED a, BOOKMARK 9
 * ```
 */
export class WatchDecoder<T> {
  /** Byte offset of the current chunk's start, for error positions. */
  #offset = 0;
  /** Bytes of an unfinished line from earlier chunks. */
  #parts: Buffer[] = [];
  /** Their total length, held to {@link WatchDecoder.#max}. */
  #partsBytes = 0;
  /** The most bytes one line may take: `maxObjectBytes` (an event wraps one object). */
  readonly #max: number;
  /** Body offset where the unfinished line began. */
  #lineStart = 0;
  /** Leave `object.metadata.managedFields` out of every event, unparsed. */
  readonly #strip: boolean;
  /** Takes the request's credential out of an ERROR event's Status (HI-79). */
  readonly #redact: Redact;
  /** The cache's objects, whose unchanged parts a MODIFIED event takes instead of parsing them (PF-50). */
  readonly #cached: CachedReader | undefined;

  /**
   * @param opts.stripManagedFields leave each object's `metadata.managedFields` out, without parsing it. @default false
   * @param opts.maxObjectBytes the most bytes one line may take; past it the body is refused with a DecodeError of code `OBJECT_TOO_LARGE` and nothing more of the line is kept (HI-23). @default 16 MiB
   * @param opts.redact replaces the credential the watch request sent in an ERROR event's text (HI-79). @default none: the text is only escaped and cut
   * @param opts.cached the cache's object by namespace and name: a MODIFIED event's members equal to its own are taken from it, not parsed (PF-50). @default none
   */
  constructor(opts: { readonly stripManagedFields?: boolean; readonly maxObjectBytes?: number; readonly redact?: (text: string) => string; readonly cached?: CachedLookup } = {}) {
    this.#strip = opts.stripManagedFields === true;
    this.#cached = opts.cached === undefined ? undefined : new CachedReader(opts.cached);
    this.#redact = opts.redact ?? ((text) => text);
    this.#max = opts.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
  }

  /**
   * Feeds the next chunk.
   *
   * @param chunk Bytes, split anywhere.
   * @param out Events completed by this chunk are appended here; when a line is bad, the events before it are already there and the error is thrown.
   * @returns Nothing; throws a DecodeError or the typed error of an ERROR event.
   */
  push(chunk: Uint8Array, out: WatchEvent<T>[]): void {
    const { batch, failure } = this.lines(chunk);
    if (batch !== undefined) for (let i = 0; i < batch.length; i++) out.push(batch.at(i) as WatchEvent<T>);
    if (failure !== undefined) throw failure;
  }

  /**
   * Feeds the next chunk and hands back its complete lines undecoded: each is
   * parsed when the batch's `at` reaches it. A line begun in earlier chunks
   * is decoded now. What is wrong with the chunk itself (a line past the
   * bound) comes back as `failure`, beside the lines before it.
   *
   * @param chunk Bytes, split anywhere.
   * @returns the lines this chunk completed (undefined when none), and the error to throw after them
   */
  lines(chunk: Uint8Array): { readonly batch: WatchBatch<T> | undefined; readonly failure: unknown } {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const base = this.#offset;
    this.#offset += buf.length;
    const last = buf.lastIndexOf(NEWLINE);
    if (last < 0) {
      if (this.#parts.length === 0) this.#lineStart = base;
      this.#hold(buf);
      return NO_LINES;
    }
    let start = 0;
    let head: WatchEvent<T> | undefined;
    if (this.#parts.length > 0) {
      // The line begun in earlier chunks ends at this chunk's first newline.
      const nl = buf.indexOf(NEWLINE);
      this.#hold(buf.subarray(0, nl));
      const line = Buffer.concat(this.#parts);
      this.#parts = [];
      this.#partsBytes = 0;
      head = this.#decodeOne(line);
      start = nl + 1;
    }
    // A chunk larger than the bound may hold a whole line past it (one comparison per chunk otherwise).
    let failure: unknown;
    let upTo = last;
    if (last - start > this.#max) {
      const long = this.#longLine(buf, start, last);
      if (long >= 0) {
        // The events before the long line are delivered, as before any bad line.
        failure = new DecodeError(`watch line is larger than maxObjectBytes (${this.#max} bytes)`, '', base + long, { code: 'OBJECT_TOO_LARGE' });
        upTo = long - 1;
      }
    }
    const bounds: number[] = [];
    for (let s = start; s <= upTo; ) {
      let nl = buf.indexOf(NEWLINE, s);
      if (nl < 0 || nl > upTo) nl = upTo;
      if (!isBlankBytes(buf, s, nl)) bounds.push(s, nl);
      s = nl + 1;
    }
    if (failure === undefined && last + 1 < buf.length) {
      this.#lineStart = base + last + 1;
      try {
        this.#hold(buf.subarray(last + 1));
      } catch (err) {
        // The unfinished last line is already past the bound: the complete lines before it still come first.
        failure = err;
      }
    }
    const batch = head === undefined && bounds.length === 0 ? undefined : new WatchLines<T>(head, buf, bounds, base, this.#strip, this.#redact, this.#cached);
    return { batch, failure };
  }

  /** Keeps bytes of the unfinished line, or refuses the line once it passes the bound (dropping what was kept). */
  #hold(bytes: Buffer): void {
    this.#partsBytes += bytes.length;
    if (this.#partsBytes > this.#max) {
      this.#parts = [];
      this.#partsBytes = 0;
      throw new DecodeError(`watch line is larger than maxObjectBytes (${this.#max} bytes)`, '', this.#lineStart, { code: 'OBJECT_TOO_LARGE' });
    }
    this.#parts.push(bytes);
  }

  /** Where the first line of `buf[start, end)` longer than the bound begins, or -1: for a chunk larger than the bound. */
  #longLine(buf: Buffer, start: number, end: number): number {
    for (let s = start; s < end; ) {
      let nl = buf.indexOf(NEWLINE, s);
      if (nl < 0 || nl > end) nl = end;
      if (nl - s > this.#max) return s;
      s = nl + 1;
    }
    return -1;
  }

  /**
   * Declares the body complete. A last line without its newline is decoded
   * too (kube-apiserver always ends lines, but proxies may cut the last one).
   *
   * @param out Receives the last event, if any.
   * @returns Nothing; throws like {@link WatchDecoder.push}.
   */
  end(out: WatchEvent<T>[]): void {
    if (this.#parts.length === 0) return;
    const line = Buffer.concat(this.#parts);
    this.#parts = [];
    this.#partsBytes = 0;
    let event: WatchEvent<T> | undefined;
    try {
      event = this.#decodeOne(line);
    } catch (err) {
      // A last line that does not parse was most likely cut short: the same body as a list cut mid-item (HI-22).
      if (err instanceof DecodeError && err.code === undefined) throw new DecodeError(`watch body ended inside a line: ${err.message}`, err.line, err.position, { code: 'TRUNCATED', cause: err.cause });
      throw err;
    }
    if (event !== undefined) out.push(event);
  }

  /** One line that spanned chunks; undefined when it is blank. */
  #decodeOne(line: Buffer): WatchEvent<T> | undefined {
    if (isBlankBytes(line, 0, line.length)) return undefined;
    return decodeBytes<T>(line, 0, line.length, this.#lineStart, this.#strip, this.#redact, this.#cached);
  }

  /** Bytes read so far. */
  get bytesRead(): number {
    return this.#offset;
  }
}

const NO_LINES = { batch: undefined, failure: undefined } as const;
