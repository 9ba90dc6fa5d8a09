import { childOf, isRecord, type Node } from './node.js';

// Pruning as apiextensions-apiserver's structural pruning does it: a field the schema does not
// specify is dropped, unless a node above says x-kubernetes-preserve-unknown-fields; apiVersion,
// kind and metadata of the object itself and of every x-kubernetes-embedded-resource are kept, with
// metadata cut down to the fields ObjectMeta has. The walk mutates a copy the caller owns.

/** The fields of ObjectMeta: what survives the server's decoding of `metadata` into its Go struct. */
const OBJECT_META_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

const META_FIELDS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

type Json = Record<string, unknown>;

/** Prunes `value` against `node` (undefined: no schema, so every map key under it goes). */
function pruneValue(value: unknown, node: Node | undefined): void {
  if (node?.preserveUnknown === true) {
    keepUnknown(value, node);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) pruneValue(item, node?.items);
    return;
  }
  if (!isRecord(value)) return;
  const obj = value as Json;
  for (const key of Object.keys(obj)) {
    if (node?.embedded === true && META_FIELDS.has(key)) continue;
    const prop = node?.properties?.get(key);
    if (prop !== undefined) pruneValue(obj[key], prop);
    else if (node !== undefined && node.additional !== undefined && node.additional !== false) {
      pruneValue(obj[key], typeof node.additional === 'object' ? node.additional : undefined);
    } else delete obj[key];
  }
}

/** Below x-kubernetes-preserve-unknown-fields: unknown keys stay, known ones are pruned by their own schema. */
function keepUnknown(value: unknown, node: Node): void {
  if (Array.isArray(value)) {
    if (node.items !== undefined) for (const item of value) keepUnknown(item, node.items);
    return;
  }
  if (!isRecord(value)) return;
  const obj = value as Json;
  for (const key of Object.keys(obj)) {
    if (node.embedded && META_FIELDS.has(key)) continue;
    const child = childOf(node, key);
    if (child !== undefined) pruneValue(obj[key], child);
  }
}

/** A non-nullable field set to null with no default to replace it is removed rather than refused. */
function pruneNulls(value: unknown, node: Node | undefined): void {
  if (Array.isArray(value)) {
    for (const item of value) pruneNulls(item, node?.items);
    return;
  }
  if (!isRecord(value)) return;
  const obj = value as Json;
  for (const key of Object.keys(obj)) {
    const child = childOf(node, key);
    if (obj[key] === null && child !== undefined && !child.nullable && !child.hasDefault) delete obj[key];
    else pruneNulls(obj[key], child);
  }
}

/** Cuts `metadata` of an embedded resource down to ObjectMeta's fields. */
function coerceMetadata(value: unknown, node: Node | undefined, isRoot: boolean): void {
  if (Array.isArray(value)) {
    for (const item of value) coerceMetadata(item, node?.items, false);
    return;
  }
  if (!isRecord(value) || node === undefined) return;
  const obj = value as Json;
  if (isRoot || node.embedded) {
    const meta = obj['metadata'];
    if (isRecord(meta)) for (const key of Object.keys(meta)) if (!OBJECT_META_FIELDS.has(key)) delete (meta as Json)[key];
  }
  for (const key of Object.keys(obj)) {
    if ((isRoot || node.embedded) && META_FIELDS.has(key)) continue;
    coerceMetadata(obj[key], childOf(node, key), false);
  }
}

/**
 * Prunes `obj` in place against the root schema: unknown fields, non-nullable nulls without a
 * default, and metadata fields ObjectMeta does not have. The root is treated as an embedded
 * resource, as the server does.
 */
export function pruneObject(obj: Json, root: Node): void {
  const asEmbedded: Node = root.embedded ? root : { ...root, embedded: true };
  pruneValue(obj, asEmbedded);
  pruneNulls(obj, root);
  coerceMetadata(obj, root, true);
}
