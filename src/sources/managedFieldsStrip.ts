/**
 * Finding `metadata.managedFields` in an object's JSON bytes, so a decoder
 * can leave it out before parsing: those bytes are then never turned into
 * objects. It is a quarter of a typical object's bytes and the largest share
 * of its small objects, which the informer drops anyway (docs/semantics.md
 * P-7).
 */
import { byteClasses, COLON, COMMA, IS_CLOSE, IS_COMMA, IS_OPEN, IS_QUOTE, LBRACE, LBRACKET, PLAIN, QUOTE, RBRACE, RBRACKET, skipSpace, skipSpaceBack, stringClasses } from './jsonBytes.js';

const BYTE_CLASS = byteClasses();
const IN_STRING = stringClasses();

/** The key as kube-apiserver writes it; written any other way, nothing is stripped and the object is parsed whole. */
const KEY = Buffer.from('"managedFields":');
/** The key's string, quotes included: what the walk compares a string at the metadata's depth with. */
const QUOTED = KEY.subarray(0, KEY.length - 1);

/** The keys from an object down to its `metadata`, as bytes: `['metadata']` for a LIST item, `['object', 'metadata']` for a watch event. */
export type MetadataPath = readonly Buffer[];

/** The path of a LIST item's metadata. */
export const ITEM_METADATA: MetadataPath = [Buffer.from('metadata')];
/** The path of a watch event's object's metadata. */
export const EVENT_METADATA: MetadataPath = [Buffer.from('object'), Buffer.from('metadata')];

/**
 * Index just past the closing quote of the string whose opening quote is at `q`, or -1 when it runs past `end`. Byte
 * by byte, unlike the list scan's `endOfString`: what it reads is metadata, whose long strings (kubectl's
 * last-applied annotation) are JSON with an escaped quote every few bytes, where a native search gains nothing, and
 * this loop measured 7–10 % faster per watch event with such an annotation than that one (PF-111).
 */
export function stringEnd(buf: Buffer, q: number, end: number): number {
  for (let i = q + 1; i < end; i++) {
    const c = IN_STRING[buf[i] as number] as number;
    if (c === 0) continue;
    if (c === 1) return i + 1;
    i++;
  }
  return -1;
}

/** Whether `buf[from, to)` holds exactly the bytes of `key`. */
export function equalsBytes(buf: Buffer, from: number, to: number, key: Buffer): boolean {
  if (to - from !== key.length) return false;
  for (let k = 0; k < key.length; k++) if (buf[from + k] !== key[k]) return false;
  return true;
}

/** Index just past the array or object whose opening bracket is at `v`, or -1 when it runs past `end`. */
export function containerEnd(buf: Buffer, v: number, end: number): number {
  return containerRest(buf, v, 0, end);
}

/**
 * Index just past the bracket that closes the `depth` arrays or objects open at `from` (a byte outside any string),
 * or -1 when the bytes run past `end`.
 */
export function containerRest(buf: Buffer, from: number, depth: number, end: number): number {
  let d = depth;
  for (let k = from; k < end; k++) {
    const c = BYTE_CLASS[buf[k] as number] as number;
    if (c === PLAIN || c === IS_COMMA) continue;
    if (c === IS_QUOTE) {
      const close = stringEnd(buf, k, end);
      if (close < 0) return -1;
      k = close - 1;
    } else if (c === IS_OPEN) {
      d++;
    } else if (--d === 0) {
      return k + 1;
    }
  }
  return -1;
}

/**
 * The byte range `[from, to)` to remove from the JSON object in
 * `buf[start, end)` so that what remains parses to the same object without
 * `metadata.managedFields` (the key, its array, and one adjoining comma), or
 * undefined when there is nothing to strip: no such key on that path, a value
 * that is not an array, or bytes that are not well-formed where the strip
 * would be (the object is then parsed whole and the error, if any, is
 * reported as it would be). The bytes inside the array are only walked for
 * strings and brackets, never parsed.
 *
 * @param buf the bytes
 * @param start where the object begins (its `{`)
 * @param end just past the object's last byte
 * @param path the keys leading from the object to its metadata
 * @returns the range to strip, or undefined
 */
