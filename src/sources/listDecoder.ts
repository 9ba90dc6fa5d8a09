// The streaming decoder of a LIST body: one pass over the bytes as they
// arrive, handing each item over as soon as it is complete. Its envelope and
// item halves are envelopeReader.ts and listItems.ts.

import { DecodeError } from '../errors/api/DecodeError.js';
import { decodeErrorAt, EnvelopeReader } from './envelopeReader.js';
import { byteClasses, closingQuote, COLON, COMMA, endOfString, endsInEscape, IS_CLOSE, IS_OPEN, IS_QUOTE, isJsonSpace, LBRACE, LBRACKET, LONG_STRING, PAST_END_ESCAPED, PLAIN, QUOTE, RBRACE, RBRACKET, skipSpace, stringClasses } from './jsonBytes.js';
import type { ListEnvelope } from './listEnvelope.js';
import { type CaptureKind, ListCapture } from './listCapture.js';
import { itemTypeOf, ListItems } from './listItems.js';
import { ItemStrip } from './managedFieldsStrip.js';
import { DEFAULT_MAX_OBJECT_BYTES } from './wireLimits.js';

export type { ListEnvelope } from './listEnvelope.js';

const BYTE_CLASS = byteClasses();
const IN_STRING = stringClasses();

/**
 * Decodes a LIST response body (`{"kind":…,"metadata":{…},"items":[…]}`)
 * from byte chunks as they arrive, handing over each element of `items` as
 * soon as its last byte is in.
 *
 * The body is never held whole, nor turned into one string: the scanner
 * walks each byte once, keeping only its nesting depth, whether it is inside
 * a string, and the bytes of the value being captured (one item, or a small
 * envelope field). Each item is then `JSON.parse`d on its own, so a list far
 * larger than V8's maximum string length (512 MiB) decodes with memory
 * bounded by the largest single object. `metadata`, `kind` and `apiVersion`
 * are read wherever they appear, before or after `items`. An item with
 * neither `apiVersion` nor `kind` gets the list's (`PodList` holds `Pod`s),
 * as kube-apiserver leaves them out of a built-in resource's items
 * (docs/semantics.md P-15).
 *
 * ## Example
 * ```ts
 * import { ListDecoder } from 'rxkube/core';
 *
 * const decoder = new ListDecoder<{ metadata: { name: string } }>();
 * const items: { metadata: { name: string } }[] = [];
 * decoder.push(new TextEncoder().encode('{"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"na'), items);
 * decoder.push(new TextEncoder().encode('me":"a"}}]}'), items);
 * decoder.end().metadata.resourceVersion; // '7'; items holds one object
 * ```
 */
export class ListDecoder<T> {
  /** Byte offset of the current chunk's start in the body, for error positions. */
  #offset = 0;
  /** Nesting depth of objects and arrays; the envelope itself is depth 1. */
  #depth = 0;
  #inString = false;
  /** A backslash ended the previous chunk inside a string, so the next byte is escaped. */
  #escaped = false;
  /** The envelope's grammar, its last key and its fields: depth 1. */
  readonly #envelope = new EnvelopeReader();
  /** What may come next between the items: an item, a comma, or the closing bracket. */
  #itemsExpect: 'itemOrEnd' | 'item' | 'commaOrEnd' = 'itemOrEnd';
  /** The value being read (an item, an envelope key or value), bounded by `maxObjectBytes`. */
  readonly #cap: ListCapture;
  #done = false;
  /** Parses what the scan delimits as items. */
  readonly #items: ListItems<T>;
  /** Leave each item's `metadata.managedFields` out, unparsed. */
  readonly #strip: boolean;
  /** Finds them during the walk of an item that begins in a chunk. */
  readonly #itemStrip = new ItemStrip();

  /**
   * @param opts.stripManagedFields leave each item's `metadata.managedFields` out, without parsing it (docs/semantics.md P-7). @default false
   * @param opts.maxObjectBytes the most bytes one item, or one value of the envelope, may take; past it the body is refused with a DecodeError of code `OBJECT_TOO_LARGE` and nothing more of it is kept (HI-23). @default 16 MiB
   */
  constructor(opts: { readonly stripManagedFields?: boolean; readonly maxObjectBytes?: number } = {}) {
    this.#strip = opts.stripManagedFields === true;
    this.#items = new ListItems<T>(this.#strip);
    this.#cap = new ListCapture(opts.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES);
  }

