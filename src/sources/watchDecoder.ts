import { DecodeError } from './errors/DecodeError.js';
import type { StatusDetails } from './errors/KubeApiError.js';
import type { Redact } from './errors/wireText.js';
import { errorFromStatus } from './httpErrors.js';
import { EVENT_METADATA, textWithoutManagedFields } from './managedFieldsStrip.js';
import type { WatchEvent } from './types.js';
import { DEFAULT_MAX_OBJECT_BYTES } from './wireLimits.js';

const NEWLINE = 0x0a;

/**
 * Decodes a watch response body — one JSON event per line — from byte chunks
 * as they arrive.
 *
 * Lines are found by scanning for `\n` in the bytes; the complete lines of a
 * chunk are turned into text in one step and each is `JSON.parse`d exactly
 * once, and the body is never joined into one string. An `ERROR` event
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

  /**
   * @param opts.stripManagedFields leave each object's `metadata.managedFields` out, without parsing it. @default false
   * @param opts.maxObjectBytes the most bytes one line may take; past it the body is refused with a DecodeError of code `OBJECT_TOO_LARGE` and nothing more of the line is kept (HI-23). @default 16 MiB
   * @param opts.redact replaces the credential the watch request sent in an ERROR event's text (HI-79). @default none: the text is only escaped and cut
   */
  constructor(opts: { readonly stripManagedFields?: boolean; readonly maxObjectBytes?: number; readonly redact?: (text: string) => string } = {}) {
    this.#strip = opts.stripManagedFields === true;
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
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const base = this.#offset;
    this.#offset += buf.length;
    const last = buf.lastIndexOf(NEWLINE);
    if (last < 0) {
      if (this.#parts.length === 0) this.#lineStart = base;
      this.#hold(buf);
      return;
    }
    let start = 0;
    if (this.#parts.length > 0) {
      // The line begun in earlier chunks ends at this chunk's first newline.
      const nl = buf.indexOf(NEWLINE);
      this.#hold(buf.subarray(0, nl));
      const line = Buffer.concat(this.#parts);
      this.#parts = [];
      this.#partsBytes = 0;
      const event = this.#decodeOne(line);
      if (event !== undefined) out.push(event);
      start = nl + 1;
    }
    // Every other complete line of the chunk becomes text in one decoding (a newline byte never sits inside a
    // UTF-8 sequence, so cutting at one is safe), and each line is a slice of it: one call per chunk, not per line.
    // A chunk larger than the bound may hold a whole line past it (one comparison per chunk otherwise).
    if (last - start > this.#max) {
      const long = this.#longLine(buf, start, last);
      if (long >= 0) {
        // The events before the long line are delivered, as before any bad line.
        if (long > start) this.#decodeRange(buf, start, long - 1, base, out);
        throw new DecodeError(`watch line is larger than maxObjectBytes (${this.#max} bytes)`, '', base + long, { code: 'OBJECT_TOO_LARGE' });
      }
    }
    if (start <= last) this.#decodeRange(buf, start, last, base, out);
    if (last + 1 < buf.length) {
      this.#lineStart = base + last + 1;
      this.#hold(buf.subarray(last + 1));
    }
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

  /** The complete lines of `buf[start, end)`, the newline at `end` excluded. */
  #decodeRange(buf: Buffer, start: number, end: number, base: number, out: WatchEvent<T>[]): void {
    if (this.#strip) decodeLinesStripping<T>(buf, start, end, base + start, out, this.#redact);
    else decodeLines<T>(buf.toString('utf8', start, end), base + start, out, this.#redact);
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

  /** One line that spanned chunks. */
  #decodeOne(line: Buffer): WatchEvent<T> | undefined {
    const text = this.#strip ? textWithoutManagedFields(line, 0, line.length, [0, line.length], EVENT_METADATA) : undefined;
    if (text !== undefined) {
      try {
        return decodeLine<T>(text, this.#lineStart, this.#redact);
      } catch {
        // Decoded whole below, so the error names the line as it came.
      }
    }
    return decodeLine<T>(line.toString('utf8'), this.#lineStart, this.#redact);
  }

  /** Bytes read so far. */
  get bytesRead(): number {
    return this.#offset;
  }
}

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0d && c !== 0x09) return false;
  }
  return true;
}

/** Decodes `text`, complete lines joined by newlines (the last one without its own), starting at body offset `position`. */
/** The body offset of the line at character `from` of `whole`, which starts at body offset `position`. */
function bytePosition(position: number, whole: string | undefined, from: number): number {
  return whole === undefined || from === 0 ? position : position + Buffer.byteLength(whole.slice(0, from));
}

/**
 * {@link decodeLines} over `buf[start, end)` with each line's managedFields
 * stripped first. When that fails, the lines are decoded again as they came,
 * so that an error carries the line and position the server sent.
 */
function decodeLinesStripping<T>(buf: Buffer, start: number, end: number, position: number, out: WatchEvent<T>[], redact: Redact): void {
  const lines: number[] = [];
  for (let s = start; s < end; ) {
    let nl = buf.indexOf(NEWLINE, s);
    if (nl < 0 || nl > end) nl = end;
    lines.push(s, nl);
    s = nl + 1;
  }
  const text = textWithoutManagedFields(buf, start, end, lines, EVENT_METADATA);
  if (text !== undefined) {
    const mark = out.length;
    try {
      decodeLines<T>(text, position, out, redact);
      return;
    } catch {
      out.length = mark;
    }
  }
  decodeLines<T>(buf.toString('utf8', start, end), position, out, redact);
}

function decodeLines<T>(text: string, position: number, out: WatchEvent<T>[], redact: Redact): void {
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    const line = start === 0 && nl < 0 ? text : text.slice(start, end);
    // A line's byte position is only worked out when it is needed, for an error.
    const event = decodeLine<T>(line, position, redact, text, start);
    if (event !== undefined) out.push(event);
    if (nl < 0) return;
    start = nl + 1;
  }
}

function decodeLine<T>(text: string, position: number, redact: Redact, whole?: string, from = 0): WatchEvent<T> | undefined {
  if (isBlank(text)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new DecodeError('watch line is not valid JSON', text, bytePosition(position, whole, from), { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DecodeError('watch line is not an event object', text, bytePosition(position, whole, from));
  }
  const { type, object } = parsed as { type?: unknown; object?: unknown };
  if (type === 'ERROR') {
    const status = typeof object === 'object' && object !== null && !Array.isArray(object) ? (object as StatusDetails) : undefined;
    // A code that is no HTTP status (absent, 0, 600, 3.5, 1e999 read as Infinity) would make an error nobody can
    // classify; such an ERROR event is a server fault like any unexplained one.
    const code = typeof status?.code === 'number' && Number.isInteger(status.code) && status.code >= 100 && status.code <= 599 ? status.code : 500;
    throw errorFromStatus(code, status, { what: 'watch ERROR event', redact });
  }
  // A parseable event is passed on as it is, even one without metadata.name or of an unknown type: the
  // consumer reports and skips it. Throwing here would end the watch, and resuming from the last
  // resourceVersion would replay the same event for ever.
  return parsed as WatchEvent<T>;
}
