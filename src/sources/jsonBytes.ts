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

/** Bytes of a string read byte by byte, with no escape among them, before {@link endOfString} switches to the native quote search. */
export const LONG_STRING = 48;
const IN_STRING = stringClasses();
/** What {@link endOfString} gives for a string that runs past the bytes it may read. */
export const PAST_END = -1;
/** What {@link endOfString} gives for a string that runs past them on a backslash: the next byte, beyond, is escaped. */
export const PAST_END_ESCAPED = -2;

/**
 * Index just past the quote that closes the JSON string whose content
 * begins at `i`, reading no further than `end`; {@link PAST_END} or
 * {@link PAST_END_ESCAPED} when the string runs past it. Short strings (most
 * of a Kubernetes object's keys and values) are read byte by byte from a
 * table. After 48 bytes without a quote or backslash (base64 data,
 * certificates) the native search jumps to the next quote. A block of 48
 * bytes with an escape in it goes on byte by byte: JSON inside a string, as
 * in kubectl's last-applied annotation, has an escaped quote every few
 * bytes, and a search call for each would cost more than it skips.
 *
 * @param buf the bytes
 * @param i the string's first byte after its opening quote
 * @param end how far it may read
 * @returns the index past the closing quote, or a negative code
 */
export function endOfString(buf: Buffer, i: number, end: number): number {
  for (;;) {
    // A block of at most 48 bytes, read byte by byte with one bound per byte, as a loop without the switch would.
    const block = i + LONG_STRING < end ? i + LONG_STRING : end;
    let escapes = false;
    for (; i < block; i++) {
      const c = IN_STRING[buf[i] as number] as number;
      if (c === 0) continue;
      if (c === 1) return i + 1;
      // A backslash: the next byte is escaped.
      if (i + 1 >= end) return PAST_END_ESCAPED;
      i++;
      escapes = true;
    }
    if (i >= end) return PAST_END;
    if (escapes) continue;
    const q = buf.indexOf(QUOTE, i);
    if (q < 0 || q >= end) return backslashesBefore(buf, end, i) % 2 === 1 ? PAST_END_ESCAPED : PAST_END;
    // An odd run of backslashes just before it escapes the quote (none before `i`: the loop read those bytes).
    if (backslashesBefore(buf, q, i) % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** How many backslashes stand just before `at`, counted back no further than `from`. */
function backslashesBefore(buf: Buffer, at: number, from: number): number {
  let k = at - 1;
  while (k >= from && buf[k] === BACKSLASH) k--;
  return at - 1 - k;
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
    // An odd run of backslashes escapes the quote.
    if (backslashesBefore(buf, q, i) % 2 === 0) return q;
    i = q + 1;
  }
}

/** Whether `buf` ends, after `from`, in an odd run of backslashes: a string's next byte, in the next chunk, is escaped. */
export function endsInEscape(buf: Buffer, from: number): boolean {
  return backslashesBefore(buf, buf.length, from) % 2 === 1;
}
