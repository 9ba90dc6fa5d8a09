import { isRecord, jsonCopy, type Node } from './node.js';

// Defaulting as apiextensions-apiserver's structural defaulting does it, top-down: a property that
// is absent, or null where the schema is not nullable, gets a deep copy of its default before the
// walk descends into it, so a default object is itself defaulted below; a null map value or list
// item is replaced by the additionalProperties/items default the same way.

type Json = Record<string, unknown>;

function isNonNullableNull(value: unknown, node: Node | undefined): node is Node {
  return value === null && node !== undefined && !node.nullable;
}

/** Applies the schema's defaults to `value` in place. */
export function applyDefaults(value: unknown, node: Node | undefined): void {
  if (node === undefined) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (isNonNullableNull(value[i], node.items) && node.items?.hasDefault === true) value[i] = jsonCopy(node.items.default);
      applyDefaults(value[i], node.items);
    }
    return;
  }
  if (!isRecord(value)) return;
  const obj = value as Json;
  for (const [key, prop] of node.properties ?? []) {
    if (!prop.hasDefault) continue;
    if (!(key in obj) || isNonNullableNull(obj[key], prop)) obj[key] = jsonCopy(prop.default);
  }
  for (const key of Object.keys(obj)) {
    const prop = node.properties?.get(key);
    if (prop !== undefined) applyDefaults(obj[key], prop);
    else if (typeof node.additional === 'object') {
      const extra = node.additional;
      if (isNonNullableNull(obj[key], extra) && extra.hasDefault) obj[key] = jsonCopy(extra.default);
      applyDefaults(obj[key], extra);
    }
  }
}
