import { createPatch, type Operation as PatchOperation } from 'rfc6902';
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
  return { ops: createPatch(original, wanted) };
}
