import type { SchemaError } from './values.js';
import { isRecord } from './node.js';
import { jsonEqual } from './values.js';

// Validation ratcheting (CRDValidationRatcheting, on by default since Kubernetes 1.30): on update, a
// schema error is dropped when the value it is about did not change. Values are matched by path
// through objects and maps; a list item only counts as unchanged when its whole list is.

const SEGMENT = /\.?([^.[\]]+)|\[(\d+)\]/g;

/** The value at a kube-openapi path, or `missing` when the path leads nowhere. */
function at(root: unknown, path: string, other: unknown): { readonly found: boolean; readonly value: unknown } {
  let here = root;
  let there = other;
  for (const m of path.matchAll(SEGMENT)) {
    if (m[2] !== undefined) {
      if (!Array.isArray(here) || !Array.isArray(there) || !jsonEqual(here, there)) return { found: false, value: undefined };
      const i = Number(m[2]);
      here = here[i];
      there = there[i];
    } else {
      const k = m[1] ?? '';
      if (!isRecord(here) || !(k in here)) return { found: false, value: undefined };
      here = here[k];
      there = isRecord(there) ? there[k] : undefined;
    }
  }
  return { found: true, value: here };
}

/** The path of the value an error is about: a Required error is about the object that lacks the field. */
function subject(e: SchemaError): string {
  if (e.code !== 'required') return e.path;
  const dot = e.path.lastIndexOf('.');
  return dot < 0 ? '' : e.path.slice(0, dot);
}

/** Whether the error's value is the same in the new and the old object. */
export function unchanged(e: SchemaError, obj: unknown, old: unknown): boolean {
  const path = subject(e);
  const now = at(obj, path, old);
  const before = at(old, path, obj);
  return now.found && before.found && jsonEqual(now.value, before.value);
}
