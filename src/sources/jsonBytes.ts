// The bytes of JSON's structure, as the byte-level scanners (the LIST
// decoder, the managedFields strip) read them. Internal.

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const LBRACKET = 0x5b;
export const RBRACKET = 0x5d;

/** What a byte means to the scanners outside strings: nothing, a quote, an opening or closing bracket or brace, a comma. */
export const PLAIN = 0;
export const IS_QUOTE = 1;
export const IS_OPEN = 2;
export const IS_CLOSE = 3;
export const IS_COMMA = 4;
/**
 * A table of each byte's class, read with one lookup instead of comparing the byte with every structural one: the
 * scanners walk every byte of every list item and a third of every watch event's. Each scanner keeps its own table
 * in a constant of its module, which its hot loop reads faster than an imported one.
 */
export function byteClasses(): Uint8Array {
  const table = new Uint8Array(256);
  table[QUOTE] = IS_QUOTE;
  table[LBRACE] = IS_OPEN;
  table[LBRACKET] = IS_OPEN;
  table[RBRACE] = IS_CLOSE;
  table[RBRACKET] = IS_CLOSE;
  table[COMMA] = IS_COMMA;
  return table;
}

/** A table of what a byte means inside a string: nothing (0), its end (1, the quote) or an escape (2, the backslash). */
export function stringClasses(): Uint8Array {
  const table = new Uint8Array(256);
  table[QUOTE] = 1;
  table[BACKSLASH] = 2;
  return table;
}

/** JSON whitespace: space, line feed, carriage return, tab. */
export function isJsonSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** The first index from `i` on, before `end`, that is not JSON whitespace (`end` when there is none). */
export function skipSpace(buf: Buffer, i: number, end: number): number {
  while (i < end && isJsonSpace(buf[i] as number)) i++;
  return i;
}

/** The last index from `i` back, after `start`, that is not JSON whitespace (`start` when there is none). */
export function skipSpaceBack(buf: Buffer, i: number, start: number): number {
  while (i > start && isJsonSpace(buf[i] as number)) i--;
  return i;
}

/**
 * The index of the quote that closes a JSON string, searching from `from`
 * (inside the string) with the native `indexOf`, since most of a Kubernetes
 * object's bytes are inside strings; -1 when the string runs past `buf`.
 */
export function closingQuote(buf: Buffer, from: number): number {
  let i = from;
  for (;;) {
    const q = buf.indexOf(QUOTE, i);
    if (q < 0) return -1;
    let k = q - 1;
    while (k >= i && buf[k] === BACKSLASH) k--;
    // An odd run of backslashes escapes the quote.
    if ((q - 1 - k) % 2 === 0) return q;
    i = q + 1;
  }
}

/** Whether `buf` ends, after `from`, in an odd run of backslashes: a string's next byte, in the next chunk, is escaped. */
export function endsInEscape(buf: Buffer, from: number): boolean {
  let k = buf.length - 1;
  while (k >= from && buf[k] === BACKSLASH) k--;
  return (buf.length - 1 - k) % 2 === 1;
}
