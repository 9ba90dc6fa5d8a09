// The checks on each item of a LIST body once it is parsed: it must be a JSON
// object. Internal: the list decoder's item parsing.

import { DecodeError } from './errors/DecodeError.js';

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
