import { DecodeError } from '../errors/api/DecodeError.js';
import { BACKSLASH, COLON, COMMA, isJsonSpace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, skipSpace } from './jsonBytes.js';
import { envelopeKey, setEnvelopeField, type EnvelopeFields, type ListEnvelope } from './listEnvelope.js';
import { itemTypeOf, ListItems } from './listItems.js';
import { DEFAULT_MAX_OBJECT_BYTES } from './wireLimits.js';

export type { ListEnvelope } from './listEnvelope.js';

/** Bytes of a string scanned byte by byte before switching to the native quote search. */
const LONG_STRING = 48;

/** What the bytes being captured will become once complete. */
type Capture = 'none' | 'key' | 'value' | 'item';

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
  /** What the envelope's grammar allows next at depth 1, so that malformed JSON is refused rather than guessed at. */
  #expect: 'keyOrEnd' | 'key' | 'colon' | 'value' | 'commaOrEnd' = 'keyOrEnd';
  /** The same between the items: an item, a comma, or the closing bracket. */
  #itemsExpect: 'itemOrEnd' | 'item' | 'commaOrEnd' = 'itemOrEnd';
  /** Whether an `items` key was read: a second one would add its items to the first's, where JSON keeps only the last. */
  #sawItems = false;
  /** Whether a `metadata` value was read before the `items` key. */
  #metadataFirst = false;
  #capture: Capture = 'none';
  /** Whether the value being captured is an object/array (ends at its bracket) or a scalar/string. */
  #captureContainer = false;
  #captureString = false;
  #captureStart = 0;
  /** Body offset where the current capture began, for error positions. */
  #capturePosition = 0;
  /** Bytes of the capture that arrived in earlier chunks. */
  #parts: Buffer[] = [];
  /** Their total length, held to {@link ListDecoder.#max}. */
  #partsBytes = 0;
  /** The most bytes one item (or envelope value) may take: `maxObjectBytes`. */
  readonly #max: number;
  /** Last key read at depth 1; decides where its value goes. */
  #key = '';
  #done = false;
  #envelope: EnvelopeFields = { metadata: {} };
  /** Parses what the scan delimits as items. */
  readonly #items: ListItems<T>;

  /**
   * @param opts.stripManagedFields leave each item's `metadata.managedFields` out, without parsing it (docs/semantics.md P-7). @default false
   * @param opts.maxObjectBytes the most bytes one item, or one value of the envelope, may take; past it the body is refused with a DecodeError of code `OBJECT_TOO_LARGE` and nothing more of it is kept (HI-23). @default 16 MiB
   */
  constructor(opts: { readonly stripManagedFields?: boolean; readonly maxObjectBytes?: number } = {}) {
    this.#items = new ListItems<T>(opts.stripManagedFields === true);
    this.#max = opts.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
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
    this.#captureStart = 0;
    try {
      this.#scan(buf, out);
    } catch (err) {
      // Items completed before the bad byte still belong to the caller.
      this.#items.flush(buf, this.#offset, out);
      throw err;
    }
    this.#items.flush(buf, this.#offset, out);
    if (this.#capture !== 'none' && this.#captureStart < n) {
      this.#partsBytes += n - this.#captureStart;
      if (this.#partsBytes > this.#max) throw this.#tooLarge();
      this.#parts.push(buf.subarray(this.#captureStart, n));
    }
    this.#offset += n;
  }

  /** Refuses the capture that passed the bound, and drops what was kept of it. */
  #tooLarge(): DecodeError {
    this.#parts = [];
    this.#partsBytes = 0;
    const what = this.#capture === 'item' ? 'a list item' : `list ${this.#key === '' ? 'envelope' : this.#key}`;
    return new DecodeError(`${what} is larger than maxObjectBytes (${this.#max} bytes)`, '', this.#capturePosition, { code: 'OBJECT_TOO_LARGE' });
  }

  #scan(buf: Buffer, out: T[]): void {
    const n = buf.length;
    let i = 0;
    while (i < n) {
      if (this.#capture === 'item' && !this.#inString) {
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
        this.#expect = 'keyOrEnd';
      } else if (this.#capture === 'value') {
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
    switch (this.#expect) {
      case 'keyOrEnd':
      case 'key':
        if (b === QUOTE) {
          this.#inString = true;
          this.#begin('key', i + 1, false, false);
          this.#expect = 'colon';
        } else if (b === RBRACE && this.#expect === 'keyOrEnd') {
          this.#depth = 0;
          this.#done = true;
        } else {
          throw this.#error('list body has a malformed key', buf, i);
        }
        return;
      case 'colon':
        if (b !== COLON) throw this.#error(`list body lacks ':' after key ${JSON.stringify(this.#key)}`, buf, i);
        this.#expect = 'value';
        return;
      case 'value':
        this.#expect = 'commaOrEnd';
        if (b === LBRACKET && this.#key === 'items') {
          this.#itemsExpect = 'itemOrEnd';
          this.#depth = 2;
        } else if (b === LBRACE || b === LBRACKET) {
          this.#begin('value', i, true, false);
          this.#depth = 2;
        } else if (b === QUOTE) {
          this.#inString = true;
          this.#begin('value', i, false, true);
        } else if (b === COMMA || b === COLON || b === RBRACE || b === RBRACKET) {
          throw this.#error(`list body lacks a value for key ${JSON.stringify(this.#key)}`, buf, i);
        } else {
          this.#begin('value', i, false, false);
        }
        return;
      case 'commaOrEnd':
        if (b === COMMA) this.#expect = 'key';
        else if (b === RBRACE) {
          this.#depth = 0;
          this.#done = true;
        } else throw this.#error("list body lacks ',' or '}' after a value", buf, i);
        return;
    }
  }

  /** A byte inside an envelope value being captured (a scalar, or an object/array at depth 2 and deeper). */
  #valueByte(buf: Buffer, i: number, b: number): void {
    if (!this.#captureContainer) {
      // A bare scalar (number, true, false, null) runs to the next ',' or '}'; JSON.parse then checks it.
      if (b === COMMA || b === RBRACE) {
        this.#finishValue(buf, i);
        if (b === COMMA) this.#expect = 'key';
        else {
          this.#depth = 0;
          this.#done = true;
        }
      } else if (b === QUOTE || b === LBRACE || b === LBRACKET || b === RBRACKET || b === COLON) {
        throw this.#error(`list body has malformed ${this.#key}`, buf, i);
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
   */
  #scanItem(buf: Buffer, start: number, out: T[]): number {
    const n = buf.length;
    let i = start;
    let d = this.#depth;
    while (i < n) {
      const b = buf[i] as number;
      if (b === QUOTE) {
        i++;
        let run = 0;
        for (;;) {
          if (i >= n) {
            this.#depth = d;
            this.#inString = true;
            return n;
          }
          const c = buf[i] as number;
          if (c === QUOTE) {
            i++;
            break;
          }
          if (c === BACKSLASH) {
            if (i + 1 >= n) {
              this.#depth = d;
              this.#inString = true;
              this.#escaped = true;
              return n;
            }
            i += 2;
          } else if (++run > LONG_STRING) {
            // A long string (base64 data, certificates): let the native search find its end.
            this.#depth = d;
            this.#inString = true;
            i = this.#scanString(buf, i);
            if (i < 0) return n;
            break;
          } else {
            i++;
          }
        }
      } else if (b === LBRACE || b === LBRACKET) {
        d++;
        i++;
      } else if (b === RBRACE || b === RBRACKET) {
        d--;
        i++;
        if (d === 2) {
          this.#depth = 2;
          this.#completeItem(buf, i, out);
          return i;
        }
      } else {
        i++;
      }
    }
    this.#depth = d;
    return n;
  }

  /** Hands a completed item to the item parser: at once when it spanned chunks, else with the rest of this chunk's. */
  #completeItem(buf: Buffer, end: number, out: T[]): void {
    // One comparison per item: a chunk can hold a whole item only when the transport hands over chunks past the bound.
    if (this.#partsBytes + end - this.#captureStart > this.#max) throw this.#tooLarge();
    if (this.#parts.length > 0) {
      this.#items.flush(buf, this.#offset, out);
      out.push(this.#items.parseJoined(this.#take(buf, end), this.#capturePosition));
    } else {
      this.#items.add(this.#captureStart, end);
    }
    this.#capture = 'none';
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
    return this.#envelope as ListEnvelope;
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
    return this.#metadataFirst ? this.#envelope.metadata : undefined;
  }

  /** Whether the `items` key has been read (the items may not have begun to arrive). */
  get itemsBegun(): boolean {
    return this.#sawItems;
  }

  /**
   * Skips to just past the closing quote of the current string, using the
   * native `indexOf` to jump, since most of a Kubernetes object's bytes are
   * inside strings. Returns -1 when the string runs past this chunk.
   */
  #scanString(buf: Buffer, from: number): number {
    let i = from;
    if (this.#escaped) {
      this.#escaped = false;
      i++;
      if (i >= buf.length) return -1;
    }
    for (;;) {
      const q = buf.indexOf(QUOTE, i);
      if (q < 0) {
        let k = buf.length - 1;
        while (k >= i && buf[k] === BACKSLASH) k--;
        this.#escaped = (buf.length - 1 - k) % 2 === 1;
        return -1;
      }
      let k = q - 1;
      while (k >= i && buf[k] === BACKSLASH) k--;
      if ((q - 1 - k) % 2 === 1) {
        i = q + 1;
        continue;
      }
      this.#inString = false;
      if (this.#capture === 'key' && this.#depth === 1) {
        this.#finishKey(buf, q);
      } else if (this.#capture === 'value' && this.#captureString && this.#depth === 1) {
        this.#finishValue(buf, q + 1);
      }
      return q + 1;
    }
  }

  #begin(capture: Capture, start: number, container: boolean, string: boolean): void {
    this.#capture = capture;
    this.#captureContainer = container;
    this.#captureString = string;
    this.#captureStart = start;
    this.#capturePosition = this.#offset + start;
    this.#parts = [];
    this.#partsBytes = 0;
  }

  /** The captured bytes up to `end` (exclusive), joined with any earlier chunks' share. */
  #take(buf: Buffer, end: number): Buffer {
    const tail = buf.subarray(this.#captureStart, end);
    const parts = this.#parts;
    if (this.#partsBytes + tail.length > this.#max) throw this.#tooLarge();
    this.#parts = [];
    this.#partsBytes = 0;
    if (parts.length === 0) return tail;
    parts.push(tail);
    return Buffer.concat(parts);
  }

  /** Reads a key as JSON does (escapes resolved), so `"\u0069tems"` is `items`, and refuses a second `items`. */
  #finishKey(buf: Buffer, end: number): void {
    const raw = this.#take(buf, end).toString('utf8');
    this.#capture = 'none';
    const key = envelopeKey(raw, this.#capturePosition - 1);
    if (key === 'items') {
      if (this.#sawItems) throw new DecodeError('list body has more than one items key', raw, this.#capturePosition - 1);
      this.#sawItems = true;
    }
    this.#key = key;
  }

  #finishValue(buf: Buffer, end: number): void {
    const bytes = this.#take(buf, end);
    const key = this.#key;
    this.#capture = 'none';
    setEnvelopeField(this.#envelope, key, bytes.toString('utf8'), this.#capturePosition);
    if (key === 'metadata') this.#metadataFirst = !this.#sawItems;
    else if (key === 'kind' || key === 'apiVersion') this.#items.type = itemTypeOf(this.#envelope.apiVersion, this.#envelope.kind);
  }

  #error(message: string, buf: Buffer, at: number): DecodeError {
    return new DecodeError(message, buf.subarray(at, at + 256).toString('utf8'), this.#offset + at);
  }
}
