import { printable } from '../printable.js';
import { withoutExcerpt, withoutValues } from './redact.js';

/**
 * A watch line or list body that could not be decoded (malformed or
 * truncated JSON, fields of the wrong type, a bound passed), or a
 * well-formed event the reflector cannot use (an object without
 * `metadata.name`, an unknown event type, a resourceVersion that is not a
 * string), which it reports and skips. The text is kept, truncated, so the
 * report says what arrived without holding megabytes, and with its values
 * left out: keys, brackets, numbers, `true`, `false`, `null` and the strings
 * that say which object it is (`type`, `kind`, `apiVersion`, `name`,
 * `namespace`, `uid`, `resourceVersion`) stay; every other string becomes
 * `"…"` and any other word `…`, since the line may be a Secret's and its data
 * must not reach a log. For the same reason a JSON.parse error given as
 * `cause` is replaced by one without the excerpt V8 puts in its message. A
 * body refused by a bound or an encoding keeps none of its text, and `code`
 * says which. The message and the line are escaped with `printable`, so a
 * line with terminal escapes cannot act on the terminal of whoever logs the
 * error (HI-79).
 *
 * ## Example
 * ```ts
 * import { DecodeError, type Informer } from 'rxkube';
 * declare const informer: Informer<unknown>;
 *
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof DecodeError && err.code === 'OBJECT_TOO_LARGE') console.error(`refused at byte ${err.position}: ${err.message}`);
 *   else if (err instanceof DecodeError) console.error(`bad watch line at byte ${err.position}: ${err.line}`);
 * });
 * ```
 */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
  /** The offending text, truncated to at most 256 characters, its values left out (`{"type":"ADDED","object":{"data":{"token":"…"}}`). */
  readonly line: string;
  /** Byte offset of the line's start in the response body; -1 for an event judged after decoding. */
  readonly position: number;
  /**
   * Why the body was refused, when it is more than malformed JSON; `undefined` for malformed JSON:
   * - `'CONTENT_ENCODING'`: an encoding rxkube did not ask for, or compressed bytes that do not inflate;
   * - `'TRUNCATED'`: the body ended before its JSON (or its gzip stream) was complete;
   * - `'OBJECT_TOO_LARGE'`: one watch line or list item passed `maxObjectBytes`;
   * - `'LIST_TOO_LARGE'`: one list body passed `maxListBytes`;
   * - `'INFLATION_RATIO'`: a compressed body inflated past `maxInflationRatio`.
   */
  readonly code: 'CONTENT_ENCODING' | 'TRUNCATED' | 'OBJECT_TOO_LARGE' | 'LIST_TOO_LARGE' | 'INFLATION_RATIO' | undefined;

  constructor(message: string, line: string, position: number, opts: { cause?: unknown; code?: DecodeError['code'] } = {}) {
    super(printable(message), opts.cause === undefined ? undefined : { cause: withoutExcerpt(opts.cause) });
    // Escaped before the cut, so escapes cannot take the kept text past its 256 characters.
    const kept = printable(withoutValues(line.length > 256 ? line.slice(0, 256) : line));
    this.line = line.length > 256 || kept.length > 256 ? `${kept.slice(0, 256)}…` : kept;
    this.position = position;
    this.code = opts.code;
  }
}

/**
 * Whether the server sent what rxkube refuses whatever its JSON (an encoding,
 * a bound): the next request will likely be answered the same, so it is
 * retried as a fault of the server's health, with backoff, rather than at
 * once as a line that would not parse (internal).
 */
export function isRefusedBody(err: unknown): boolean {
  return err instanceof DecodeError && err.code !== undefined && err.code !== 'TRUNCATED';
}
