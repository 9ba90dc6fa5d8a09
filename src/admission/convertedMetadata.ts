import { isDeepStrictEqual } from 'node:util';
import { printable } from '../errors/printable.js';
import { isRecord } from '../crd/schemaNodes.js';

// What a converter may do to metadata (WH-48): change labels and annotations, valid ones, and nothing else.

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** kube-apiserver's bound on all of an object's annotations together. */
const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/**
 * Why a converter's `after` metadata may not replace `before`, or undefined when it may: every field but
 * labels and annotations equal, those two maps of strings with keys and values kube-apiserver accepts.
 */
export function convertedMetadataProblem(before: unknown, after: unknown): string | undefined {
  if (before === undefined && after === undefined) return undefined;
  if (!isRecord(after)) return after === undefined ? 'dropped metadata; a converted object keeps the metadata it was given' : 'returned metadata that is not an object';
  const original = isRecord(before) ? before : {};
  for (const field of new Set([...Object.keys(original), ...Object.keys(after)])) {
    if (field === 'labels' || field === 'annotations') continue;
    if (!isDeepStrictEqual(original[field], after[field])) {
      return `changed metadata.${printable(field.length > 64 ? `${field.slice(0, 64)}…` : field)}; a converter may change labels and annotations only`;
    }
  }
  return (
    mapProblem('labels', original['labels'], after['labels'], qualifiedName, (v) => v.length <= 63 && LABEL_VALUE.test(v)) ??
    mapProblem('annotations', original['annotations'], after['annotations'], (k) => qualifiedName(k.toLowerCase()), () => true) ??
    annotationsSize(after['annotations'])
  );
}

/**
 * Checks only the entries the converter added or changed: what the API server sent it already stored, under its own
 * rules (annotation keys are checked lower-cased, so it stores `Example.COM/Owner`), and passing it through is no bug.
 */
function mapProblem(field: string, before: unknown, map: unknown, keyOk: (key: string) => boolean, valueOk: (value: string) => boolean): string | undefined {
  if (map === undefined || map === null) return undefined;
  if (!isRecord(map)) return `returned metadata.${field} that is not a map of strings`;
  const given = isRecord(before) ? before : {};
  for (const [key, value] of Object.entries(map)) {
    if (Object.hasOwn(given, key) && given[key] === value) continue;
    if (!keyOk(key)) return `returned metadata.${field} with a key that is not a qualified name ([prefix/]name): ${shortKey(key)}`;
    if (typeof value !== 'string' || !valueOk(value)) return `returned metadata.${field}[${shortKey(key)}] that is not a valid ${field === 'labels' ? 'label value' : 'string'}`;
  }
  return undefined;
}

function annotationsSize(map: unknown): string | undefined {
  if (!isRecord(map)) return undefined;
  let bytes = 0;
  for (const [k, v] of Object.entries(map)) bytes += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  return bytes > MAX_ANNOTATIONS_BYTES ? `returned annotations of ${bytes} bytes; kube-apiserver allows ${MAX_ANNOTATIONS_BYTES}` : undefined;
}

function qualifiedName(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && QUALIFIED_NAME.test(name);
}

function shortKey(key: string): string {
  return `"${printable(key.length > 64 ? `${key.slice(0, 64)}…` : key)}"`;
}
