// What an error may keep of text that came from the wire: its shape, never its values (HI-77).

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
export function withoutValues(text: string): string {
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
export function withoutExcerpt(cause: unknown): unknown {
  if (!(cause instanceof SyntaxError)) return cause;
  return new SyntaxError(/["']/.test(cause.message) ? 'Unexpected token in JSON (its excerpt of the text is left out)' : cause.message);
}