  /**
   * Feeds the next chunk of the body.
   *
   * @param chunk Bytes, split anywhere (inside strings, escapes or UTF-8 sequences alike).
   * @param out Items completed by this chunk are appended here, in order; on a DecodeError the items before the bad one are already there.
   * @returns Nothing; throws a {@link DecodeError} on malformed input.
   */
  push(chunk: Uint8Array, out: T[]): void {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const n = buf.length;
    this.#cap.start = 0;
    try {
      this.#scan(buf, out);
    } catch (err) {
      // Items completed before the bad byte still belong to the caller.
      this.#items.flush(buf, this.#offset, out);
      throw err;
    }
    this.#items.flush(buf, this.#offset, out);
    if (!this.#cap.hold(buf)) throw this.#tooLarge();
    this.#offset += n;
  }

  /** Refuses the capture that passed the bound, and drops what was kept of it. */
  #tooLarge(): DecodeError {
    const cap = this.#cap;
    cap.drop();
    const key = this.#envelope.key;
    const what = cap.kind === 'item' ? 'a list item' : `list ${key === '' ? 'envelope' : key}`;
    return new DecodeError(`${what} is larger than maxObjectBytes (${cap.max} bytes)`, '', cap.position, { code: 'OBJECT_TOO_LARGE' });
  }

  #scan(buf: Buffer, out: T[]): void {
    const n = buf.length;
    let i = 0;
    while (i < n) {
      if (this.#cap.kind === 'item' && !this.#inString) {
        i = this.#scanItem(buf, i, out);
        continue;
      }
      if (this.#inString) {
        i = this.#scanString(buf, i);
        if (i < 0) break;
        continue;
      }
      const b = buf[i] as number;
      if (isJsonSpace(b)) {
        // A run of whitespace in one tight loop, without the state checks above for every byte.
        i = skipSpace(buf, i + 1, n);
        continue;
      }
      if (this.#done) throw this.#error('unexpected bytes after the end of the list body', buf, i);
      const depth = this.#depth;
      if (depth === 0) {
        if (b !== LBRACE) throw this.#error('list body is not a JSON object', buf, i);
        this.#depth = 1;
        this.#envelope.open();
      } else if (this.#cap.kind === 'value') {
        this.#valueByte(buf, i, b);
      } else if (depth === 1) {
        this.#envelopeByte(buf, i, b);
      } else {
        // Depth 2 with nothing captured is only ever between the items.
        this.#itemsByte(buf, i, b);
      }
      i++;
    }
  }

