import { createPatch, type Operation as PatchOperation, type Pointer } from 'rfc6902';
import type { KubeObject } from '../store/types.js';

/** Fields admission may not change: kube-apiserver refuses a patch that renames, moves or retypes the object. */
const FIXED: readonly (readonly string[])[] = [['metadata', 'name'], ['metadata', 'namespace'], ['metadata', 'uid'], ['apiVersion'], ['kind']];

function at(obj: unknown, path: readonly string[]): unknown {
  let node = obj;
  for (const key of path) node = typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}

/** The JSON a returned object is sent as: what JSON.stringify keeps (an `undefined` field is absent). Throws on a cycle or a BigInt. */
export function asJson(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * rfc6902 diffs two arrays by edit distance, an n×m table filled by recursion: quadratic in time and memory,
 * and as deep as the arrays are long. Past this many cells a same-length pair is diffed index by index and any
 * other pair replaced whole, so an object with a long list cannot exhaust the server.
 */
const MAX_ARRAY_CELLS = 4096;

function boundedDiff(input: unknown, output: unknown, ptr: Pointer): PatchOperation[] | undefined {
  if (!Array.isArray(input) || !Array.isArray(output) || input.length * output.length <= MAX_ARRAY_CELLS) return undefined;
  if (input.length !== output.length) return [{ op: 'replace', path: ptr.toString(), value: output }];
  const base = ptr.toString();
  return input.flatMap((item: unknown, i) => createPatch(item, output[i], boundedDiff).map((op) => ({ ...op, path: `${base}/${i}${op.path}` }) as PatchOperation));
}

/** What a mutating handler's object changes, as an RFC 6902 patch, or the fixed field it changes. */
export type PatchResult = { readonly ops: readonly PatchOperation[] } | { readonly forbidden: string };

/**
 * Diffs the object as sent against the one the handler wants, refusing a
 * change of a field admission may not touch (compared by value, so a
 * replaced `metadata` that keeps the name is fine).
 */
export function admissionPatch(original: KubeObject, wanted: unknown): PatchResult {
  for (const path of FIXED) {
    if (JSON.stringify(at(original, path)) !== JSON.stringify(at(wanted, path))) return { forbidden: `/${path.join('/')}` };
  }
  return { ops: createPatch(original, wanted, boundedDiff) };
}
