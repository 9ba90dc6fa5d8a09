import { jsonText } from '../../store/jsonText.js';
import { deepFreeze } from '../../store/deepFreeze.js';

// The JSON text of stored subtrees, by identity. A write usually keeps most of the object it replaces (a
// pod's spec on a status update), and serialising that again is what limits the write rate; a subtree is
// frozen when its text is kept, so the text never goes stale. Only the sections of the object (metadata,
// spec, status …) are looked up: deeper, the bookkeeping costs more than it saves (measured).
const subtreeJson = new WeakMap<object, string>();

/**
 * `JSON.stringify(section)` of one top-level section of a stored object
 * (its metadata, spec…), from the text kept when the object was stored.
 */
export function sectionJson(section: object): string {
  return subtreeJson.get(section) ?? jsonText(section);
}

/** `JSON.stringify(obj)` of a stored object, reusing the text of sections kept from the version before. */
export function serialize(obj: Record<string, unknown>): string {
  let out = '{';
  for (const k in obj) {
    const v = obj[k];
    let text: string | undefined;
    if (v !== null && typeof v === 'object') {
      text = subtreeJson.get(v);
      if (text === undefined) {
        text = jsonText(v);
        subtreeJson.set(deepFreeze(v), text);
      }
    } else {
      text = JSON.stringify(v);
      if (text === undefined) continue; // undefined and functions are left out, as JSON.stringify does
    }
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${text}`;
  }
  return `${out}}`;
}
