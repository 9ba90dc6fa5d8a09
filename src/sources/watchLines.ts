// The complete lines of one chunk of a watch body, each parsed only when
// the reader reaches it. Internal: the HTTP source's watchBatches yields these.

import { DecodeError } from '../errors/api/DecodeError.js';
import type { ApiStatus } from '../errors/api/KubeApiError.js';
import type { Redact } from '../errors/api/wireText.js';
import { type CachedReader, NOTHING, PLACEHOLDER } from './cachedParts.js';
import { errorFromStatus } from './httpErrors.js';
import { LBRACE } from './jsonBytes.js';
import { EVENT_METADATA, managedFieldsSpan, textWithout } from './managedFieldsStrip.js';
import type { WatchBatch, WatchEvent } from './types.js';

/**
 * The events of one chunk, decoded one by one as {@link WatchLines.at} asks
 * for them, in order: the first event of a chunk reaches the informer (and
 * its handlers) after one line's parse rather than after the whole chunk's,
 * and each object is frozen and stored while its bytes are still in the
 * cache. A line that does not decode throws when it is reached, after the
 * events before it, as an eager decoder delivers them before throwing.
 */
export class WatchLines<T> implements WatchBatch<T> {
  /** A line that began in earlier chunks, decoded when it was completed. */
  readonly #head: WatchEvent<T> | undefined;
  readonly #buf: Buffer;
  /** Start and end (exclusive, the newline) of each complete line of `#buf`, blank lines left out. */
  readonly #bounds: readonly number[];
  /** Body offset of `#buf[0]`, for error positions. */
  readonly #base: number;
  readonly #strip: boolean;
  readonly #redact: Redact;
  readonly #cached: CachedReader | undefined;
  readonly length: number;

  constructor(head: WatchEvent<T> | undefined, buf: Buffer, bounds: readonly number[], base: number, strip: boolean, redact: Redact, cached: CachedReader | undefined) {
    this.#head = head;
    this.#buf = buf;
    this.#bounds = bounds;
    this.#base = base;
    this.#strip = strip;
    this.#redact = redact;
    this.#cached = cached;
    this.length = (head === undefined ? 0 : 1) + bounds.length / 2;
  }

  /**
   * The event at `index`, parsed now.
   *
   * @param index from 0 to `length - 1`
   * @returns the event (undefined outside the batch, as an array's `at`); throws a DecodeError for a line that is
   *   no event, a KubeApiError for an ERROR event
   */
  at(index: number): WatchEvent<T> | undefined {
    let i = index;
    if (this.#head !== undefined) {
      if (i === 0) return this.#head;
      i--;
    }
    if (!Number.isInteger(i) || i < 0 || 2 * i >= this.#bounds.length) return undefined;
    const start = this.#bounds[2 * i] as number;
    const end = this.#bounds[2 * i + 1] as number;
    return decodeBytes<T>(this.#buf, start, end, this.#base + start, this.#strip, this.#redact, this.#cached);
  }
}

/** Whether `buf[start, end)` holds only JSON whitespace (or nothing). */
export function isBlankBytes(buf: Buffer, start: number, end: number): boolean {
  if (start < end && buf[start] === LBRACE) return false;
  for (let i = start; i < end; i++) {
    const c = buf[i] as number;
    if (c !== 0x20 && c !== 0x0d && c !== 0x09) return false;
  }
  return true;
}

/**
 * One line's event, with its managedFields left out when asked, and, given
 * the cache's objects, the unchanged members of a MODIFIED event's object
 * taken from the cached one instead of parsed (PF-50); when the shortened
 * text does not decode, the line is decoded as it came, so that an error
 * shows the bytes the server sent.
 */
export function decodeBytes<T>(buf: Buffer, start: number, end: number, position: number, strip: boolean, redact: Redact, cached?: CachedReader): WatchEvent<T> {
  if (cached !== undefined) {
    const taken = cached.read(buf, start, end, strip);
    if (taken === NOTHING) return decodeText<T>(buf.toString('utf8', start, end), position, redact);
    if (taken !== undefined) {
      try {
        const event = decodeText<T>(taken.text, position, redact);
        const object = (event as { object?: unknown }).object as Record<string, unknown> | undefined;
        // The parse put the placeholder where each part goes, under the same key and in its place among the others,
        // unless a later duplicate of the key won.
        if (typeof object === 'object' && object !== null) {
          for (let k = 0; k < taken.keys.length; k++) {
            const key = taken.keys[k] as string;
            if (object[key] === PLACEHOLDER) object[key] = taken.parts[k];
          }
        }
        return event;
      } catch (err) {
        if (!(err instanceof DecodeError)) throw err;
      }
    }
  }
  if (strip) {
    const span = managedFieldsSpan(buf, start, end, EVENT_METADATA);
    const text = span === undefined ? undefined : textWithout(buf, start, end, span);
    if (text !== undefined) {
      try {
        return decodeText<T>(text, position, redact);
      } catch (err) {
        // An ERROR event is as it is, stripped or not; anything else is decoded again as it came.
        if (!(err instanceof DecodeError)) throw err;
      }
    }
  }
  return decodeText<T>(buf.toString('utf8', start, end), position, redact);
}

/** One line of text as an event: a DecodeError for what is no event object, the KubeApiError of an ERROR event. */
export function decodeText<T>(text: string, position: number, redact: Redact): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new DecodeError('watch line is not valid JSON', text, position, { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DecodeError('watch line is not an event object', text, position);
  }
  const { type, object } = parsed as { type?: unknown; object?: unknown };
  if (type === 'ERROR') {
    const status = typeof object === 'object' && object !== null && !Array.isArray(object) ? (object as ApiStatus) : undefined;
    // A code that is no HTTP status (absent, 0, 600, 3.5, 1e999 read as Infinity) would make an error nobody can
    // classify; such an ERROR event is a server fault like any unexplained one.
    const code = typeof status?.code === 'number' && Number.isInteger(status.code) && status.code >= 100 && status.code <= 599 ? status.code : 500;
    throw errorFromStatus(code, status, { what: 'watch ERROR event', redact });
  }
  // A parseable event is passed on as it is, even one without metadata.name or of an unknown type: the
  // consumer reports and skips it. Throwing here would end the watch, and resuming from the last
  // resourceVersion would replay the same event for ever.
  return parsed as WatchEvent<T>;
}
