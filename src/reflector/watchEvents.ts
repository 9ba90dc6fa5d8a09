/**
 * Turning the source's watch events into reflector events: the checks a
 * custom ListerWatcher may have skipped, and the keys a streaming list folds
 * its initial events by.
 */
import { DecodeError } from '../errors/api/index.js';
import type { WatchEvent } from '../sources/types.js';
import type { KubeObject } from '../store/types.js';
import type { ReflectorEvent } from './types.js';

/** The annotation of the bookmark that ends a streaming list's initial events. */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** A reflector event that comes from one watch event. */
export type WatchedEvent<T> = Exclude<ReflectorEvent<T>, { type: 'Resync' | 'Replace' | 'ReplacePage' | 'ReplaceEnd' }>;

/** The object's metadata, when it has any. */
export function metaOf(obj: unknown): KubeObject['metadata'] {
  if (obj === null || typeof obj !== 'object') return undefined;
  const meta = (obj as KubeObject).metadata;
  return meta !== null && typeof meta === 'object' ? meta : undefined;
}

/** "namespace/name" or "name": how a streaming list's initial state is keyed. */
export function objectKey(obj: unknown): string {
  const meta = metaOf(obj);
  const name = meta?.name ?? '';
  return meta?.namespace ? `${meta.namespace}/${name}` : name;
}

/** True for the bookmark that ends a streaming list's initial events. */
export function isInitialEventsEnd(event: WatchEvent<unknown>): boolean {
  return event.type === 'BOOKMARK' && metaOf(event.object)?.annotations?.[INITIAL_EVENTS_END] === 'true';
}

/** A value as JSON for an error message, or its string form when it has none. */
export function preview(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The source already rejects objects without a name; checked again because a
 * custom ListerWatcher may not, and an object without a name cannot be keyed.
 *
 * @returns the object's resourceVersion ("" when it has none)
 * @throws DecodeError when the object has no name
 */
export function checkObject<T>(event: WatchEvent<T>): string {
  const meta = metaOf(event.object);
  if (meta === undefined || typeof meta.name !== 'string' || meta.name === '') {
    throw new DecodeError(`${event.type} event object without metadata.name`, preview(event), -1);
  }
  const rv: unknown = meta.resourceVersion;
  if (rv !== undefined && rv !== null && typeof rv !== 'string') {
    // Resuming from a number would ask the server for "Infinity" or "1e+21": a 400 that ends the reflector.
    throw new DecodeError(`${event.type} event object with a non-string metadata.resourceVersion`, preview(event), -1);
  }
  return rv ?? '';
}

/**
 * The reflector event for one watch event.
 *
 * @throws DecodeError for a well-formed event that cannot be used (no name, no bookmark resourceVersion, unknown type)
 */
export function toReflectorEvent<T>(event: WatchEvent<T>): WatchedEvent<T> {
  if (event.type === 'BOOKMARK') {
    const rv = metaOf(event.object)?.resourceVersion;
    if (typeof rv !== 'string' || rv === '') {
      throw new DecodeError('BOOKMARK event without metadata.resourceVersion', preview(event), -1);
    }
    return { type: 'Bookmark', resourceVersion: rv };
  }
  const resourceVersion = checkObject(event);
  switch (event.type) {
    case 'ADDED':
      return { type: 'Added', obj: event.object, resourceVersion };
    case 'MODIFIED':
      return { type: 'Modified', obj: event.object, resourceVersion };
    case 'DELETED':
      return { type: 'Deleted', obj: event.object, resourceVersion };
    default:
      throw new DecodeError(`unknown watch event type ${preview((event as { type: unknown }).type)}`, preview(event), -1);
  }
}
