// How errors name an object: by kind and namespace/name when it has them,
// else by a short excerpt of its JSON. Internal.

const MAX_EXCERPT = 120;

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
  let text: string;
  try {
    text = JSON.stringify(obj) ?? String(obj);
  } catch {
    text = Object.prototype.toString.call(obj);
  }
  return text.length > MAX_EXCERPT ? `${text.slice(0, MAX_EXCERPT)}…` : text;
}

/** The message of a thrown value, whatever was thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
