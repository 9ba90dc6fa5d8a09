import { duplicate, invalid, type FieldCause } from './causes.js';
import { child, index, key } from './fieldPath.js';
import { goJson } from './goText.js';
import { isRecord, type Node } from './node.js';

// x-kubernetes-list-type: a `set` must not repeat an item and a `map` must not repeat a key (the
// list-map-keys' values); each repeat is a `Duplicate value` at the index of its second occurrence,
// as the server reports them (a third occurrence is not reported again).

/** Indices of the second occurrence of each repeated value, compared as their JSON. */
function repeats(values: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  values.forEach((v, i) => {
    const id = v === UNSPECIFIED ? '\u0000unspecified' : goJson(v);
    const times = seen.get(id) ?? 0;
    if (times === 1) out.push(i);
    seen.set(id, times + 1);
  });
  return out;
}

const UNSPECIFIED = Symbol('unspecified key');

function checkMap(path: string, node: Node, list: readonly unknown[]): FieldCause[] {
  const bad = list.findIndex((x) => x !== null && !isRecord(x));
  if (bad >= 0) return [invalid(index(path, bad), list[bad], 'must be an object for an array of list-type map')];
  if (list.length <= 1) return [];
  const keys = node.listMapKeys;
  if (keys.length === 1) {
    const [field = ''] = keys;
    const values = list.map((x) => (isRecord(x) && field in x ? x[field] : UNSPECIFIED));
    return repeats(values).map((i) => {
      const v = values[i];
      return duplicate(index(path, i), v === UNSPECIFIED ? {} : { [field]: v });
    });
  }
  const composite = list.map((x) => {
    const k: Record<string, unknown> = {};
    if (isRecord(x)) for (const f of keys) if (f in x) k[f] = x[f];
    return k;
  });
  return repeats(composite).map((i) => duplicate(index(path, i), composite[i]));
}

function checkList(path: string, node: Node, list: readonly unknown[]): FieldCause[] {
  const out: FieldCause[] = [];
  if (node.listType === 'set' && list.length > 1) out.push(...repeats(list).map((i) => duplicate(index(path, i), list[i])));
  if (node.listType === 'map') out.push(...checkMap(path, node, list));
  if (node.items !== undefined) list.forEach((v, i) => out.push(...checkValue(index(path, i), node.items, v)));
  return out;
}

function checkValue(path: string, node: Node | undefined, value: unknown): FieldCause[] {
  if (node === undefined) return [];
  if (Array.isArray(value)) return checkList(path, node, value);
  if (isRecord(value)) return checkObject(path, node, value);
  return [];
}

function checkObject(path: string, node: Node, obj: Readonly<Record<string, unknown>>): FieldCause[] {
  const out: FieldCause[] = [];
  if (typeof node.additional === 'object') {
    for (const [k, v] of Object.entries(obj)) out.push(...checkValue(key(path, k), node.additional, v));
  }
  for (const [k, v] of Object.entries(obj)) {
    const prop = node.properties?.get(k);
    if (prop !== undefined) out.push(...checkValue(child(path, k), prop, v));
  }
  return out;
}

/** The `Duplicate value` causes of every set and map list in `obj`. */
export function checkListTypes(obj: Readonly<Record<string, unknown>>, root: Node): FieldCause[] {
  return checkObject('', root, obj);
}
