// The subset of kubectl's JSONPath that printer columns and scale paths use: field steps (`.a.b`),
// indexes (`[0]`, `[-1]`), a wildcard (`[*]`), and an equality filter on a field
// (`[?(@.type=="Ready")]`, `!=` too), optionally wrapped in `{…}`.

type Step =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'all' }
  | { readonly kind: 'filter'; readonly path: readonly string[]; readonly op: '==' | '!='; readonly value: string };

const FIELD = /^\.([A-Za-z0-9_$-]+|'[^']*'|"[^"]*")/;
const INDEX = /^\[(-?\d+)\]/;
const ALL = /^\[\*\]|^\.\*/;
const FILTER = /^\[\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(-?[\w.]+))\s*\)\]/;

/** A path the subset cannot read, with the part that stopped it. */
export class JsonPathError extends Error {
  override readonly name = 'JsonPathError';
}

/**
 * Parses a path once, for evaluating it on many objects.
 *
 * @throws JsonPathError for anything outside the subset.
 */
export function parseJsonPath(text: string): readonly Step[] {
  let rest = text.trim();
  if (rest.startsWith('{') && rest.endsWith('}')) rest = rest.slice(1, -1).trim();
  if (rest.startsWith('$')) rest = rest.slice(1);
  const steps: Step[] = [];
  while (rest !== '') {
    let m: RegExpExecArray | null;
    if ((m = ALL.exec(rest)) !== null) steps.push({ kind: 'all' });
    else if ((m = FIELD.exec(rest)) !== null) {
      const raw = m[1] as string;
      steps.push({ kind: 'field', name: /^['"]/.test(raw) ? raw.slice(1, -1) : raw });
    } else if ((m = INDEX.exec(rest)) !== null) steps.push({ kind: 'index', index: Number(m[1]) });
    else if ((m = FILTER.exec(rest)) !== null) {
      const path = (m[1] as string).split('.').slice(1);
      steps.push({ kind: 'filter', path, op: m[2] as '==' | '!=', value: m[3] ?? m[4] ?? (m[5] as string) });
    } else throw new JsonPathError(`unsupported JSONPath at ${JSON.stringify(rest.slice(0, 40))}`);
    rest = rest.slice(m[0].length);
  }
  return steps;
}

function child(v: unknown, name: string): unknown {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[name] : undefined;
}

/** A filter compares as kubectl prints: strings as they are, numbers and booleans in their JSON form. */
function text(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
}

/**
 * Every value a parsed path reaches in `root`, in document order (none when
 * a step finds nothing, as kubectl prints an empty cell).
 */
export function evaluate(steps: readonly Step[], root: unknown): unknown[] {
  let current: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      switch (step.kind) {
        case 'field': {
          const c = child(v, step.name);
          if (c !== undefined) next.push(c);
          break;
        }
        case 'index':
          if (Array.isArray(v)) {
            const c: unknown = v[step.index < 0 ? v.length + step.index : step.index];
            if (c !== undefined) next.push(c);
          }
          break;
        case 'all':
          if (Array.isArray(v)) next.push(...(v as unknown[]));
          else if (v !== null && typeof v === 'object') next.push(...Object.values(v));
          break;
        case 'filter':
          if (Array.isArray(v)) {
            for (const item of v as unknown[]) {
              const got = text(step.path.reduce<unknown>(child, item));
              if (got !== undefined && (got === step.value) === (step.op === '==')) next.push(item);
            }
          }
          break;
      }
    }
    current = next;
  }
  return current;
}

/**
 * Sets the value a field-only path names, creating the objects on the way
 * (what a write through the scale subresource does to `.spec.replicas`).
 *
 * @throws JsonPathError when the path has anything but field steps.
 */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const steps = parseJsonPath(path);
  let at = obj;
  for (const [i, step] of steps.entries()) {
    if (step.kind !== 'field') throw new JsonPathError(`cannot write through ${JSON.stringify(path)}: only field steps can be written`);
    if (i === steps.length - 1) {
      at[step.name] = value;
      return;
    }
    const c = at[step.name];
    at = c !== null && typeof c === 'object' && !Array.isArray(c) ? (c as Record<string, unknown>) : (at[step.name] = {});
  }
}
