// The items of a LIST body, once the list decoder has found where each one
// begins and ends: parsed together per chunk, managedFields left out, checked
// to be JSON objects, and given the list's type when they have none.
// Internal: the list decoder's item half.

import { DecodeError } from '../errors/api/DecodeError.js';
import { ITEM_METADATA, textWithout, textWithoutManagedFields } from './managedFieldsStrip.js';

/**
 * Parses the items a {@link ListDecoder} delimits. Items wholly inside one
 * chunk are parsed together, as one JSON array over their contiguous bytes
 * (only commas and whitespace lie between them), which saves a string and
 * a parse call per item; an item that spans chunks is joined and parsed on
 * its own.
 */
export class ListItems<T> {
  /** Start/end pairs of the items completed in this chunk and not yet parsed. */
  #batch: number[] = [];
  /** When stripping: the range of each of those items' managedFields, as a from/to pair (-1 when it has none). */
  #cuts: number[] = [];
  #batchStart = 0;
  #batchEnd = 0;
  /** The item type when the batch began: an envelope `kind` read later in the same chunk comes after these items. */
  #batchType: ItemType | undefined;
  /** Leave each item's `metadata.managedFields` out, unparsed. */
  readonly #strip: boolean;
  /** The items' apiVersion and kind from the envelope's, once both are read (P-15); items that come before them keep what they have. */
  type: ItemType | undefined;

  constructor(stripManagedFields: boolean) {
    this.#strip = stripManagedFields;
  }

  /**
   * An item lies wholly in the current chunk, from `start` to `end`
   * (exclusive); it is parsed at the next {@link flush}. When managedFields
   * are stripped, the scan that found the item found them too: `cutFrom` and
   * `cutTo` are the range `managedFieldsSpan` gives for it, or -1 when there
   * is none.
   */
  add(start: number, end: number, cutFrom: number, cutTo: number): void {
    if (this.#batch.length === 0) {
      this.#batchStart = start;
      this.#batchType = this.type;
    }
    this.#batch.push(start, end);
    if (this.#strip) this.#cuts.push(cutFrom, cutTo);
    this.#batchEnd = end;
  }

  /**
   * Parses the items added since the last flush, in order, into `out`.
   *
   * @param buf The chunk the items lie in.
   * @param offset Where `buf` begins in the body, for error positions.
   */
  flush(buf: Buffer, offset: number, out: T[]): void {
    const bounds = this.#batch;
    if (bounds.length === 0) return;
    this.#batch = [];
    const cuts = this.#cuts;
    this.#cuts = [];
    let parsed: unknown[] | undefined;
    const stripped = this.#strip ? textWithout(buf, this.#batchStart, this.#batchEnd, cuts) : undefined;
    try {
      parsed = JSON.parse(`[${stripped ?? buf.toString('utf8', this.#batchStart, this.#batchEnd)}]`) as unknown[];
    } catch {
      parsed = undefined;
    }
    for (let k = 0; k < bounds.length; k += 2) {
      const s = bounds[k] as number;
      const e = bounds[k + 1] as number;
      // On a syntax error the items are parsed one by one to find and report the bad one.
      const item = parsed === undefined ? parseItem<T>(buf.toString('utf8', s, e), offset + s) : checkItem<T>(parsed[k / 2], buf, s, e, offset + s);
      out.push(withItemType(item, this.#batchType));
    }
  }

  /** One item joined from the chunks it spanned, which began at body offset `position`. */
  parseJoined(bytes: Buffer, position: number): T {
    const stripped = this.#strip ? textWithoutManagedFields(bytes, 0, bytes.length, [0, bytes.length], ITEM_METADATA) : undefined;
    if (stripped !== undefined) {
      try {
        return withItemType(parseItem<T>(stripped, position), this.type);
      } catch {
        // Parsed whole below, so the error shows the item as it came.
      }
    }
    return withItemType(parseItem<T>(bytes.toString('utf8'), position), this.type);
  }
}

/** Parses one item's JSON `text`; throws DecodeError if it is not valid JSON or not an object. */
export function parseItem<T>(text: string, position: number): T {
  let item: unknown;
  try {
    item = JSON.parse(text);
  } catch (cause) {
    throw new DecodeError('list item is not valid JSON', text, position, { cause });
  }
  if (!isObject(item)) throw new DecodeError('list item is not an object', text, position);
  return item as T;
}

/**
 * An item must be an object; one without metadata.name is passed on, and the
 * store reports it (a KeyError) and skips it. Failing the whole list for it
 * would fail every relist the same way.
 */
export function checkItem<T>(item: unknown, buf: Buffer, start: number, end: number, position: number): T {
  if (!isObject(item)) throw new DecodeError('list item is not an object', buf.toString('utf8', start, Math.min(end, start + 1024)), position);
  return item as T;
}

/** The `apiVersion` and `kind` a list's items have, read from the list's own (`PodList` holds `Pod`s). */
export interface ItemType {
  readonly apiVersion: string;
  readonly kind: string;
}

/**
 * The item type a list envelope names, or undefined while its `kind` and
 * `apiVersion` are not both read, or when its kind names no item type
 * (`List`, `Table`).
 */
export function itemTypeOf(apiVersion: string | undefined, listKind: string | undefined): ItemType | undefined {
  if (apiVersion === undefined || apiVersion === '' || listKind === undefined || !listKind.endsWith('List') || listKind.length <= 4) return undefined;
  return { apiVersion, kind: listKind.slice(0, -4) };
}

/**
 * An item without `apiVersion` and `kind` gets its list's (docs/semantics.md
 * P-15): kube-apiserver leaves both out of the items of a built-in
 * resource's list, and writes them in every watch event, so without this a
 * cached object would carry its kind or not depending on how it arrived.
 * client-go's unstructured decoding fills them in the same way. The copy
 * puts them first, where the server writes them on a single object; an
 * item that has either keeps what it has.
 */
export function withItemType<T>(item: T, type: ItemType | undefined): T {
  if (type === undefined) return item;
  const o = item as Record<string, unknown>;
  if (o['apiVersion'] !== undefined || o['kind'] !== undefined) return item;
  return { apiVersion: type.apiVersion, kind: type.kind, ...o } as T;
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