export function managedFieldsSpan(buf: Buffer, start: number, end: number, path: MetadataPath): readonly [number, number] | undefined {
  // Bytes that do not begin with the object's brace never reach its metadata (P-7); a string there is no key of `path`.
  if (buf[start] !== LBRACE) return undefined;
  const metadataDepth = path.length + 1;
  // Walk from the start, keeping the depth and how deep the objects on `path` reach, until a string at the
  // metadata's own depth is the key, written exactly as `KEY` (no search for it first: the walk reads those bytes
  // anyway).
  let depth = 0;
  let onPath = 0;
  // The last key read at depth `onPath` was the next key of `path`, and its value has not started yet.
  let keyOnPath = false;
  let candidate = -1;
  // Where the next `KEY` lies, once searched for: a search starts only past the last one found, so together the
  // searches read each byte once however many objects on the path close (repeated `metadata` keys are legal JSON).
  let ahead = start - 1;
  let i = start;
  while (i < end) {
    const cls = BYTE_CLASS[buf[i] as number] as number;
    if (cls === PLAIN) {
      i++;
      continue;
    }
    if (cls === IS_QUOTE) {
      const close = stringEnd(buf, i, end);
      if (close < 0) return undefined;
      if (depth === onPath) {
        if (depth === metadataDepth) {
          if (close - i === QUOTED.length && buf[close] === COLON && equalsBytes(buf, i, close, QUOTED)) {
            candidate = i;
            break;
          }
        } else {
          keyOnPath = buf[skipSpace(buf, close, end)] === COLON && equalsBytes(buf, i + 1, close - 1, path[depth - 1] as Buffer);
        }
      }
      i = close;
      continue;
    }
    if (cls === IS_OPEN) {
      if (buf[i] === LBRACE && (depth === 0 ? start === i : depth === onPath && keyOnPath)) onPath = depth + 1;
      keyOnPath = false;
      depth++;
    } else if (cls === IS_CLOSE) {
      depth--;
      keyOnPath = false;
      if (depth <= 0) return undefined;
      if (onPath > depth) {
        onPath = depth;
        // An object on the path closed: with the key nowhere further on, nothing is left to find.
        if (ahead < i) {
          ahead = buf.indexOf(KEY, i);
          if (ahead < 0 || ahead >= end) return undefined;
        }
      }
    } else {
      keyOnPath = false;
    }
    i++;
  }
  if (candidate < 0) return undefined;
  // The value: an array, walked to its closing bracket.
  const v = skipSpace(buf, candidate + KEY.length, end);
  if (buf[v] !== LBRACKET) return undefined;
  // Closed by whatever bracket balances the `[`: a `}` there means the bytes are not well-formed.
  const valueEnd = containerEnd(buf, v, end);
  if (valueEnd < 0 || buf[valueEnd - 1] !== RBRACKET) return undefined;
  return memberSpan(buf, start, end, candidate, valueEnd);
}

/**
 * The range to remove for the member whose key's opening quote is at
 * `candidate` and whose value ends just before `valueEnd`, inside the object
 * that begins at `start`: the member and one adjoining comma, or undefined
 * when the bytes around it are not a well-formed member. Only where the member
 * stands as valid JSON does it have a comma to take, so that stripping never
 * turns malformed bytes into an object that parses (a stray comma beside the
 * key, `{,"managedFields":[]}` or `{"managedFields":[],}`): those are parsed
 * whole, and fail as they came.
 *
 * @param buf the bytes
 * @param start where the object begins (its `{`)
 * @param end a bound past the member's value: the object's end, or any later one inside `buf`
 * @param candidate where the member's key begins
 * @param valueEnd just past the member's value
 * @returns the range to strip, or undefined
 */
export function memberSpan(buf: Buffer, start: number, end: number, candidate: number, valueEnd: number): readonly [number, number] | undefined {
  const before = skipSpaceBack(buf, candidate - 1, start);
  const opener = buf[before];
  if (opener !== LBRACE && opener !== COMMA) return undefined;
  const after = skipSpace(buf, valueEnd, end);
  if (buf[after] === COMMA) {
    return buf[skipSpace(buf, after + 1, end)] === QUOTE ? [candidate, after + 1] : undefined;
  }
  if (buf[after] !== RBRACE) return undefined;
  if (opener === LBRACE) return [candidate, valueEnd];
  // The comma before it must follow a member's value, not open the object or follow another comma or a colon.
  const last = buf[skipSpaceBack(buf, before - 1, start)];
  return last === LBRACE || last === COMMA || last === COLON ? undefined : [before, valueEnd];
}

/** The key of a LIST item's metadata, unquoted. */
const METADATA = ITEM_METADATA[0] as Buffer;

/**
 * {@link managedFieldsSpan} for a LIST item, worked out during the walk the
 * list decoder makes anyway to find the item's end, so the strip does not
 * walk the item's metadata a second time. The walk tells it each string it
 * closes and each bracket and comma outside strings, with the depth in the
 * decoder's terms (the item's own members at 3, its metadata's at 4); it
 * follows the same rules as `managedFieldsSpan` and finds the same range.
 * One is reused for every item: {@link ItemStrip.begin} starts the next.
 */
export class ItemStrip {
  /** Where the item begins (its `{`). */
  #start = 0;
  /** How deep the objects on the path item → metadata reach: 3, or 4 inside the metadata. */
  #onPath = 3;
  /** The last key read at depth `#onPath` was `metadata`, and its value has not started yet. */
  #keyOnPath = false;
  /** Where the managedFields key begins, once found. */
  #candidate = -1;
  /** Whether the walk still has anything to tell: false once the range is known, or known to be none. */
  walking = false;
  /** The range to cut, once known; -1 when there is none. */
  from = -1;
  to = -1;

