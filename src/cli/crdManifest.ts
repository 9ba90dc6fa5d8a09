/**
 * CustomResourceDefinitions as text: written as YAML documents (in the
 * order people read CRDs in: apiVersion, kind, metadata, spec with group,
 * names, scope, versions) or a JSON `v1` List, and read back from a file of
 * YAML documents, a JSON object or a List (semantics CR-82, CR-83).
 */
import { readFileSync } from 'node:fs';
import { dump, loadAll } from 'js-yaml';
import { printable } from '../errors/printable.js';
import { jsonText } from '../store/jsonText.js';
import { UsageError } from './usage.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each level's keys in the order kubectl's and controller-gen's manifests use; keys not named follow in their own order. */
const ORDER = {
  crd: ['apiVersion', 'kind', 'metadata', 'spec', 'status'],
  metadata: ['name', 'labels', 'annotations'],
  spec: ['group', 'names', 'scope', 'versions', 'conversion', 'preserveUnknownFields'],
  names: ['kind', 'listKind', 'plural', 'singular', 'shortNames', 'categories'],
  version: ['name', 'served', 'storage', 'deprecated', 'deprecationWarning', 'schema', 'subresources', 'additionalPrinterColumns', 'selectableFields'],
} as const;

function ordered(obj: Json, keys: readonly string[], inner: Readonly<Record<string, (v: unknown) => unknown>> = {}): Json {
  const out: Json = {};
  for (const key of [...keys.filter((k) => Object.hasOwn(obj, k)), ...Object.keys(obj).filter((k) => !keys.includes(k))]) {
    const map = inner[key];
    out[key] = map === undefined ? obj[key] : map(obj[key]);
  }
  return out;
}

/**
 * A CRD with its keys in the usual order (the schemas inside are left as they are).
 *
 * @param crd the CustomResourceDefinition.
 * @returns a copy, keys reordered.
 */
export function orderCrd(crd: Json): Json {
  const version = (v: unknown): unknown => (isObject(v) ? ordered(v, ORDER.version) : v);
  const spec = (s: unknown): unknown =>
    isObject(s)
      ? ordered(s, ORDER.spec, { names: (n) => (isObject(n) ? ordered(n, ORDER.names) : n), versions: (vs) => (Array.isArray(vs) ? vs.map(version) : vs) })
      : s;
  return ordered(crd, ORDER.crd, { metadata: (m) => (isObject(m) ? ordered(m, ORDER.metadata) : m), spec });
}

/**
 * Objects as `kubectl apply -f -` reads them: YAML documents separated by `---`, or one JSON `v1` List.
 *
 * @param objects what to print, in order (CRDs already through {@link orderCrd}).
 * @param output the format.
 * @returns the text, ending in a newline.
 */
export function manifestText(objects: readonly Json[], output: 'yaml' | 'json'): string {
  if (output === 'json') return `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2)}\n`;
  // JSON's round trip first: what YAML would write as a tag or an anchor (a Date, a shared object) becomes plain data.
  return objects.map((o) => dump(JSON.parse(jsonText(o)), { noRefs: true, lineWidth: -1 })).join('---\n');
}

/** Files larger than this are not CRD manifests a person wrote; they are refused before parsing. */
const MAX_FILE = 16 * 1024 * 1024;

/**
 * The CRDs in a file: YAML documents (empty ones skipped), a JSON object, or
 * a List of them. Anything else in it is an error naming the document.
 *
 * @param path the file.
 * @returns the CRDs; never empty.
 * @throws {UsageError} when the file is missing, does not parse, holds something other than CRDs, or holds none.
 */
export function readCrdFile(path: string): Json[] {
  const shown = printable(path);
  let text: string;
  try {
    const buf = readFileSync(path);
    if (buf.length > MAX_FILE) throw new UsageError(`${shown}: larger than ${MAX_FILE} bytes; not a CRD manifest`);
    text = buf.toString('utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${shown}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let docs: unknown[];
  try {
    docs = loadAll(text);
  } catch (err) {
    throw new UsageError(`${shown}: not YAML or JSON: ${printable(String((err as Error).message ?? err).split('\n')[0] ?? '')}`);
  }
  const crds: Json[] = [];
  const take = (doc: unknown, where: string): void => {
    if (doc === null || doc === undefined) return;
    if (isObject(doc) && doc['kind'] === 'List' && Array.isArray(doc['items'])) {
      doc['items'].forEach((item, i) => take(item, `${where}, item ${i}`));
      return;
    }
    if (!isObject(doc) || doc['apiVersion'] !== 'apiextensions.k8s.io/v1' || doc['kind'] !== 'CustomResourceDefinition') {
      const kind = isObject(doc) ? `${printable(String(doc['apiVersion']))} ${printable(String(doc['kind']))}` : typeof doc;
      throw new UsageError(`${shown}: ${where} is ${kind}, not an apiextensions.k8s.io/v1 CustomResourceDefinition`);
    }
    crds.push(doc);
  };
  docs.forEach((doc, i) => take(doc, `document ${i + 1}`));
  if (crds.length === 0) throw new UsageError(`${shown}: holds no CustomResourceDefinition`);
  return crds;
}
