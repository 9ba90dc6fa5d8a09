import type { ResourceType } from '../storage/resources.js';

// The versions of one CRD share one store: an object is kept as it was written (its apiVersion that of
// the storage version of the day) and served with the apiVersion of the version it is read through, as
// kube-apiserver's `None` conversion serves it.

/** `{"kind":"…","apiVersion":"…"` or `{"apiVersion":"…"` at the start of a stored object. */
const OBJECT_START = /^(\{(?:"kind":"[^"\\]*",)?)"apiVersion":"[^"\\]*"/;
/** The same, as the object of a watch line. */
const LINE_START = /^(\{"type":"[A-Z]+","object":\{(?:"kind":"[^"\\]*",)?)"apiVersion":"[^"\\]*"/;

function rewrite(text: string, start: RegExp, type: ResourceType, set: (parsed: Record<string, unknown>) => void): string {
  if (type.storage === undefined) return text;
  const want = `"apiVersion":${JSON.stringify(type.apiVersion)}`;
  if (start.test(text)) return text.replace(start, (_m, head: string) => `${head}${want}`);
  // Not in the order the storage writes: rare, so parsed.
  const parsed = JSON.parse(text) as Record<string, unknown>;
  set(parsed);
  return JSON.stringify(parsed);
}

/**
 * A stored object's JSON as served through `type`: with its apiVersion
 * when `type` is one version of a CRD whose versions share a store, else
 * unchanged.
 */
export function inServedVersion(json: string, type: ResourceType): string {
  return rewrite(json, OBJECT_START, type, (o) => {
    o['apiVersion'] = type.apiVersion;
  });
}

/** A watch line (one event, newline-terminated) with its object as served through `type`. */
export function lineInServedVersion(line: string, type: ResourceType): string {
  if (type.storage === undefined || !line.startsWith('{"type":"')) return line;
  const body = line.endsWith('\n') ? line.slice(0, -1) : line;
  const out = rewrite(body, LINE_START, type, (e) => {
    const object = e['object'];
    if (object !== null && typeof object === 'object' && (object as Record<string, unknown>)['kind'] === type.kind) (object as Record<string, unknown>)['apiVersion'] = type.apiVersion;
  });
  return body === line ? out : `${out}\n`;
}
