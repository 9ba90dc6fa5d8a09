// How errors name an object: by kind and namespace/name when it has them,
// else by its kind and top-level keys, never its values. Internal.

/** Keys named at most when an object without a name is described. */
const MAX_KEYS = 8;

/** A short human name for any value, for error messages. */
export function describeObject(obj: unknown): string {
  if (obj !== null && typeof obj === 'object') {
    const o = obj as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
    const meta = o.metadata;
    if (meta !== null && typeof meta === 'object' && typeof meta.name === 'string' && meta.name !== '') {
      const kind = typeof o.kind === 'string' && o.kind !== '' ? `${o.kind} ` : '';
      const ns = typeof meta.namespace === 'string' && meta.namespace !== '' ? `${meta.namespace}/` : '';
      return `${kind}${ns}${meta.name}`;
    }
  }
  // Never the object's contents: a nameless object may be a Secret from a hostile server, and messages reach logs.
  if (obj === null || obj === undefined || typeof obj === 'number' || typeof obj === 'boolean') return String(obj);
  if (typeof obj === 'string') return `a string of ${obj.length} characters`;
  if (Array.isArray(obj)) return `an array of ${obj.length}`;
  if (typeof obj !== 'object') return `a ${typeof obj}`;
  const kind = (obj as { kind?: unknown }).kind;
  let keys: string[];
  try {
    keys = Object.keys(obj);
  } catch {
    keys = [];
  }
  const shown = keys.length > MAX_KEYS ? [...keys.slice(0, MAX_KEYS), '…'] : keys;
  return `${typeof kind === 'string' && /^\w{1,63}$/.test(kind) ? `a ${kind}` : 'an object'} with keys ${JSON.stringify(shown)}`;
}

/** The message of a thrown value, whatever was thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
