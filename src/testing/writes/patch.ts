import { jsonText } from '../../store/jsonText.js';
import { badRequest, StatusError } from '../server/status.js';
import { isRecord, jsonEqual } from './objectRules.js';

/**
 * Applies an RFC 7386 JSON merge patch: objects merge key by key, `null`
 * deletes, anything else (arrays included) replaces.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const root: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  // An explicit stack of (copy being patched, patch for it): objects nest 10,000 deep, past what recursion can walk.
  const stack: [Record<string, unknown>, Record<string, unknown>][] = [[root, patch]];
  while (stack.length > 0) {
    const [out, p] = stack.pop() as [Record<string, unknown>, Record<string, unknown>];
    for (const [k, v] of Object.entries(p)) {
      if (v === null) delete out[k];
      else if (!isRecord(v)) out[k] = v;
      else {
        const inner = out[k];
        const child: Record<string, unknown> = isRecord(inner) ? { ...inner } : {};
        out[k] = child;
        stack.push([child, v]);
      }
    }
  }
  return root;
}

function unescapePointer(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(pointer: unknown): string[] {
  if (typeof pointer !== 'string' || (pointer !== '' && !pointer.startsWith('/'))) {
    throw badRequest(`json patch: invalid path ${JSON.stringify(pointer)}`);
  }
  return pointer === '' ? [] : pointer.slice(1).split('/').map(unescapePointer);
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(v !== null && typeof v === 'object' ? jsonText(v) : JSON.stringify(v)) as T);
}

function failed(message: string): StatusError {
  return new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${message}`);
}

function get(doc: unknown, path: string[]): unknown {
  let cur = doc;
  for (const seg of path) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isRecord(cur) && Object.hasOwn(cur, seg)) cur = cur[seg];
    else return undefined;
  }
  return cur;
}

/** Parent container and last segment, checking that the parent exists. */
function parentOf(doc: unknown, path: string[], op: string): [Record<string, unknown> | unknown[], string] {
  const parent = get(doc, path.slice(0, -1));
  if (!isRecord(parent) && !Array.isArray(parent)) throw failed(`${op} operation does not apply: doc is missing path: /${path.join('/')}`);
  return [parent, path[path.length - 1] as string];
}

function arrayIndex(arr: unknown[], seg: string, forInsert: boolean, op: string): number {
  if (forInsert && seg === '-') return arr.length;
  const i = Number(seg);
  const max = forInsert ? arr.length : arr.length - 1;
  if (!/^(0|[1-9][0-9]*)$/.test(seg) || i > max) throw failed(`${op} operation does not apply: index out of range: ${seg}`);
  return i;
}

function add(doc: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [parent, last] = parentOf(doc, path, 'add');
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true, 'add'), 0, value);
  else parent[last] = value;
  return doc;
}

function remove(doc: unknown, path: string[], op = 'remove'): unknown {
  if (path.length === 0) return undefined;
  const [parent, last] = parentOf(doc, path, op);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false, op), 1);
  else {
    if (!Object.hasOwn(parent, last)) throw failed(`${op} operation does not apply: doc is missing path: /${path.join('/')}`);
    delete parent[last];
  }
  return doc;
}

/** Applies an RFC 6902 JSON patch (add, remove, replace, move, copy, test) to a copy of `target`. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('json patch: the patch must be an array of operations');
  let doc = clone(target);
  for (const raw of ops) {
    if (!isRecord(raw)) throw badRequest('json patch: every operation must be an object');
    const path = parsePointer(raw['path']);
    switch (raw['op']) {
      case 'add':
        doc = add(doc, path, clone(raw['value']));
        break;
      case 'remove':
        doc = remove(doc, path);
        break;
      case 'replace':
        if (path.length > 0 && get(doc, path) === undefined) throw failed(`replace operation does not apply: doc is missing key: /${path.join('/')}`);
        doc = remove(doc, path, 'replace');
        doc = add(doc, path, clone(raw['value']));
        break;
      case 'move': {
        const from = parsePointer(raw['from']);
        const value = get(doc, from);
        if (value === undefined) throw failed(`move operation does not apply: doc is missing from path: ${String(raw['from'])}`);
        doc = remove(doc, from, 'move');
        doc = add(doc, path, value);
        break;
      }
      case 'copy': {
        const value = get(doc, parsePointer(raw['from']));
        if (value === undefined) throw failed(`copy operation does not apply: doc is missing from path: ${String(raw['from'])}`);
        doc = add(doc, path, clone(value));
        break;
      }
      case 'test':
        if (!jsonEqual(get(doc, path), raw['value'])) throw failed(`testing value /${path.join('/')} failed`);
        break;
      default:
        throw badRequest(`json patch: unexpected operation ${JSON.stringify(raw['op'])}`);
    }
  }
  return doc;
}

/**
 * `base` patched as `contentType` says (a JSON patch, or a merge patch for the merge and strategic-merge types),
 * keeping `rv` as its resourceVersion where the patched object has none; undefined for any other content type.
 */
export function patchedObject(base: unknown, contentType: string, patch: unknown, rv: unknown): Record<string, unknown> | undefined {
  let next: unknown;
  if (contentType === 'application/json-patch+json') next = jsonPatch(base, patch);
  else if (contentType === 'application/merge-patch+json' || contentType === 'application/strategic-merge-patch+json') {
    if (!isRecord(patch)) throw badRequest('a merge patch must be a JSON object');
    next = mergePatch(base, patch);
  } else return undefined;
  if (!isRecord(next)) throw badRequest('the patched object is not a JSON object');
  const meta = isRecord(next['metadata']) ? next['metadata'] : {};
  const keep = meta['resourceVersion'] === undefined || meta['resourceVersion'] === null || meta['resourceVersion'] === '';
  return keep ? { ...next, metadata: { ...meta, resourceVersion: rv } } : next;
}