  /** Starts on the item whose `{` is at `start`; returns itself. */
  begin(start: number): this {
    this.#start = start;
    this.#onPath = 3;
    this.#keyOnPath = false;
    this.#candidate = -1;
    this.walking = true;
    this.from = -1;
    this.to = -1;
    return this;
  }

  /** The walk closed a string that began at `open`; `close` is just past its closing quote. */
  string(buf: Buffer, open: number, close: number, depth: number): void {
    if (depth !== this.#onPath) return;
    if (depth === 3) {
      this.#keyOnPath = buf[skipSpace(buf, close, buf.length)] === COLON && equalsBytes(buf, open + 1, close - 1, METADATA);
    } else if (buf[close] === COLON && equalsBytes(buf, open, close, QUOTED)) {
      this.#candidate = open;
      // Its value must be an array, or nothing is stripped.
      this.walking = buf[skipSpace(buf, close + 1, buf.length)] === LBRACKET;
      this.#onPath = 0;
    }
  }

  /** The walk met an opening bracket or brace, `byte`, at `depth` (before it). */
  opened(byte: number, depth: number): void {
    if (byte === LBRACE && depth === this.#onPath && this.#keyOnPath) this.#onPath = 4;
    this.#keyOnPath = false;
  }

  /** The walk met a closing bracket or brace just before `i`, leaving `depth`. */
  closed(buf: Buffer, i: number, depth: number): void {
    this.#keyOnPath = false;
    if (this.#candidate < 0) {
      if (this.#onPath > depth) this.#onPath = depth;
      return;
    }
    if (depth !== 4) return;
    // The bracket that balances the managedFields array's: a `}` there means the bytes are not well-formed.
    this.walking = false;
    const span = buf[i - 1] === RBRACKET ? memberSpan(buf, this.#start, buf.length, this.#candidate, i) : undefined;
    if (span === undefined) return;
    this.from = span[0];
    this.to = span[1];
  }

  /** The walk met a comma. */
  comma(): void {
    this.#keyOnPath = false;
  }
}

/**
 * The text of `buf[start, end)` with the managedFields of each object stripped
 * out, the objects given as start/end pairs in order; undefined when none
 * had any to strip.
 *
 * @param buf the bytes
 * @param start where the text begins
 * @param end where it ends
 * @param objects start/end offsets of the objects inside, in order
 * @param path the keys from each object to its metadata
 * @returns the shortened text, or undefined
 */
export function textWithoutManagedFields(buf: Buffer, start: number, end: number, objects: readonly number[], path: MetadataPath): string | undefined {
  const cuts: number[] = [];
  for (let k = 0; k < objects.length; k += 2) {
    const span = managedFieldsSpan(buf, objects[k] as number, objects[k + 1] as number, path);
    if (span !== undefined) cuts.push(span[0], span[1]);
  }
  return textWithout(buf, start, end, cuts);
}

/**
 * The text of `buf[start, end)` less the byte ranges `cuts` lists, as
 * from/to pairs in order (a pair whose `from` is negative cuts nothing),
 * each range written as the bytes `fills` gives for it, if any; undefined
 * when nothing is cut. The kept bytes are gathered in one shared scratch
 * buffer and turned into text at once: no buffer per piece.
 *
 * @param buf the bytes
 * @param start where the text begins
 * @param end where it ends
 * @param cuts the ranges to leave out, inside `[start, end)`
 * @param fills what to write in place of each range (by its pair's index), or nothing
 * @returns the shortened text, or undefined
 */
export function textWithout(buf: Buffer, start: number, end: number, cuts: readonly number[], fills?: readonly (Buffer | undefined)[]): string | undefined {
  let length = 0;
  let from = start;
  let out: Buffer | undefined;
  for (let k = 0; k < cuts.length; k += 2) {
    const cut = cuts[k] as number;
    if (cut < 0) continue;
    out ??= scratchOf(end - start + filledBytes(fills));
    length += buf.copy(out, length, from, cut);
    const fill = fills?.[k >> 1];
    if (fill !== undefined) length += fill.copy(out, length);
    from = cuts[k + 1] as number;
  }
  if (out === undefined) return undefined;
  length += buf.copy(out, length, from, end);
  return out.toString('utf8', 0, length);
}

/** How many bytes `fills` adds in all. */
function filledBytes(fills: readonly (Buffer | undefined)[] | undefined): number {
  let bytes = 0;
  if (fills !== undefined) for (const fill of fills) bytes += fill?.length ?? 0;
  return bytes;
}

/** Reused by every call: its contents live only until the text is made from them, within one synchronous call. */
let scratch: Buffer = Buffer.allocUnsafe(64 * 1024);

/** A buffer of at least `size` bytes: the shared one, grown up to 1 MiB; a one-off beyond (a single huge object). */
export function scratchOf(size: number): Buffer {
  if (size > MAX_SCRATCH) return Buffer.allocUnsafe(size);
  if (scratch.length < size) scratch = Buffer.allocUnsafe(Math.min(MAX_SCRATCH, Math.max(size, scratch.length * 2)));
  return scratch;
}

const MAX_SCRATCH = 1024 * 1024;