  /** A structural byte of the envelope object itself: keys, colons, commas, the start of a value, its end. */
  #envelopeByte(buf: Buffer, i: number, b: number): void {
    switch (this.#envelope.step(b, buf, i, this.#offset)) {
      case 'key':
        this.#inString = true;
        this.#begin('key', i + 1, false, false);
        return;
      case 'end':
        this.#depth = 0;
        this.#done = true;
        return;
      case 'items':
        this.#itemsExpect = 'itemOrEnd';
        this.#depth = 2;
        return;
      case 'container':
        this.#begin('value', i, true, false);
        this.#depth = 2;
        return;
      case 'string':
        this.#inString = true;
        this.#begin('value', i, false, true);
        return;
      case 'scalar':
        this.#begin('value', i, false, false);
        return;
      case 'next':
        return;
    }
  }

  /** A byte inside an envelope value being captured (a scalar, or an object/array at depth 2 and deeper). */
  #valueByte(buf: Buffer, i: number, b: number): void {
    if (!this.#cap.container) {
      // A bare scalar (number, true, false, null) runs to the next ',' or '}'; JSON.parse then checks it.
      if (b === COMMA || b === RBRACE) {
        this.#finishValue(buf, i);
        // The grammar expects a comma or the end after a value: this byte is one of them.
        this.#envelopeByte(buf, i, b);
      } else if (b === QUOTE || b === LBRACE || b === LBRACKET || b === RBRACKET || b === COLON) {
        throw this.#error(`list body has malformed ${this.#envelope.key}`, buf, i);
      }
      return;
    }
    if (b === QUOTE) this.#inString = true;
    else if (b === LBRACE || b === LBRACKET) this.#depth++;
    else if (b === RBRACE || b === RBRACKET) {
      if (--this.#depth === 1) this.#finishValue(buf, i + 1);
    }
  }

  /** A byte between the items of the `items` array: an item's start, a comma, or the closing bracket. */
  #itemsByte(buf: Buffer, i: number, b: number): void {
    if (b === LBRACE) {
      if (this.#itemsExpect === 'commaOrEnd') throw this.#error("list items lack a ',' between two items", buf, i);
      this.#begin('item', i, true, false);
      this.#itemsExpect = 'commaOrEnd';
      this.#depth = 3;
    } else if (b === COMMA) {
      if (this.#itemsExpect !== 'commaOrEnd') throw this.#error("list items have a stray ','", buf, i);
      this.#itemsExpect = 'item';
    } else if (b === RBRACKET) {
      if (this.#itemsExpect === 'item') throw this.#error("list items end with a stray ','", buf, i);
      this.#depth = 1;
    } else {
      throw this.#error('list item is not an object', buf, i);
    }
  }

  /**
   * The hot loop: walks the inside of one item, where only strings and
   * brackets matter, with the depth in a local. Returns where it stopped:
   * the end of the chunk, or just past the item's closing brace.
   *
   * When managedFields are stripped, the walk of an item that begins in this
   * chunk also finds them, as `managedFieldsSpan` would (docs/semantics.md
   * P-7), so the strip does not walk the item's metadata a second time. An
   * item begun in an earlier chunk is joined and stripped on its own.
   */
  #scanItem(buf: Buffer, start: number, out: T[]): number {
    const n = buf.length;
    let i = start;
    let d = this.#depth;
    // The strip rides along on an item that begins in this chunk; one begun earlier is joined and walked again.
    const cap = this.#cap;
    const strip = this.#strip && d === 3 && start === cap.start + 1 && !cap.spans ? this.#itemStrip.begin(cap.start) : undefined;
    while (i < n) {
      const cls = BYTE_CLASS[buf[i] as number] as number;
      if (cls === PLAIN) {
        i++;
        continue;
      }
      if (cls === IS_QUOTE) {
        const open = i;
        i++;
        // Past this many bytes without an escape the string is a long one (base64 data, certificates): endOfString
        // takes over, which reads one more such block byte by byte before its native search.
        let long = i + LONG_STRING;
        for (;;) {
          if (i >= n) {
            this.#depth = d;
            this.#inString = true;
            return n;
          }
          const c = IN_STRING[buf[i] as number] as number;
          if (c === 0) {
            if (++i < long) continue;
            i = endOfString(buf, i, n);
            if (i < 0) {
              this.#depth = d;
              this.#inString = true;
              this.#escaped = i === PAST_END_ESCAPED;
              return n;
            }
            break;
          }
          if (c === 1) {
            i++;
            break;
          }
          // A backslash: the next byte is escaped, in this chunk or the next.
          if (i + 1 >= n) {
            this.#depth = d;
            this.#inString = true;
            this.#escaped = true;
            return n;
          }
          i += 2;
          long = i + LONG_STRING;
        }
        if (strip?.walking === true) strip.string(buf, open, i, d);
        continue;
      }
      i++;
      if (cls === IS_OPEN) {
        if (strip?.walking === true) strip.opened(buf[i - 1] as number, d);
        d++;
      } else if (cls === IS_CLOSE) {
        d--;
        if (strip?.walking === true) strip.closed(buf, i, d);
        if (d === 2) {
          this.#depth = 2;
          this.#completeItem(buf, i, out, strip);
          return i;
        }
      } else if (strip?.walking === true) {
        strip.comma();
      }
    }
    this.#depth = d;
    return n;
  }

  /** Hands a completed item to the item parser: at once when it spanned chunks, else with the rest of this chunk's. */
  #completeItem(buf: Buffer, end: number, out: T[], strip: ItemStrip | undefined): void {
    // One comparison per item: a chunk can hold a whole item only when the transport hands over chunks past the bound.
    const cap = this.#cap;
    if (cap.over(end)) throw this.#tooLarge();
    if (cap.spans) {
      this.#items.flush(buf, this.#offset, out);
      out.push(this.#items.parseJoined(this.#take(buf, end), cap.position));
    } else {
      this.#items.add(cap.start, end, strip?.from ?? -1, strip?.to ?? -1);
    }
    cap.kind = 'none';
  }

  /**
   * Declares the body complete.
   *
   * @returns The envelope: `metadata` (resourceVersion, continue, remainingItemCount), `kind`, `apiVersion`.
   */
  end(): ListEnvelope {
    if (!this.#done) {
      throw new DecodeError('list body ended before its JSON was complete', '', this.#offset, { code: 'TRUNCATED' });
    }
    return this.#envelope.fields as ListEnvelope;
  }

  /** Bytes read so far. */
  get bytesRead(): number {
    return this.#offset;
  }

  /**
   * The list's `metadata` (resourceVersion, continue, remainingItemCount)
   * as soon as it has been read, when the body carries it before `items`;
   * `undefined` until then, and for a body that carries it after. kube-apiserver
   * writes it first, so a pager learns the continue token from the first
   * bytes of a page (docs/semantics.md P-1).
   */
  get earlyMetadata(): ListEnvelope['metadata'] | undefined {
    return this.#envelope.earlyMetadata;
  }

  /** Whether the `items` key has been read (the items may not have begun to arrive). */
  get itemsBegun(): boolean {
    return this.#envelope.sawItems;
  }

  /**
   * Skips to just past the closing quote of the current string, finishing
   * the envelope key or string value it ends. Returns -1 when the string runs
   * past this chunk.
   */
  #scanString(buf: Buffer, from: number): number {
    let i = from;
    if (this.#escaped) {
      this.#escaped = false;
      i++;
      if (i >= buf.length) return -1;
    }
    const q = closingQuote(buf, i);
    if (q < 0) {
      this.#escaped = endsInEscape(buf, i);
      return -1;
    }
    this.#inString = false;
    if (this.#cap.kind === 'key' && this.#depth === 1) {
      this.#finishKey(buf, q);
    } else if (this.#cap.kind === 'value' && this.#cap.string && this.#depth === 1) {
      this.#finishValue(buf, q + 1);
    }
    return q + 1;
  }

  #begin(kind: CaptureKind, start: number, container: boolean, string: boolean): void {
    this.#cap.begin(kind, start, this.#offset + start, container, string);
  }

  /** The captured bytes up to `end` (exclusive), joined with any earlier chunks' share. */
  #take(buf: Buffer, end: number): Buffer {
    const bytes = this.#cap.take(buf, end);
    if (bytes === undefined) throw this.#tooLarge();
    return bytes;
  }

  /** Reads a key as JSON does (escapes resolved), so `"\u0069tems"` is `items`, and refuses a second `items`. */
  #finishKey(buf: Buffer, end: number): void {
    const raw = this.#take(buf, end).toString('utf8');
    this.#cap.kind = 'none';
    this.#envelope.readKey(raw, this.#cap.position - 1);
  }

  /** Records the envelope value captured up to `end`; a list's kind or apiVersion gives its items their type. */
  #finishValue(buf: Buffer, end: number): void {
    const bytes = this.#take(buf, end);
    this.#cap.kind = 'none';
    const key = this.#envelope.readValue(bytes.toString('utf8'), this.#cap.position);
    if (key === 'kind' || key === 'apiVersion') this.#items.type = itemTypeOf(this.#envelope.fields.apiVersion, this.#envelope.fields.kind);
  }

  /** A DecodeError at byte `at` of this chunk. */
  #error(message: string, buf: Buffer, at: number): DecodeError {
    return decodeErrorAt(message, buf, at, this.#offset);
  }
}
