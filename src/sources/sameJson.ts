/**
 * Whether JSON bytes spell a value already held, read without parsing them:
 * the watch decoder asks it of an update's members against the cached
 * object, and takes the cached part where the bytes are equal to it, so
 * what did not change is neither parsed nor compared again (docs/semantics.md
 * PF-50). Internal.
 */
import { BACKSLASH, COLON, COMMA, isJsonSpace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, skipSpace } from './jsonBytes.js';
import { containerEnd, containerRest, equalsBytes } from './managedFieldsStrip.js';

/** How deep the bytes are followed; a value nested deeper is taken as different, and is parsed. */
const MAX_DEPTH = 64;

/** What the bytes of `buf[i]` mean as a string's own character: 1 for a printable ASCII one, spelt as it is. */
const PRINTABLE = (() => {
  const table = new Uint8Array(256);
  for (let b = 0x20; b < 0x7f; b++) table[b] = 1;
  table[QUOTE] = 0;
  table[BACKSLASH] = 0;
  return table;
})();

/**
 * Index just past the JSON value that begins at `i` (no whitespace before
 * it) when its bytes, read no further than `end`, are valid JSON that
 * `JSON.parse` would turn into a value equal to `value`: the same keys in the
 * same order, the same array lengths, strings, numbers (`-0` apart from `0`),
 * booleans and nulls; -1 as soon as anything differs or is not valid JSON.
 * `value` is taken as plain JSON (what the store keeps). Each byte is read
 * once, and nothing is allocated for the bytes of an object, an array, a
 * string or an integer of up to 15 digits.
 *
 * @param buf the bytes
 * @param i where the value begins
 * @param end just past the last byte that may be read
 * @param value what the bytes are compared with
 * @param depth how deep `value` lies below the part first asked about
 * @returns the index just past the value, or -1
 */
export function sameJson(buf: Buffer, i: number, end: number, value: unknown, depth: number): number {
  if (i >= end) return -1;
  const c = buf[i] as number;
  if (c === LBRACE) return sameObject(buf, i, end, value, depth);
  if (c === LBRACKET) return sameArray(buf, i, end, value, depth);
  if (c === QUOTE) return typeof value === 'string' ? sameString(buf, i + 1, end, value) : -1;
  if (c === 0x74) return value === true && literal(buf, i, end, TRUE) ? i + 4 : -1;
  if (c === 0x66) return value === false && literal(buf, i, end, FALSE) ? i + 5 : -1;
  if (c === 0x6e) return value === null && literal(buf, i, end, NULL) ? i + 4 : -1;
  return typeof value === 'number' ? sameNumber(buf, i, end, value) : -1;
}

/**
 * Where the last failed {@link sameMember} may resume walking, and how many containers are open there: the start of
 * the member or element of the innermost object or array in which the bytes differed. Set as the failure unwinds, so
 * the walk to the member's end does not read again what was compared.
 */
let resumeAt = -1;
let resumeDepth = 0;

/** Records a failure in the object or array whose current member or element began at `mark`; returns -1. */
function failed(mark: number): number {
  if (resumeAt < 0) {
    resumeAt = mark;
    resumeDepth = 1;
  } else {
    resumeDepth++;
  }
  return -1;
}

/**
 * {@link sameJson} for a member's value (an object or an array), remembering where it stopped when it differs, for
 * {@link memberEnd}.
 */
export function sameMember(buf: Buffer, v: number, end: number, value: unknown): number {
  resumeAt = -1;
  return sameJson(buf, v, end, value, 1);
}

/**
 * Index just past the member value at `v`, an object or array that {@link sameMember} just found different (or was
 * not asked about), walked from where the comparison stopped; -1 when it runs past `end`.
 */
export function memberEnd(buf: Buffer, v: number, end: number): number {
  const from = resumeAt;
  resumeAt = -1;
  return from < 0 ? containerEnd(buf, v, end) : containerRest(buf, from, resumeDepth, end);
}

