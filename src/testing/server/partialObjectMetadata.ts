import { jsonText } from '../../store/jsonText.js';
import type { StoredObject } from '../storage/storedObject.js';
import type { MetaVersion } from './negotiate.js';
import type { ResourceType } from '../storage/resources.js';
import { sectionJson, serialize } from '../storage/serialize.js';
import { inServedVersion } from './servedVersion.js';

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
  return `{"kind":"PartialObjectMetadata","apiVersion":"${view}","metadata":${jsonText(obj['metadata'] as object)}}`;
}

/** The JSON of a stored object in a view: as stored (in the version `type` serves), or as PartialObjectMetadata. */
export function objectJson(o: StoredObject, view: MetaVersion | undefined, type: ResourceType): string {
  return view === undefined ? inServedVersion(o.json, type) : partialJson(o, view);
}

/**
 * The JSON of a stored object as an item of a list: as PartialObjectMetadata
 * in that view; for a built-in resource without `apiVersion` and `kind`,
 * which kube-apiserver writes on the list alone (a custom resource's items
 * keep theirs); else as stored.
 */
export function listItemJson(o: StoredObject, type: ResourceType, view: MetaVersion | undefined): string {
  if (view !== undefined) return partialJson(o, view);
  return type.builtIn ? withoutTypeMeta(o) : inServedVersion(o.json, type);
}

/** `apiVersion` then `kind`, or `kind` then `apiVersion`, as the first two members of the stored text, as a stored object has them. */
const TYPE_META_FIRST = /^\{"(apiVersion|kind)":"[^"\\]*","(apiVersion|kind)":"[^"\\]*",/;

/** The stored text without its type: a slice of it when the two come first, else the object serialised without them. */
function withoutTypeMeta(o: StoredObject): string {
  const m = TYPE_META_FIRST.exec(o.json);
  if (m !== null && m[1] !== m[2]) return `{${o.json.slice(m[0].length)}`;
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = o.obj;
  return serialize(rest);
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
