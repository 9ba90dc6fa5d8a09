// kube-apiserver writes its validation messages with Go's fmt and encoding/json: a string in a
// message is `strconv.Quote`d, a number is printed with `%v`, a list or map is `json.Marshal`led.
// These functions print a decoded JSON value the same way, so a 422 from the simulator reads byte
// for byte like one from the real server.

/** Go's `unicode.IsPrint`, near enough: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

function quoteRune(ch: string): string {
  const short = SHORT_ESCAPES[ch];
  if (short !== undefined) return short;
  const code = ch.codePointAt(0) ?? 0;
  if (code >= 0xd800 && code <= 0xdfff) return '\\ufffd'; // a lone surrogate: Go decoded it as U+FFFD
  if (PRINTABLE.test(ch)) return ch;
  if (code < 0x80) return `\\x${hex(code, 2)}`;
  return code <= 0xffff ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
}

/** `strconv.Quote(s)`: the string in double quotes, with Go's escapes. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) out += quoteRune(ch);
  return `${out}"`;
}

/** Whether a decoded JSON number is one Go's decoder keeps as an int64 (a whole number in range). */
export function isGoInt(n: number): boolean {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63;
}

/** The mantissa digits and decimal exponent of the shortest representation of `n`. */
function shortest(n: number): { readonly mantissa: string; readonly exp: number } {
  const [mantissa = '0', exp = '0'] = Math.abs(n).toExponential().split('e');
  return { mantissa, exp: Number(exp) };
}

function exponent(exp: number, minDigits: number): string {
  const digits = String(Math.abs(exp)).padStart(minDigits, '0');
  return `${exp < 0 ? '-' : '+'}${digits}`;
}

/** `%v` of a float64: the shortest form, in exponent form (`1e+06`) from 1e6 up or below 1e-4. */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const { mantissa, exp } = shortest(n);
  const sign = n < 0 ? '-' : '';
  if (exp < -4 || exp >= 6) return `${sign}${mantissa}e${exponent(exp, 2)}`;
  return String(n);
}

/** `%v` of a decoded JSON number: an int64 as digits, a float64 as {@link goFloat}. */
export function goNumber(n: number): string {
  return isGoInt(n) ? BigInt(n).toString() : goFloat(n);
}

/** A float64 as `json.Marshal` writes it: plain digits from 1e-6 up to 1e21, else `1e+21` / `1e-7`. */
function jsonFloat(n: number): string {
  if (isGoInt(n)) return BigInt(n).toString();
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) {
    const { mantissa, exp } = shortest(n);
    return `${n < 0 ? '-' : ''}${mantissa}e${exponent(exp, 1)}`;
  }
  return String(n);
}

/** A string as `json.Marshal` writes it: HTML characters and the JS line separators escaped too. */
function jsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${hex(ch.charCodeAt(0), 4)}`);
}

/** `json.Marshal` of a decoded JSON value: map keys sorted, HTML-safe escapes. */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return jsonString(value);
  if (typeof value === 'number') return jsonFloat(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${jsonString(k)}:${goJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return 'null';
}

/** `%v` of a decoded JSON value, as Go's fmt prints an `[]interface{}` or `map[string]interface{}`. */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${k}:${goValue((value as Record<string, unknown>)[k])}`);
    return `map[${entries.join(' ')}]`;
  }
  return String(value);
}