function sameObject(buf: Buffer, i: number, end: number, value: unknown, depth: number): number {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || depth >= MAX_DEPTH) return -1;
  const object = value as Record<string, unknown>;
  let at = i + 1;
  let first = true;
  // Own keys in their order (JSON's objects inherit no enumerable ones); a key the bytes lack, or one too many, differs.
  // Whitespace is looked for only where a byte is not what compact JSON (what servers write) has there.
  for (const key in object) {
    const mark = at;
    let b = buf[at] as number;
    if (first) first = false;
    else {
      if (b !== COMMA) {
        at = skipSpace(buf, at, end);
        if (buf[at] !== COMMA) return failed(mark);
      }
      b = buf[++at] as number;
    }
    if (b !== QUOTE) {
      at = skipSpace(buf, at, end);
      if (buf[at] !== QUOTE) return failed(mark);
    }
    at = sameString(buf, at + 1, end, key);
    if (at < 0) return failed(mark);
    if (buf[at] !== COLON) {
      at = skipSpace(buf, at, end);
      if (buf[at] !== COLON) return failed(mark);
    }
    at++;
    const member = object[key];
    b = buf[at] as number;
    if (b === QUOTE && typeof member === 'string') at = sameString(buf, at + 1, end, member);
    else at = sameJson(buf, isJsonSpace(b) ? skipSpace(buf, at, end) : at, end, member, depth + 1);
    if (at < 0) return failed(mark);
  }
  const mark = at;
  if (buf[at] !== RBRACE) at = skipSpace(buf, at, end);
  return at < end && buf[at] === RBRACE ? at + 1 : failed(mark);
}

function sameArray(buf: Buffer, i: number, end: number, value: unknown, depth: number): number {
  if (!Array.isArray(value) || depth >= MAX_DEPTH) return -1;
  let at = i + 1;
  for (let k = 0; k < value.length; k++) {
    const mark = at;
    if (k > 0) {
      if (buf[at] !== COMMA) {
        at = skipSpace(buf, at, end);
        if (buf[at] !== COMMA) return failed(mark);
      }
      at++;
    }
    if (isJsonSpace(buf[at] as number)) at = skipSpace(buf, at, end);
    at = sameJson(buf, at, end, value[k], depth + 1);
    if (at < 0) return failed(mark);
  }
  const mark = at;
  if (buf[at] !== RBRACKET) at = skipSpace(buf, at, end);
  return at < end && buf[at] === RBRACKET ? at + 1 : failed(mark);
}

/**
 * Index just past the closing quote of the string whose content begins at `i`, when it spells `s`; else -1.
 * Printable ASCII is compared byte for code unit; escapes and UTF-8 sequences are decoded as `JSON.parse` reads
 * them. A control character, a bad escape or a byte sequence that is not valid UTF-8 (which decoding would have
 * replaced) is a difference: the bytes are then parsed, and fail or are replaced as they always were.
 */
