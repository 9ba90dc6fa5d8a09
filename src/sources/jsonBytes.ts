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
