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

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
