import { SelectorParseError } from './errors/SelectorParseError.js';
import { describeValue } from '../options/validate.js';

/** A parsed field selector: all requirements must hold (AND). */
export interface FieldSelector {
  /** True when the selector has no requirement and so matches every object. */
  readonly empty: boolean;
  /** The requirements in the order written. */
  readonly requirements: readonly {
    /** Dotted path into the object, e.g. `metadata.name` or `spec.nodeName`. */
    readonly field: string;
    /** `=` and `==` mean equal, `!=` not equal. */
    readonly op: '=' | '==' | '!=';
    /** The value with escapes (`\,` `\=` `\\`) resolved. */
    readonly value: string;
  }[];
  /**
   * Tests an object: each field path is resolved into the object and its
   * scalar value compared as text; a missing field counts as `""`.
   * @param obj the object (any shape).
   * @returns true when every requirement holds.
   */
  matches(obj: unknown): boolean;
  /** The selector text, values escaped again. */
  toString(): string;
}

type FieldRequirement = FieldSelector['requirements'][number];
type FieldOperator = FieldRequirement['op'];

interface Compiled {
  readonly path: readonly string[];
  readonly value: string;
  readonly negate: boolean;
}

class ParsedFieldSelector implements FieldSelector {
  readonly empty: boolean;
  readonly requirements: readonly FieldRequirement[];
  // Paths split once at parse time, so matching only walks properties.
  readonly #compiled: readonly Compiled[];

  constructor(requirements: readonly FieldRequirement[]) {
    this.requirements = Object.freeze(requirements.map((r) => Object.freeze({ ...r })));
    this.empty = requirements.length === 0;
    this.#compiled = requirements.map((r) => ({ path: r.field.split('.'), value: r.value, negate: r.op === '!=' }));
    Object.freeze(this);
  }

