// The index bookkeeping of the indexer: which keys are filed under which
// value of each index, kept exact on every write. Internal.

import { IndexError } from './errors/IndexError.js';
import { typeName } from './typeName.js';
import type { IndexFunc } from './types.js';

/** The values one object is filed under in one index: a lone value, or several distinct ones. Never empty. */
export type Values = string | readonly string[];

/** The keys filed under one value: a lone key needs no Set. Never empty. */
export type Bucket = string | Set<string>;

export interface IndexState<T> {
  readonly name: string;
  readonly fn: IndexFunc<T>;
  /** value → key(s) filed under it. */
  readonly buckets: Map<string, Bucket>;
  /** key → the values it was filed under, so removal is exact even if the stored object changed since. */
  readonly filed: Map<string, Values>;
}

/** Runs an index function and normalises its answer; throws IndexError. */
export function valuesOf<T>(state: { readonly name: string; readonly fn: IndexFunc<T> }, obj: T): Values | undefined {
  let out: unknown;
  try {
    out = state.fn(obj);
  } catch (err) {
    throw new IndexError(state.name, obj, err);
  }
  if (!Array.isArray(out)) throw new IndexError(state.name, obj, new TypeError(`index function returned ${typeName(out)}, expected an array of strings`));
  const n = out.length;
  if (n === 0) return undefined;
  for (let i = 0; i < n; i++) {
    if (typeof out[i] !== 'string') throw new IndexError(state.name, obj, new TypeError(`index function returned ${typeName(out[i])} at position ${i}, expected a string`));
  }
  if (n === 1) return out[0] as string;
  return distinctValues(out as readonly string[]);
}

/** A private de-duplicated copy (the caller's array may change later); quadratic scan for the usual few values. */
function distinctValues(values: readonly string[]): Values {
  const n = values.length;
  if (n > 16) {
    const distinct = [...new Set(values)];
    return distinct.length === 1 ? (distinct[0] as string) : distinct;
  }
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = values[i] as string;
    if (!out.includes(v)) out.push(v);
  }
  return out.length === 1 ? (out[0] as string) : out;
}

function contains(values: Values | undefined, v: string): boolean {
  if (values === undefined) return false;
  return typeof values === 'string' ? values === v : values.includes(v);
}

function file(buckets: Map<string, Bucket>, value: string, key: string): void {
  const b = buckets.get(value);
  if (b === undefined) buckets.set(value, key);
  else if (typeof b === 'string') {
    if (b !== key) buckets.set(value, new Set([b, key]));
  } else b.add(key);
}

function unfile(buckets: Map<string, Bucket>, value: string, key: string): void {
  const b = buckets.get(value);
  if (b === undefined) return;
  if (typeof b === 'string') {
    if (b === key) buckets.delete(value);
  } else if (b.delete(key) && b.size === 0) buckets.delete(value);
}

/** Moves `key` from the values it was filed under to `next`, touching only what changed (I-8). */
export function refile<T>(state: IndexState<T>, key: string, next: Values | undefined): void {
  const prev = state.filed.get(key);
  if (prev === next) return;
  const buckets = state.buckets;
  if (prev !== undefined) {
    if (typeof prev === 'string') {
      if (!contains(next, prev)) unfile(buckets, prev, key);
    } else {
      for (const v of prev) if (!contains(next, v)) unfile(buckets, v, key);
    }
  }
  if (next === undefined) {
    state.filed.delete(key);
    return;
  }
  if (typeof next === 'string') {
    if (!contains(prev, next)) file(buckets, next, key);
  } else {
    for (const v of next) if (!contains(prev, v)) file(buckets, v, key);
  }
  state.filed.set(key, next);
}

export function unfileAll<T>(state: IndexState<T>, key: string): void {
  const prev = state.filed.get(key);
  if (prev === undefined) return;
  if (typeof prev === 'string') unfile(state.buckets, prev, key);
  else for (const v of prev) unfile(state.buckets, v, key);
  state.filed.delete(key);
}

/** The values of every object of `items` in the index `index`, by key; keys with no value are left out. Throws IndexError. */
export function fileAll<T>(index: { readonly name: string; readonly fn: IndexFunc<T> }, items: ReadonlyMap<string, T>): Map<string, Values> {
  const filed = new Map<string, Values>();
  for (const [key, obj] of items) {
    const values = valuesOf(index, obj);
    if (values !== undefined) filed.set(key, values);
  }
  return filed;
}

export function buildState<T>(name: string, fn: IndexFunc<T>, filed: Map<string, Values>): IndexState<T> {
  const buckets = new Map<string, Bucket>();
  for (const [key, values] of filed) {
    if (typeof values === 'string') file(buckets, values, key);
    else for (const v of values) file(buckets, v, key);
  }
  return { name, fn, buckets, filed };
}
