import { Pointer, type Operation as PatchOperation } from 'rfc6902';
import { diffAny, diffArrays, type Diff } from 'rfc6902/diff.js';
import type { KubeObject } from '../store/types.js';
import { isPlainJson } from './plainJson.js';

/** Fields admission may not change: kube-apiserver refuses a patch that renames, moves or retypes the object. */
const FIXED: readonly (readonly string[])[] = [['metadata', 'name'], ['metadata', 'namespace'], ['metadata', 'uid'], ['apiVersion'], ['kind']];

function at(obj: unknown, path: readonly string[]): unknown {
  let node = obj;
  for (const key of path) node = typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}

/** The JSON a returned object is sent as: what JSON.stringify keeps (an `undefined` field is absent). Throws on a cycle or a BigInt. */
export function asJson(value: unknown): unknown {
  // Most handlers return plain data, which is its own JSON: walking it is cheaper than writing and reading it.
  if (isPlainJson(value)) return value;
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * rfc6902 diffs two arrays by edit distance: an n×m table filled by recursion, each cell a full diff of two
 * items (only to learn whether they are equal). Quadratic in cells and multiplied by the items' size, and as deep
 * as the arrays are long. So (WH-13) it runs only when the table is at most this many cells…
 */
const MAX_ARRAY_CELLS = 4096;
/** …and cells × the largest item's JSON length is at most this: the bytes the table's comparisons may touch. */
const MAX_EDIT_BYTES = 1 << 20;

/** Counts of the work a diff did, for specs that check which path a large diff took. */
export interface DiffWork {
  /** Arrays diffed by edit distance. */
  editDistance: number;
  /** Arrays diffed index by index (same length) or replaced whole. */
  indexByIndex: number;
}

/** The longest of the items' JSON texts (a loop: a long list spread into Math.max would overflow the call's arguments). */
function widest(before: readonly string[], after: readonly string[]): number {
  let n = 0;
  for (const t of before) n = Math.max(n, t.length);
  for (const t of after) n = Math.max(n, t.length);
  return n;
}

/** One diff run: item JSON computed once per object (a WeakMap), and at most one edit-distance table at a time. */
function differ(work: DiffWork): Diff {
  const texts = new WeakMap<object, string>();
  const text = (v: unknown): string => {
    if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'undefined';
    let t = texts.get(v);
    if (t === undefined) {
      t = JSON.stringify(v);
      texts.set(v, t);
    }
    return t;
  };
  let inTable = false;
  const full: Diff = (input, output, ptr) => (Array.isArray(input) && Array.isArray(output) ? arrays(input, output, ptr) : diffAny(input, output, ptr, full));
  // An item of a table's row and column: equal JSON is no change, without walking it.
  const item: Diff = (input, output, ptr) => (text(input) === text(output) ? [] : full(input, output, ptr));
  const arrays = (input: unknown[], output: unknown[], ptr: Pointer): PatchOperation[] => {
    const before = input.map(text);
    const after = output.map(text);
    if (before.length === after.length && before.every((t, i) => t === after[i])) return [];
    const cells = input.length * output.length;
    // Inside a table's item no second table runs: its cells would multiply the outer table's.
    if (!inTable && cells <= MAX_ARRAY_CELLS && cells * widest(before, after) <= MAX_EDIT_BYTES) {
      work.editDistance += 1;
      inTable = true;
      try {
        return diffArrays(input, output, ptr, item);
      } finally {
        inTable = false;
      }
    }
    work.indexByIndex += 1;
    if (input.length !== output.length) return [{ op: 'replace', path: ptr.toString(), value: output }];
    return input.flatMap((x, i) => (before[i] === after[i] ? [] : full(x, output[i], ptr.add(String(i)))));
  };
  return full;
}

/** What a mutating handler's object changes, as an RFC 6902 patch, or the fixed field it changes. */
export type PatchResult = { readonly ops: readonly PatchOperation[] } | { readonly forbidden: string };

/**
 * Diffs the object as sent against the one the handler wants, refusing a
 * change of a field admission may not touch (compared by value, so a
 * replaced `metadata` that keeps the name is fine).
 */
export function admissionPatch(original: KubeObject, wanted: unknown, work: DiffWork = { editDistance: 0, indexByIndex: 0 }): PatchResult {
  for (const path of FIXED) {
    if (JSON.stringify(at(original, path)) !== JSON.stringify(at(wanted, path))) return { forbidden: `/${path.join('/')}` };
  }
  return { ops: differ(work)(original, wanted, new Pointer()) };
}