  matches(obj: unknown): boolean {
    const compiled = this.#compiled;
    for (let i = 0; i < compiled.length; i++) {
      const c = compiled[i] as Compiled;
      const actual = fieldText(obj, c.path);
      if ((actual === c.value) === c.negate) return false;
    }
    return true;
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.op}${escapeFieldValue(r.value)}`).join(',');
  }
}

/**
 * The text of a field as the API server compares it: scalars as text,
 * missing or null as `""`, and `undefined` for objects and arrays, which
 * equal no value.
 */
function fieldText(obj: unknown, path: readonly string[]): string | undefined {
  let cur: unknown = obj;
  for (let i = 0; i < path.length; i++) {
    if (cur === null || typeof cur !== 'object') return '';
    const seg = path[i] as string;
    if (!Object.hasOwn(cur, seg)) return '';
    cur = (cur as Record<string, unknown>)[seg];
  }
  switch (typeof cur) {
    case 'string':
      return cur;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(cur);
    case 'undefined':
      return '';
    case 'object':
      if (cur === null) return '';
      // client-node decodes timestamps to Date; the wire form is RFC 3339 without milliseconds.
      if (cur instanceof Date) return cur.toISOString().replace('.000Z', 'Z');
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Escapes a value for use in field selector text, as Kubernetes does:
 * `\` → `\\`, `,` → `\,`, `=` → `\=` (internal: how a selector prints itself).
 */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (ch) => `\\${ch}`);
}

function unescapeValue(input: string, raw: string, offset: number): string {
  if (!raw.includes('\\') && !raw.includes(',') && !raw.includes('=')) return raw;
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i] as string;
    if (ch === '\\') {
      const next = raw[i + 1];
      if (next === undefined) throw new SelectorParseError('field', input, offset + i, `unfinished escape: '\\' at the end of the value`);
      if (next !== '\\' && next !== ',' && next !== '=') {
        throw new SelectorParseError('field', input, offset + i, `invalid escape sequence '\\${next}' (only '\\\\', '\\,' and '\\=' are allowed)`);
      }
      out += next;
      i++;
    } else if (ch === '=' || ch === ',') {
      throw new SelectorParseError('field', input, offset + i, `unescaped '${ch}' in a value (write '\\${ch}')`);
    } else {
      out += ch;
    }
  }
  return out;
}

// No '\\' (escapes are for values) and no '!': a path ending in '!' before '=' would print as the operator '!='.
const PATH_SEGMENT = /^[^\s.\\!]+$/;

/**
 * Parses a Kubernetes field selector once into a reusable matcher.
 *
 * Requirements are joined by commas (AND); each is `path=value`,
 * `path==value` or `path!=value`, where `path` is a dotted path into the
 * object (`metadata.namespace`, `spec.nodeName`, `status.phase`). In values,
 * `\,`, `\=` and `\\` stand for `,`, `=` and `\`; any other escape, a
 * trailing `\`, or a bare `=` in a value is an error. A missing field
 * compares as `""` (so `spec.nodeName=` selects unscheduled pods); objects and
 * arrays equal no value. Whitespace around the path is ignored, values are
 * taken literally. Unlike the API server, any path is accepted (segments
 * without whitespace, `\\` or `!`): which fields a resource supports is the
 * server's business.
 *
 * ## Example
 * ```ts
 * import { parseFieldSelector } from 'rxkube/core';
 * const sel = parseFieldSelector('status.phase!=Running,spec.nodeName=node-1');
 * sel.matches({ spec: { nodeName: 'node-1' }, status: { phase: 'Pending' } }); // true
 * sel.requirements; // [{ field: 'status.phase', op: '!=', value: 'Running' }, …]
 * ```
 *
 * @param s the selector text.
 * @returns a matcher.
 * @throws {SelectorParseError} on a term without an operator, an empty path or a bad escape, naming the position.
 * @throws {TypeError} when `s` is not a string.
 */
export function parseFieldSelector(s: string): FieldSelector {
  if (typeof s !== 'string') throw new TypeError(`parseFieldSelector: selector must be a string, got ${describeValue(s)}`);
  const requirements: FieldRequirement[] = [];
  let termStart = 0;
  for (let i = 0; i <= s.length; i++) {
    // A trailing '\\' stays in the term so that unescaping reports it.
    if (s[i] === '\\' && i + 1 < s.length) {
      i++;
      continue;
    }
    if (i === s.length || s[i] === ',') {
      const term = s.slice(termStart, i);
      if (term.length > 0) requirements.push(parseTerm(s, term, termStart));
      termStart = i + 1;
    }
  }
  return new ParsedFieldSelector(requirements);
}

function parseTerm(input: string, term: string, offset: number): FieldRequirement {
  // The first operator splits the term, as in Kubernetes' splitTerm: escapes belong to values, never to paths.
  for (let i = 0; i < term.length; i++) {
    const ch = term[i];
    let op: FieldOperator | undefined;
    if (term.startsWith('!=', i)) op = '!=';
    else if (term.startsWith('==', i)) op = '==';
    else if (ch === '=') op = '=';
    if (op === undefined) continue;
    const field = term.slice(0, i).trim();
    if (field.length === 0) throw new SelectorParseError('field', input, offset, `missing field path before '${op}'`);
    if (!field.split('.').every((seg) => PATH_SEGMENT.test(seg))) {
      throw new SelectorParseError('field', input, offset, `invalid field path ${JSON.stringify(field)}: dotted path with non-empty segments and no whitespace, '\\' or '!' expected`);
    }
    const valueStart = i + op.length;
    return { field, op, value: unescapeValue(input, term.slice(valueStart), offset + valueStart) };
  }
  return fail(input, offset, `${JSON.stringify(term)} has no operator; expected 'field=value', 'field==value' or 'field!=value'`);
}

function fail(input: string, pos: number, reason: string): never {
  throw new SelectorParseError('field', input, pos, reason);
}
