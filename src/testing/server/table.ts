import { evaluate, parseJsonPath } from '../crd/jsonPath.js';
import type { MetaVersion } from './negotiate.js';
import type { PrinterColumn, ResourceType } from '../storage/resources.js';
import type { Sink } from './sink.js';

type AnyObject = Record<string, unknown>;

/**
 * The Table form (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`)
 * of an object or list already rendered as JSON, for a resource with
 * columns: one row per object, with its cells and its metadata as
 * PartialObjectMetadata (kube-apiserver's default `includeObject=Metadata`).
 *
 * @param type the resource, whose columns are printed.
 * @param json the object or list as it would be answered.
 * @param view the meta.k8s.io version asked for.
 * @param now the time ages are counted to.
 * @returns the Table's JSON.
 */
export function tableJson(type: ResourceType, json: string, view: MetaVersion, now = Date.now()): string {
  const columns = type.columns ?? [];
  const body = JSON.parse(json) as AnyObject;
  const items = Array.isArray(body['items']) ? (body['items'] as AnyObject[]) : [body];
  const meta = body['metadata'] as AnyObject | undefined;
  const listMeta = Array.isArray(body['items']) && meta !== undefined ? meta : { resourceVersion: (meta?.['resourceVersion'] as string | undefined) ?? '' };
  const paths = columns.map((c) => (c.jsonPath === undefined ? undefined : pathOrNull(c.jsonPath)));
  const rows = items.map((item) => ({
    cells: columns.map((c, i) => cell(c, paths[i], item, now)),
    object: { kind: 'PartialObjectMetadata', apiVersion: view, metadata: item['metadata'] },
  }));
  const columnDefinitions = columns.map((c) => ({ name: c.name, type: c.type, format: c.format, description: c.description, priority: c.priority }));
  return JSON.stringify({ kind: 'Table', apiVersion: view, metadata: listMeta, columnDefinitions, rows });
}

type Path = ReturnType<typeof parseJsonPath>;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A column's parsed path; null for one outside the supported subset, whose cells are then empty. */
function pathOrNull(text: string): Path | null {
  try {
    return parseJsonPath(text);
  } catch {
    return null;
  }
}

/**
 * One cell, as kube-apiserver's CRD table convertor makes it: the first
 * value the path finds; a `string` column prints it as text, other columns
 * take it only when it has their type (a `date` as an age), else null.
 */
function cell(column: PrinterColumn, path: Path | null | undefined, obj: AnyObject, now: number): unknown {
  if (path === undefined) return (obj['metadata'] as AnyObject | undefined)?.['name'] ?? '';
  if (path === null) return null;
  const values = evaluate(path, obj);
  if (values.length === 0) return null;
  const v = values[0];
  switch (column.type) {
    case 'string':
      return typeof v === 'string' ? v : JSON.stringify(v);
    case 'integer':
      return Number.isInteger(v) ? v : null;
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'date':
      if (column.timestamp === true) return typeof v === 'string' ? v : null;
      return typeof v === 'string' ? (RFC3339.test(v) ? age(Date.parse(v), now) : '<invalid>') : null;
    default:
      return null;
  }
}

/** A short, human age (`45s`, `3m20s`, `5h`, `2d3h`, `1y`), as kubectl's AGE column shows one. */
export function age(then: number, now: number): string {
  const s = Math.floor((now - then) / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (h < 192) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 730) return `${d}d`;
  const y = Math.floor(d / 365);
  if (y < 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
}

/**
 * A watch's sink that prints each object event as a one-row Table, the
 * column definitions in the first only, as kube-apiserver streams a watch
 * asked for `as=Table`. Bookmarks, errors and lines cut by a fault pass
 * through as they are.
 */
export class TableSink implements Sink {
  readonly #inner: Sink;
  readonly #type: ResourceType;
  readonly #view: MetaVersion;
  // Column definitions go out once, with the first event.
  #first = true;

  constructor(inner: Sink, type: ResourceType, view: MetaVersion) {
    this.#inner = inner;
    this.#type = type;
    this.#view = view;
  }

  write(chunk: string | Buffer): void {
    this.#inner.write(typeof chunk === 'string' ? this.#print(chunk) : chunk);
  }

  end(): void {
    this.#inner.end();
  }

  writeThenReset(chunk: string): void {
    this.#inner.writeThenReset(this.#print(chunk));
  }

  #print(chunk: string): string {
    return chunk
      .split('\n')
      .map((line) => {
        const m = /^\{"type":"(ADDED|MODIFIED|DELETED)","object":(.*)\}$/s.exec(line);
        if (m === null) return line;
        try {
          const table = JSON.parse(tableJson(this.#type, m[2] as string, this.#view)) as AnyObject;
          if (!this.#first) table['columnDefinitions'] = [];
          this.#first = false;
          return `{"type":"${m[1] as string}","object":${JSON.stringify(table)}}`;
        } catch {
          return line;
        }
      })
      .join('\n');
  }
}
