import { isRecord, jsonEqual } from './objectRules.js';

// Field sets as server-side apply counts ownership: the leaves of an object, each named by its path of
// map keys. The simplification (written down in the README): lists are atomic, so a list is one leaf
// whatever it holds, and an empty map is a leaf of its own.

/** One field: the map keys from the root of the object to it. */
export type FieldPath = readonly string[];

/** A set of fields, keyed by their encoded path so two equal paths are one member. */
export type FieldSet = Map<string, FieldPath>;

/** Which part of an object a write may own: everything but the status, or only the status. */
export type FieldScope = 'main' | 'status' | 'all';

/** Metadata the server owns: never part of anyone's field set. */
const SERVER_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
  'managedFields',
  'generateName',
]);

export function pathKey(path: FieldPath): string {
  return JSON.stringify(path);
}

/** `.spec.replicas`, as kube-apiserver names a field in a conflict. */
export function pathText(path: FieldPath): string {
  return path.map((p) => `.${p}`).join('');
}

/** True when one path is the other or lies inside it: owning one then touches the other. */
export function overlaps(a: FieldPath, b: FieldPath): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The value at `path`, or undefined. */
export function valueAt(obj: unknown, path: FieldPath): unknown {
  let cur = obj;
  for (const seg of path) {
    if (!isRecord(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

/** Sets `value` at `path` in a mutable object, creating the maps on the way. */
export function setAt(obj: Record<string, unknown>, path: FieldPath, value: unknown): void {
  let cur = obj;
  for (let i = 0; i < path.length - 1; i++) {
    const seg = path[i] as string;
    const next = cur[seg];
    if (!isRecord(next)) cur[seg] = {};
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[path[path.length - 1] as string] = value;
}

/**
 * Removes the field at `path` from a mutable object, then the maps that
 * removal left empty on the way up (never `metadata` itself).
 */
export function removeAt(obj: Record<string, unknown>, path: FieldPath): void {
  const parents: Record<string, unknown>[] = [];
  let cur: unknown = obj;
  for (let i = 0; i < path.length - 1; i++) {
    if (!isRecord(cur)) return;
    parents.push(cur);
    cur = cur[path[i] as string];
  }
  if (!isRecord(cur)) return;
  delete cur[path[path.length - 1] as string];
  for (let i = path.length - 2; i >= 0; i--) {
    const holder = parents[i] as Record<string, unknown>;
    const seg = path[i] as string;
    const child = holder[seg];
    if (i === 0 && seg === 'metadata') return;
    if (!isRecord(child) || Object.keys(child).length > 0) return;
    delete holder[seg];
  }
}

/** Whether a top-level field (or a metadata field) can be owned within `scope`. */
function inScope(path: FieldPath, scope: FieldScope): boolean {
  const top = path[0];
  if (top === 'apiVersion' || top === 'kind') return false;
  if (top === 'metadata' && path.length > 1 && SERVER_METADATA.has(path[1] as string)) return false;
  if (scope === 'status') return top === 'status';
  if (scope === 'main') return top !== 'status';
  return true;
}

/** Every field of `obj` within `scope`: its leaves (scalars, lists, empty maps). */
export function leaves(obj: Record<string, unknown>, scope: FieldScope): FieldSet {
  const out: FieldSet = new Map();
  // An explicit stack, children pushed last-first so fields come out in the object's order: kube-apiserver
  // holds objects nested 10,000 deep, past what recursion can walk.
  const stack: [unknown, string[]][] = [[obj, []]];
  while (stack.length > 0) {
    const [value, path] = stack.pop() as [unknown, string[]];
    if (path.length > 0 && !inScope(path, scope)) continue;
    if (isRecord(value) && (Object.keys(value).length > 0 || path.length === 0)) {
      const children = Object.entries(value).filter(([, v]) => v !== undefined);
      for (let i = children.length - 1; i >= 0; i--) {
        const [k, v] = children[i] as [string, unknown];
        stack.push([v, [...path, k]]);
      }
      continue;
    }
    if (path.length > 0 && !(path.length === 1 && path[0] === 'metadata')) out.set(pathKey(path), path);
  }
  return out;
}

/** The fields of `next` that are new or hold another value than in `prev`. */
export function changedFields(prev: Record<string, unknown> | undefined, next: Record<string, unknown>, scope: FieldScope): FieldSet {
  const out: FieldSet = new Map();
  for (const [key, path] of leaves(next, scope)) {
    if (prev === undefined || !jsonEqual(valueAt(prev, path), valueAt(next, path))) out.set(key, path);
  }
  return out;
}

/** `fieldsV1` of a set: nested `f:<key>` maps, `{}` at each leaf. */
export function toFieldsV1(set: FieldSet): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const paths = [...set.values()].sort((a, b) => (pathKey(a) < pathKey(b) ? -1 : 1));
  for (const path of paths) {
    let cur = root;
    for (const seg of path) {
      const key = `f:${seg}`;
      if (!isRecord(cur[key])) cur[key] = {};
      cur = cur[key] as Record<string, unknown>;
    }
  }
  return root;
}

/**
 * The set a `fieldsV1` value describes. What this simulator wrote reads back
 * exactly; the list-item keys a real server writes (`k:`, `v:`, `i:`) are
 * folded into their list, which is atomic here.
 */
export function fromFieldsV1(fields: unknown): FieldSet {
  const out: FieldSet = new Map();
  // An explicit stack, children pushed last-first to keep their order: fieldsV1 nests as deep as its object.
  const stack: [unknown, string[]][] = [[fields, []]];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string[]];
    const children = isRecord(node) ? Object.keys(node).filter((k) => k.startsWith('f:')) : [];
    const folded = isRecord(node) && Object.keys(node).some((k) => k === '.' || k.startsWith('k:') || k.startsWith('v:') || k.startsWith('i:'));
    if (path.length > 0 && (children.length === 0 || folded)) out.set(pathKey(path), path);
    for (let i = children.length - 1; i >= 0; i--) {
      const k = children[i] as string;
      stack.push([(node as Record<string, unknown>)[k], [...path, k.slice(2)]]);
    }
  }
  return out;
}
