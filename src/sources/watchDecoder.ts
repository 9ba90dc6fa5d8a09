import { DecodeError } from './errors/DecodeError.js';
import type { StatusDetails } from './errors/KubeApiError.js';
import { errorFromStatus } from './httpErrors.js';
import type { WatchEvent } from './types.js';

const NEWLINE = 0x0a;

/**
 * Decodes a watch response body — one JSON event per line — from byte chunks
 * as they arrive.
 *
 * Lines are found by scanning for `\n` in the bytes; each complete line is
 * turned into text and `JSON.parse`d exactly once, and the body is never
 * joined into one string. An `ERROR` event becomes the matching typed error
 * (410 → `ExpiredError`, …; a code that is no HTTP status counts as 500).
 * A line that is not a JSON object throws a {@link DecodeError} with the line
 * (truncated) and its byte position: such a line may have been an event, so
 * the stream can no longer be trusted. A parseable event that cannot be used
 * (no `metadata.name`, an unknown type) is passed on for the consumer to
 * report and skip.
 *
 * ## Example
 * ```ts
 * import { WatchDecoder, type WatchEvent } from 'rxkube';
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
  /** Body offset where the unfinished line began. */
  #lineStart = 0;

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
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(NEWLINE, start);
      if (nl < 0) break;
      let line: Buffer;
      let position: number;
      if (this.#parts.length > 0) {
        this.#parts.push(buf.subarray(start, nl));
        line = Buffer.concat(this.#parts);
        this.#parts = [];
        position = this.#lineStart;
      } else {
        line = buf.subarray(start, nl);
        position = base + start;
      }
      start = nl + 1;
      const event = decodeLine<T>(line, position);
      if (event !== undefined) out.push(event);
    }
    if (start < buf.length) {
      if (this.#parts.length === 0) this.#lineStart = base + start;
      this.#parts.push(buf.subarray(start));
    }
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
    const event = decodeLine<T>(line, this.#lineStart);
    if (event !== undefined) out.push(event);
  }

  /** Bytes read so far. */
  get bytesRead(): number {
    return this.#offset;
  }
}

function isBlank(line: Buffer): boolean {
  for (let i = 0; i < line.length; i++) {
    const b = line[i];
    if (b !== 0x20 && b !== 0x0d && b !== 0x09) return false;
  }
  return true;
}

function decodeLine<T>(line: Buffer, position: number): WatchEvent<T> | undefined {
  if (isBlank(line)) return undefined;
  const text = line.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new DecodeError('watch line is not valid JSON', text, position, { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DecodeError('watch line is not an event object', text, position);
  }
  const { type, object } = parsed as { type?: unknown; object?: unknown };
  if (type === 'ERROR') {
    const status = typeof object === 'object' && object !== null && !Array.isArray(object) ? (object as StatusDetails) : undefined;
    // A code that is no HTTP status (absent, 0, 600, 3.5, 1e999 read as Infinity) would make an error nobody can
    // classify; such an ERROR event is a server fault like any unexplained one.
    const code = typeof status?.code === 'number' && Number.isInteger(status.code) && status.code >= 100 && status.code <= 599 ? status.code : 500;
    throw errorFromStatus(code, status, { what: 'watch ERROR event' });
  }
  // A parseable event is passed on as it is, even one without metadata.name or of an unknown type: the
  // consumer reports and skips it. Throwing here would end the watch, and resuming from the last
  // resourceVersion would replay the same event for ever.
  return parsed as WatchEvent<T>;
}
