import { SelectorParseError } from './errors/SelectorParseError.js';
import { labelKeyProblem, labelValueProblem } from './labelValidation.js';
import { describeValue } from '../options/validate.js';

/** A parsed label selector: all requirements must hold (AND). */
export interface LabelSelector {
  /** True when the selector has no requirement and so matches every object. */
  readonly empty: boolean;
  /** The requirements, sorted by key. */
  readonly requirements: readonly {
    readonly key: string;
    /**
     * Spelled as Kubernetes spells it: `=`/`==` (equals), `!=`, `in`, `notin`,
     * `exists` (bare key), `!` (key absent), `gt`/`lt` (written `>`/`<`, integer comparison).
     */
    readonly operator: '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';
    /** Sorted and de-duplicated; empty for `exists` and `!`. */
    readonly values: readonly string[];
  }[];
  /**
   * Tests a label set. `undefined` is an object without labels.
   * @param labels the object's `metadata.labels`.
   * @returns true when every requirement holds.
   */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** The canonical selector text (requirements sorted by key, set values sorted). */
  toString(): string;
}

type LabelRequirement = LabelSelector['requirements'][number];
type LabelOperator = LabelRequirement['operator'];
type Labels = Readonly<Record<string, string>>;
type Test = (labels: Labels) => boolean;

const NO_LABELS: Labels = Object.freeze({});

class ParsedLabelSelector implements LabelSelector {
  readonly empty: boolean;
  readonly requirements: readonly LabelRequirement[];
  // One precompiled predicate per requirement, so matching does no parsing or allocation.
  readonly #tests: readonly Test[];
  // Computed once: toString() is used as a cache key by callers.
  readonly #text: string;

  constructor(requirements: readonly LabelRequirement[]) {
    this.requirements = Object.freeze(requirements.map((r) => Object.freeze({ ...r, values: Object.freeze([...r.values]) })));
    this.empty = requirements.length === 0;
    this.#tests = requirements.map(compile);
    this.#text = requirements.map(requirementText).join(',');
    Object.freeze(this);
  }

  matches(labels: Labels | undefined): boolean {
    const tests = this.#tests;
    const set = labels ?? NO_LABELS;
    for (let i = 0; i < tests.length; i++) {
      if (!(tests[i] as Test)(set)) return false;
    }
    return true;
  }

  toString(): string {
    return this.#text;
  }
}

/** The label's value, or undefined; never a value inherited from Object.prototype. */
function labelOf(labels: Labels, key: string): string | undefined {
  const v = (labels as Record<string, unknown>)[key];
  return typeof v === 'string' && Object.hasOwn(labels, key) ? v : undefined;
}

function compile(r: LabelRequirement): Test {
  const key = r.key;
  switch (r.operator) {
    case 'exists':
      return (l) => labelOf(l, key) !== undefined;
    case '!':
      return (l) => labelOf(l, key) === undefined;
    case '=':
    case '==': {
      const want = r.values[0] as string;
      return (l) => labelOf(l, key) === want;
    }
    case '!=': {
      const want = r.values[0] as string;
      return (l) => labelOf(l, key) !== want;
    }
    case 'in': {
      if (r.values.length === 1) {
        const want = r.values[0] as string;
        return (l) => labelOf(l, key) === want;
      }
      const set = new Set(r.values);
      return (l) => {
        const v = labelOf(l, key);
        return v !== undefined && set.has(v);
      };
    }
    case 'notin': {
      const set = new Set(r.values);
      return (l) => {
        const v = labelOf(l, key);
        return v === undefined || !set.has(v);
      };
    }
    case 'gt':
    case 'lt': {
      const bound = BigInt(r.values[0] as string);
      const greater = r.operator === 'gt';
      return (l) => {
        const v = labelOf(l, key);
        if (v === undefined || !INTEGER.test(v)) return false;
        const n = BigInt(v);
        return greater ? n > bound : n < bound;
      };
    }
  }
}

