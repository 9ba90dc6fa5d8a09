import type { StoredObject } from '../storage/history.js';
import type { MetaVersion } from './negotiate.js';
import type { ResourceType } from '../storage/resources.js';
import { sectionJson } from '../storage/serialize.js';

/**
 * An object as PartialObjectMetadata: kind, apiVersion and its whole
 * metadata, as kube-apiserver's conversion copies it. The metadata's JSON
 * is the text kept when the object was stored, so this costs a
 * concatenation, not a serialisation.
 */
export function partialJson(o: StoredObject, view: MetaVersion): string {
  return `{"kind":"PartialObjectMetadata","apiVersion":"${view}","metadata":${sectionJson(o.obj['metadata'] as object)}}`;
}

/** PartialObjectMetadata of an object that is not stored (a DELETED event's stamped copy). */
export function partialJsonOf(obj: Record<string, unknown>, view: MetaVersion): string {
  return `{"kind":"PartialObjectMetadata","apiVersion":"${view}","metadata":${JSON.stringify(obj['metadata'])}}`;
}

/** The JSON of a stored object in a view: as stored, or as PartialObjectMetadata. */
export function objectJson(o: StoredObject, view: MetaVersion | undefined): string {
  return view === undefined ? o.json : partialJson(o, view);
}

/**
 * A list body: the resource's list kind, or PartialObjectMetadataList with
 * the same list metadata (resourceVersion, continue, remainingItemCount).
 *
 * @param listMeta the members of the list's metadata, already JSON.
 * @param items the items, already JSON in the list's view.
 */
export function listJson(type: ResourceType, view: MetaVersion | undefined, listMeta: readonly string[], items: readonly string[]): string {
  const kind = view === undefined ? type.listKind : 'PartialObjectMetadataList';
  const apiVersion = view ?? type.apiVersion;
  return `{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":{${listMeta.join(',')}},"items":[${items.join(',')}]}`;
}
