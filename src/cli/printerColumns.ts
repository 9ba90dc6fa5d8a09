/**
 * A CRD's `additionalPrinterColumns` as `rxkube watch` shows them: each
 * column's JSONPath evaluated on the cached object (the informer holds
 * objects, not the server's Table rows), in the subset CRD authors write —
 * fields, indexes, `[*]` and `[?(@.path=="value")]` filters — with several
 * results joined by commas as kubectl does (semantics CR-107, CR-108).
 */
import { age } from './columns.js';

/** One printer column, as the CRD declares it. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: string;
  readonly jsonPath: string;
  readonly priority?: number;
}

type Step =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'all' }
  | { readonly kind: 'filter'; readonly path: readonly Step[]; readonly equal: boolean; readonly value: unknown };

const FIELD = /^\.([A-Za-z0-9_$-]+)/;
const QUOTED = /^\[\s*'([^']*)'\s*\]/;
const INDEX = /^\[\s*(-?\d+)\s*\]/;
const ALL = /^(\[\s*\*\s*\]|\.\*)/;
const FILTER = /^\[\s*\?\(\s*@((?:\.[A-Za-z0-9_$-]+)+)\s*(==|!=)\s*("(?:[^"\\]|\\.)*"|'[^']*'|-?\d+(?:\.\d+)?|true|false)\s*\)\s*\]/;

/**
 * Parses the subset of JSONPath printer columns use (`{` `}` around it allowed).
 *
 * @param path e.g. `.status.conditions[?(@.type=="Ready")].status`.
 * @returns the steps, or undefined for a path outside the subset.
 */
export function parseJsonPath(path: string): Step[] | undefined {
  let rest = path.trim().replace(/^\{(.*)\}$/s, '$1').trim();
  const steps: Step[] = [];
  while (rest !== '') {
    let m: RegExpExecArray | null;
    if ((m = ALL.exec(rest)) !== null) steps.push({ kind: 'all' });
    else if ((m = FIELD.exec(rest)) !== null) steps.push({ kind: 'field', name: m[1] as string });
    else if ((m = QUOTED.exec(rest)) !== null) steps.push({ kind: 'field', name: m[1] as string });
    else if ((m = INDEX.exec(rest)) !== null) steps.push({ kind: 'index', index: Number(m[1]) });
    else if ((m = FILTER.exec(rest)) !== null) {
      const literal = m[3] as string;
      const value: unknown = literal.startsWith("'") ? literal.slice(1, -1) : JSON.parse(literal);
      steps.push({ kind: 'filter', path: (m[1] as string).split('.').slice(1).map((name) => ({ kind: 'field', name })), equal: m[2] === '==', value });
    } else return undefined;
    rest = rest.slice(m[0].length);
  }
  return steps;
}

function step(values: unknown[], s: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (s.kind === 'field') {
      if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, s.name)) out.push((v as Record<string, unknown>)[s.name]);
    } else if (s.kind === 'index') {
      if (Array.isArray(v)) {
        const at = s.index < 0 ? v.length + s.index : s.index;
        if (at >= 0 && at < v.length) out.push(v[at]);
      }
    } else if (s.kind === 'all') {
      if (Array.isArray(v)) out.push(...(v as unknown[]));
      else if (typeof v === 'object' && v !== null) out.push(...Object.values(v));
    } else if (Array.isArray(v)) {
      for (const item of v as unknown[]) {
        const found = s.path.reduce<unknown[]>(step, [item]);
        const matches = found.length > 0 && found[0] === s.value;
        if (matches === s.equal) out.push(item);
      }
    }
  }
  return out;
}

// Each column's path, parsed once: a live view draws every cell of every row several times a second.
const parsedPaths = new WeakMap<PrinterColumn, readonly Step[] | undefined>();

function stepsOf(column: PrinterColumn): readonly Step[] | undefined {
  if (!parsedPaths.has(column)) parsedPaths.set(column, parseJsonPath(column.jsonPath));
  return parsedPaths.get(column);
}

/**
 * One cell: the column's values as kubectl prints them (`<none>` when there
 * is none, dates as ages, several values joined by commas), bounded to 64
 * characters. Not escaped: the table escapes every cell.
 *
 * @param column the column.
 * @param obj the object.
 * @param now the current time in ms, for dates.
 * @returns the cell's text.
 */
export function printerCell(column: PrinterColumn, obj: unknown, now: number): string {
  const steps = stepsOf(column);
  if (steps === undefined) return '<unsupported path>';
  const values = steps.reduce<unknown[]>(step, [obj]).filter((v) => v !== null && v !== undefined);
  if (values.length === 0) return '<none>';
  const text = values
    .map((v) => (column.type === 'date' && typeof v === 'string' ? age(v, now) : typeof v === 'string' ? v : JSON.stringify(v)))
    .join(',');
  return text.length > 64 ? `${text.slice(0, 63)}…` : text;
}

/**
 * The columns a watch shows by default: priority 0 (kubectl shows the rest with `-o wide`), except the
 * creation timestamp, which the table's AGE already is; at most four, so the name keeps its room.
 *
 * @param crd the CustomResourceDefinition.
 * @param version the version watched.
 * @returns the columns.
 */
export function defaultColumns(crd: unknown, version: string): PrinterColumn[] {
  const versions = (crd as { spec?: { versions?: unknown } } | null)?.spec?.versions;
  const v = Array.isArray(versions) ? (versions as { name?: unknown; additionalPrinterColumns?: unknown }[]).find((x) => x?.name === version) : undefined;
  const columns = Array.isArray(v?.additionalPrinterColumns) ? (v.additionalPrinterColumns as Partial<PrinterColumn>[]) : [];
  return columns
    .filter((c): c is PrinterColumn => typeof c?.name === 'string' && typeof c.jsonPath === 'string' && typeof c.type === 'string')
    .filter((c) => (c.priority ?? 0) === 0 && c.jsonPath.replace(/\s/g, '') !== '.metadata.creationTimestamp')
    .slice(0, 4);
}