function requirementText(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0] as string}`;
    case 'lt':
      return `${r.key}<${r.values[0] as string}`;
    default:
      return `${r.key}${r.operator}${r.values[0] as string}`;
  }
}

// Go's strconv.ParseInt(v, 10, 64) accepts an optional sign and decimal digits.
const INTEGER = /^[+-]?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

// ---- lexer -----------------------------------------------------------------

type TokenKind = 'ident' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<' | 'end';

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly pos: number;
}

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}

function isSpecial(ch: string): boolean {
  return ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<';
}

function lex(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i] as string;
    if (isWhitespace(ch)) {
      i++;
      continue;
    }
    if (isSpecial(ch)) {
      const two = input.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        tokens.push({ kind: two, text: two, pos: i });
        i += 2;
      } else {
        tokens.push({ kind: ch as TokenKind, text: ch, pos: i });
        i++;
      }
      continue;
    }
    const start = i;
    while (i < input.length && !isWhitespace(input[i] as string) && !isSpecial(input[i] as string)) i++;
    const text = input.slice(start, i);
    tokens.push({ kind: text === 'in' || text === 'notin' ? text : 'ident', text, pos: start });
  }
  tokens.push({ kind: 'end', text: 'end of string', pos: input.length });
  return tokens;
}

// ---- parser ----------------------------------------------------------------

class Parser {
  // Kept for error messages, which quote the whole selector.
  readonly #input: string;
  // Lexed up front: selectors are short and the grammar needs one token of lookahead.
  readonly #tokens: Token[];
  // Index of the next unconsumed token.
  #at = 0;

  constructor(input: string) {
    this.#input = input;
    this.#tokens = lex(input);
  }

  fail(pos: number, reason: string): never {
    throw new SelectorParseError('label', this.#input, pos, reason);
  }

  /** Peeks the next token; in a value position the keywords are plain identifiers. */
  peek(values = false): Token {
    const t = this.#tokens[this.#at] as Token;
    return values && (t.kind === 'in' || t.kind === 'notin') ? { ...t, kind: 'ident' } : t;
  }

  next(values = false): Token {
    const t = this.peek(values);
    if (t.kind !== 'end') this.#at++;
    return t;
  }

  parse(): LabelRequirement[] {
    const out: LabelRequirement[] = [];
    if (this.peek().kind === 'end') return out;
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'ident' && t.kind !== '!') this.fail(t.pos, `found '${t.text}', expected '!', a label key or end of string`);
      out.push(this.requirement());
      const sep = this.next();
      if (sep.kind === 'end') return out;
      if (sep.kind !== ',') this.fail(sep.pos, `found '${sep.text}', expected ',' or end of string`);
      const after = this.peek();
      if (after.kind !== 'ident' && after.kind !== '!') this.fail(after.pos, `found '${after.text}', expected a label key or '!' after ','`);
    }
  }

  requirement(): LabelRequirement {
    let t = this.next();
    const negated = t.kind === '!';
    if (negated) {
      t = this.next();
      if (t.kind !== 'ident') this.fail(t.pos, `found '${t.text}', expected a label key after '!'`);
    }
    const keyToken = t;
    const key = keyToken.text;
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) this.fail(keyToken.pos, keyProblem);
    const after = this.peek();
    if (negated) return { key, operator: '!', values: [] };
    if (after.kind === 'end' || after.kind === ',') return { key, operator: 'exists', values: [] };

    const opToken = this.next();
    let operator: LabelOperator;
    switch (opToken.kind) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        operator = opToken.kind;
        break;
      case '>':
        operator = 'gt';
        break;
      case '<':
        operator = 'lt';
        break;
      default:
        return this.fail(opToken.pos, `found '${opToken.text}', expected one of '=', '==', '!=', 'in', 'notin', '>', '<'`);
    }
    const valuesPos = this.peek(true).pos;
    const values = operator === 'in' || operator === 'notin' ? this.setValues() : [this.exactValue()];
    for (const v of values) {
      const problem = labelValueProblem(v);
      if (problem !== undefined) this.fail(valuesPos, problem);
    }
    if (operator === 'gt' || operator === 'lt') {
      const v = values[0] as string;
      if (!INTEGER.test(v) || BigInt(v) < INT64_MIN || BigInt(v) > INT64_MAX) {
        this.fail(valuesPos, `for '${opToken.text}' the value must be a 64-bit integer, got ${describeValue(v)}`);
      }
    }
    return { key, operator, values: [...new Set(values)].sort() };
  }

  exactValue(): string {
    const t = this.peek(true);
    if (t.kind === 'end' || t.kind === ',') return '';
    this.next(true);
    if (t.kind !== 'ident') this.fail(t.pos, `found '${t.text}', expected a label value`);
    return t.text;
  }

  setValues(): string[] {
    const open = this.next(true);
    if (open.kind !== '(') this.fail(open.pos, `found '${open.text}', expected '('`);
    const values: string[] = [];
    // An empty slot — "()", "(,a)", "(a,,b)", "(a,)" — is the empty value, as in Kubernetes.
    let expectValue = true;
    for (;;) {
      const t = this.next(true);
      if (t.kind === 'ident') {
        if (!expectValue) this.fail(t.pos, `found '${t.text}', expected ',' or ')'`);
        values.push(t.text);
        expectValue = false;
      } else if (t.kind === ',') {
        if (expectValue) values.push('');
        expectValue = true;
      } else if (t.kind === ')') {
        if (expectValue) values.push('');
        return values;
      } else {
        this.fail(t.pos, `found '${t.text}', expected a label value, ',' or ')'`);
      }
    }
  }
}

function compareRequirements(a: LabelRequirement, b: LabelRequirement): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Parses a Kubernetes label selector once into a reusable matcher.
 *
 * The syntax is the API server's: requirements joined by commas (AND), each
 * one of `key=value`, `key==value`, `key!=value`, `key in (a,b)`,
 * `key notin (a,b)`, `key` (exists), `!key` (absent), `key>n`, `key<n`
 * (integer comparison). Whitespace between tokens is ignored. Keys and values
 * are validated as label keys and values. `!=` and `notin` also match objects
 * that do not have the key at all; the empty string is the selector that
 * matches everything.
 *
 * ## Example
 * ```ts
 * import { parseLabelSelector } from 'rxkube/core';
 * const sel = parseLabelSelector('app=web, tier in (a,b), !canary');
 * sel.matches({ app: 'web', tier: 'a' });           // true
 * sel.matches({ app: 'web', tier: 'a', canary: '' }); // false
 * String(sel);                                       // "app=web,!canary,tier in (a,b)"
 * ```
 *
 * @param s the selector text.
 * @returns a matcher; requirements sorted by key.
 * @throws {SelectorParseError} on bad syntax or an invalid key or value, naming the position.
 * @throws {TypeError} when `s` is not a string.
 */
export function parseLabelSelector(s: string): LabelSelector {
  if (typeof s !== 'string') throw new TypeError(`parseLabelSelector: selector must be a string, got ${describeValue(s)}`);
  const requirements = new Parser(s).parse();
  requirements.sort(compareRequirements);
  return new ParsedLabelSelector(requirements);
}

/** The structured selector of Kubernetes objects (`spec.selector` of a Deployment, client-node's `V1LabelSelector`). */
export interface LabelSelectorObject {
  readonly matchLabels?: Readonly<Record<string, string>> | undefined;
  readonly matchExpressions?:
    | readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] | undefined }[]
    | undefined;
}

const EXPRESSION_OPERATORS: Readonly<Record<string, LabelOperator>> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * Turns the structured selector found in object specs (`matchLabels` and
 * `matchExpressions`) into the same matcher {@link parseLabelSelector} makes.
 * An empty selector (`{}`) matches everything. In Kubernetes an absent
 * selector matches nothing; check for that before calling. Internal: the
 * checks of webhook selectors and the simulator's matching use it.
 *
 * @param selector `matchLabels` (each an equality) and `matchExpressions`
 *   (operators `In`, `NotIn` with at least one value; `Exists`,
 *   `DoesNotExist` with none).
 * @returns a matcher; requirements sorted by key.
 * @throws {TypeError} naming the offending field, for an unknown operator, a wrong number of values, or an invalid key or value.
 */
export function labelSelectorFromObject(selector: LabelSelectorObject): LabelSelector {
  if (selector === null || typeof selector !== 'object') throw new TypeError(`labelSelectorFromObject: selector must be an object, got ${describeValue(selector)}`);
  const requirements: LabelRequirement[] = [];
  const check = (where: string, problem: string | undefined): void => {
    if (problem !== undefined) throw new TypeError(`labelSelectorFromObject: ${where}: ${problem}`);
  };
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    check(`matchLabels[${JSON.stringify(key)}]`, labelKeyProblem(key));
    check(`matchLabels[${JSON.stringify(key)}]`, typeof value === 'string' ? labelValueProblem(value) : `value must be a string, got ${describeValue(value)}`);
    requirements.push({ key, operator: '=', values: [value] });
  }
  (selector.matchExpressions ?? []).forEach((expr, i) => {
    const where = `matchExpressions[${i}]`;
    const operator = EXPRESSION_OPERATORS[expr?.operator];
    if (operator === undefined || !Object.hasOwn(EXPRESSION_OPERATORS, expr.operator)) {
      throw new TypeError(`labelSelectorFromObject: ${where}.operator must be one of In, NotIn, Exists, DoesNotExist, got ${describeValue(expr?.operator)}`);
    }
    check(`${where}.key`, typeof expr.key === 'string' ? labelKeyProblem(expr.key) : `must be a string, got ${describeValue(expr.key)}`);
    const values = expr.values ?? [];
    if ((operator === 'in' || operator === 'notin') && values.length === 0) check(`${where}.values`, `operator ${expr.operator} needs at least one value`);
    if ((operator === 'exists' || operator === '!') && values.length > 0) check(`${where}.values`, `operator ${expr.operator} takes no values`);
    for (const v of values) check(`${where}.values`, typeof v === 'string' ? labelValueProblem(v) : `values must be strings, got ${describeValue(v)}`);
    requirements.push({ key: expr.key, operator, values: [...new Set(values)].sort() });
  });
  requirements.sort(compareRequirements);
  return new ParsedLabelSelector(requirements);
}
