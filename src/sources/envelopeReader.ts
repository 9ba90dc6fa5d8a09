// The envelope of a LIST body as the list decoder walks it: what its grammar
// allows next at depth 1, the key being read, and the fields read so far.
// Internal: the list decoder's envelope half, beside listItems.ts.

import { DecodeError } from '../errors/api/DecodeError.js';
import { COLON, COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from './jsonBytes.js';
import { envelopeKey, setEnvelopeField, type EnvelopeFields, type ListEnvelope } from './listEnvelope.js';

/**
 * What a structural byte of the envelope does, for the decoder to act on: begin
 * a key, end the body, open the items, begin a value (an object or array, a
 * string, or a bare scalar), or nothing more than move the grammar on.
 */
export type EnvelopeStep = 'key' | 'end' | 'items' | 'container' | 'string' | 'scalar' | 'next';

/** A DecodeError at byte `at` of `buf`, a chunk that starts at body offset `offset`, quoting what follows. */
export function decodeErrorAt(message: string, buf: Buffer, at: number, offset: number): DecodeError {
  return new DecodeError(message, buf.subarray(at, at + 256).toString('utf8'), offset + at);
}

/** The grammar and the fields of one LIST body's envelope object. */
export class EnvelopeReader {
  /** What the envelope's grammar allows next at depth 1, so that malformed JSON is refused rather than guessed at. */
  #expect: 'keyOrEnd' | 'key' | 'colon' | 'value' | 'commaOrEnd' = 'keyOrEnd';
  /** Last key read at depth 1; decides where its value goes. */
  #key = '';
  /** Whether an `items` key was read: a second one would add its items to the first's, where JSON keeps only the last. */
  #sawItems = false;
  /** Whether a `metadata` value was read before the `items` key. */
  #metadataFirst = false;
  // The fields read so far, filled in as their values complete.
  readonly #fields: EnvelopeFields = { metadata: {} };

  /** The last key read. */
  get key(): string {
    return this.#key;
  }

  /** Whether the `items` key has been read. */
  get sawItems(): boolean {
    return this.#sawItems;
  }

  /** The fields read so far. */
  get fields(): EnvelopeFields {
    return this.#fields;
  }

  /** The list's `metadata` once read, when it came before `items`; undefined otherwise. */
  get earlyMetadata(): ListEnvelope['metadata'] | undefined {
    return this.#metadataFirst ? this.#fields.metadata : undefined;
  }

  /** The envelope object has opened: a key or its end comes next. */
  open(): void {
    this.#expect = 'keyOrEnd';
  }

  /**
   * Moves the grammar on over structural byte `b`, at `i` of `buf` (a chunk at
   * body offset `offset`), and says what it begins; throws a DecodeError on
   * a byte the grammar does not allow.
   */
  step(b: number, buf: Buffer, i: number, offset: number): EnvelopeStep {
    switch (this.#expect) {
      case 'keyOrEnd':
      case 'key':
        if (b === QUOTE) {
          this.#expect = 'colon';
          return 'key';
        }
        if (b === RBRACE && this.#expect === 'keyOrEnd') return 'end';
        throw decodeErrorAt('list body has a malformed key', buf, i, offset);
      case 'colon':
        if (b !== COLON) throw decodeErrorAt(`list body lacks ':' after key ${JSON.stringify(this.#key)}`, buf, i, offset);
        this.#expect = 'value';
        return 'next';
      case 'value':
        this.#expect = 'commaOrEnd';
        if (b === LBRACKET && this.#key === 'items') return 'items';
        if (b === LBRACE || b === LBRACKET) return 'container';
        if (b === QUOTE) return 'string';
        if (b === COMMA || b === COLON || b === RBRACE || b === RBRACKET) {
          throw decodeErrorAt(`list body lacks a value for key ${JSON.stringify(this.#key)}`, buf, i, offset);
        }
        return 'scalar';
      case 'commaOrEnd':
        if (b === COMMA) {
          this.#expect = 'key';
          return 'next';
        }
        if (b === RBRACE) return 'end';
        throw decodeErrorAt("list body lacks ',' or '}' after a value", buf, i, offset);
    }
  }

  /** Reads a key as JSON does (escapes resolved), so `"\u0069tems"` is `items`, and refuses a second `items`; `position` is its opening quote's. */
  readKey(raw: string, position: number): void {
    const key = envelopeKey(raw, position);
    if (key === 'items') {
      if (this.#sawItems) throw new DecodeError('list body has more than one items key', raw, position);
      this.#sawItems = true;
    }
    this.#key = key;
  }

  /** Records the JSON `text` of the last key's value, which began at `position`; returns that key. Throws DecodeError. */
  readValue(text: string, position: number): string {
    const key = this.#key;
    setEnvelopeField(this.#fields, key, text, position);
    if (key === 'metadata') this.#metadataFirst = !this.#sawItems;
    return key;
  }
}
