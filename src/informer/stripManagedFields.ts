/**
 * Drops `metadata.managedFields` (server-side-apply bookkeeping, often a third
 * of an object) before an object is cached; the informer's default transform.
 */
export function stripManagedFields<T>(obj: T): T {
  const holder = obj as { metadata?: Record<string, unknown> } | null;
  const meta = holder?.metadata;
  if (meta === undefined || meta === null || !('managedFields' in meta)) return obj;
  if (!Object.isFrozen(holder)) {
    // A copy without the field rather than `delete`, which turns the metadata of every cached object into a slow,
    // larger dictionary-mode object in V8.
    const { managedFields: _dropped, ...rest } = meta;
    (holder as { metadata?: Record<string, unknown> }).metadata = rest;
  } else if (!Object.isFrozen(meta)) delete meta.managedFields;
  return obj;
}
