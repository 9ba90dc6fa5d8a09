/**
 * A watch line or list body that could not be decoded (malformed or
 * truncated JSON, fields of the wrong type), or a well-formed event the
 * reflector cannot use (an object without `metadata.name`, an unknown event
 * type, a resourceVersion that is not a string), which it reports and skips.
 * The text is kept, truncated, so the report says what arrived without
 * holding megabytes.
 *
 * ## Example
 * ```ts
 * import { DecodeError, type Informer } from 'rxkube';
 * declare const informer: Informer<unknown>;
 *
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof DecodeError) console.error(`bad watch line at byte ${err.position}: ${err.line}`);
 * });
 * ```
 */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
  /** The offending text, truncated to at most 256 characters. */
  readonly line: string;
  /** Byte offset of the line's start in the response body; -1 for an event judged after decoding. */
  readonly position: number;

  constructor(message: string, line: string, position: number, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.line = line.length > 256 ? `${line.slice(0, 256)}…` : line;
    this.position = position;
  }
}
