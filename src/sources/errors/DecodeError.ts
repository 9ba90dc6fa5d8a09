/**
 * A watch line or list body that could not be decoded (malformed or
 * truncated JSON, fields of the wrong type), or a well-formed event the
 * reflector cannot use (an object without `metadata.name`, an unknown event
 * type, a resourceVersion that is not a string), which it reports and skips.
 * The text is kept, truncated, so the report says what arrived without
 * holding megabytes, and with its values left out: keys, brackets, numbers,
 * `true`, `false`, `null` and the strings that say which object it is
 * (`type`, `kind`, `apiVersion`, `name`, `namespace`, `uid`,
 * `resourceVersion`) stay; every other string becomes `"…"` and any other
 * word `…`, since the line may be a Secret's and its data must not reach a
 * log. For the same reason a JSON.parse error given as `cause` is replaced
 * by one without the excerpt V8 puts in its message.
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
  /** The offending text, truncated to at most 256 characters, its values left out (`{"type":"ADDED","object":{"data":{"token":"…"}}`). */
  readonly line: string;
  /** Byte offset of the line's start in the response body; -1 for an event judged after decoding. */
  readonly position: number;

  constructor(message: string, line: string, position: number, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: withoutExcerpt(opts.cause) });
    this.line = line.length > 256 ? `${withoutValues(line.slice(0, 256))}…` : withoutValues(line);
    this.position = position;
  }
}

/** What stays of a word outside strings: the JSON literals and numbers. */
const LITERAL = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)$/;
/** Keys whose string values say which object it is, never what it holds: kept. */
const NAMING = new Set(['type', 'kind', 'apiVersion', 'name', 'namespace', 'uid', 'resourceVersion']);
/** Where a word outside strings ends. */
const WORD_END = /[\s{}[\]:,"]/;

/**
 * JSON-like text with its values left out: a string followed by `:` (a key)
 * stays, and so does the value of a key in NAMING; any other
 * non-empty string becomes `"…"`, a word that is not a JSON literal or
 * number becomes `…`. Never longer than the text.
 */
function withoutValues(text: string): string {
  let out = '';
  let i = 0;
  // The key whose value comes next, if the last string was a key.
  let key: string | undefined;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) {
        out += i + 1 < text.length ? '"…' : '"';
        break;
      }
      let k = j + 1;
      while (k < text.length && /\s/.test(text[k] as string)) k++;
      const isKey = text[k] === ':';
      out += isKey || j === i + 1 || (key !== undefined && NAMING.has(key)) ? text.slice(i, j + 1) : '"…"';
      key = isKey ? text.slice(i + 1, j) : undefined;
      i = j + 1;
    } else if (WORD_END.test(c)) {
      // A key's value that is an object or array is not a name: strings inside it are values of their own keys or none.
      if (c === '{' || c === '[') key = undefined;
      out += c;
      i++;
    } else {
      let j = i + 1;
      while (j < text.length && !WORD_END.test(text[j] as string)) j++;
      const word = text.slice(i, j);
      out += LITERAL.test(word) ? word : '…';
      i = j;
    }
  }
  return out;
}

/** V8 quotes the text it could not parse (`Unexpected token 'x', "…" is not valid JSON`): that excerpt is left out. */
function withoutExcerpt(cause: unknown): unknown {
  if (!(cause instanceof SyntaxError)) return cause;
  return new SyntaxError(/["']/.test(cause.message) ? 'Unexpected token in JSON (its excerpt of the text is left out)' : cause.message);
}