function sameString(buf: Buffer, i: number, end: number, s: string): number {
  const n = s.length;
  let j = 0;
  // The common case: the string's bytes are its characters, printable ASCII, and its closing quote follows them.
  if (i + n < end && buf[i + n] === QUOTE) {
    for (; j < n; j++) {
      const b = buf[i + j] as number;
      if (b !== s.charCodeAt(j) || PRINTABLE[b] === 0) break;
    }
    if (j === n) return i + n + 1;
    i += j;
  }
  while (i < end) {
    const b = buf[i] as number;
    if (PRINTABLE[b] === 1) {
      // Past the end of `s`, charCodeAt is NaN, which no byte equals.
      if (s.charCodeAt(j) !== b) return -1;
      i++;
      j++;
      continue;
    }
    if (b === QUOTE) return j === n ? i + 1 : -1;
    if (b === BACKSLASH) {
      const unit = escaped(buf, i + 1, end);
      if (unit < 0 || j >= n || s.charCodeAt(j) !== unit) return -1;
      i += buf[i + 1] === 0x75 ? 6 : 2;
      j++;
      continue;
    }
    if (b < 0x80) return -1;
    const cp = codePoint(buf, i, end);
    if (cp < 0) return -1;
    if (cp > 0xffff) {
      if (j + 1 >= n || s.codePointAt(j) !== cp) return -1;
      j += 2;
    } else {
      if (j >= n || s.charCodeAt(j) !== cp) return -1;
      j++;
    }
    i += cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return -1;
}

/** The code unit of the escape whose letter is at `i` (after the backslash), or -1 when it is no JSON escape. */
function escaped(buf: Buffer, i: number, end: number): number {
  if (i >= end) return -1;
  switch (buf[i]) {
    case QUOTE:
      return QUOTE;
    case BACKSLASH:
      return BACKSLASH;
    case 0x2f:
      return 0x2f;
    case 0x62:
      return 0x08;
    case 0x66:
      return 0x0c;
    case 0x6e:
      return 0x0a;
    case 0x72:
      return 0x0d;
    case 0x74:
      return 0x09;
    case 0x75: {
      if (i + 4 >= end) return -1;
      let unit = 0;
      for (let k = 1; k <= 4; k++) {
        const h = hex(buf[i + k] as number);
        if (h < 0) return -1;
        unit = unit * 16 + h;
      }
      return unit;
    }
    default:
      return -1;
  }
}

function hex(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  const lower = b | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** The code point of the UTF-8 sequence of two to four bytes at `i`, or -1 when it is not a valid, shortest one. */
function codePoint(buf: Buffer, i: number, end: number): number {
  const b0 = buf[i] as number;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    if (i + 1 >= end) return -1;
    const b1 = buf[i + 1] as number;
    return (b1 & 0xc0) === 0x80 ? ((b0 & 0x1f) << 6) | (b1 & 0x3f) : -1;
  }
  if (b0 >= 0xe0 && b0 <= 0xef) {
    if (i + 2 >= end) return -1;
    const b1 = buf[i + 1] as number;
    const b2 = buf[i + 2] as number;
    if ((b1 & 0xc0) !== 0x80 || (b2 & 0xc0) !== 0x80) return -1;
    const cp = ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
    // Overlong, or a surrogate half (which UTF-8 may not carry).
    return cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) ? -1 : cp;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    if (i + 3 >= end) return -1;
    const b1 = buf[i + 1] as number;
    const b2 = buf[i + 2] as number;
    const b3 = buf[i + 3] as number;
    if ((b1 & 0xc0) !== 0x80 || (b2 & 0xc0) !== 0x80 || (b3 & 0xc0) !== 0x80) return -1;
    const cp = ((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f);
    return cp < 0x10000 || cp > 0x10ffff ? -1 : cp;
  }
  return -1;
}

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

function literal(buf: Buffer, i: number, end: number, word: Buffer): boolean {
  return i + word.length <= end && equalsBytes(buf, i, i + word.length, word);
}

function isDigit(b: number | undefined): boolean {
  return b !== undefined && b >= 0x30 && b <= 0x39;
}

/**
 * Index just past the JSON number at `i` when it is valid and reads as `value` (`-0` apart from `0`), else -1. An
 * integer of up to 15 digits is added up exactly; any other number is read by `Number`, which rounds as `JSON.parse`
 * does.
 */
function sameNumber(buf: Buffer, i: number, end: number, value: number): number {
  let k = i;
  const negative = buf[k] === 0x2d;
  if (negative) k++;
  const digits = k;
  let whole = 0;
  while (k < end && isDigit(buf[k])) {
    whole = whole * 10 + ((buf[k] as number) - 0x30);
    k++;
  }
  const count = k - digits;
  if (count === 0 || (count > 1 && buf[digits] === 0x30)) return -1;
  let simple = count <= 15;
  if (k < end && buf[k] === 0x2e) {
    simple = false;
    const from = ++k;
    while (k < end && isDigit(buf[k])) k++;
    if (k === from) return -1;
  }
  if (k < end && (buf[k] === 0x65 || buf[k] === 0x45)) {
    simple = false;
    k++;
    if (k < end && (buf[k] === 0x2b || buf[k] === 0x2d)) k++;
    const from = k;
    while (k < end && isDigit(buf[k])) k++;
    if (k === from) return -1;
  }
  const read = simple ? (negative ? -whole : whole) : Number(buf.toString('latin1', i, k));
  return Object.is(read, value) ? k : -1;
}
