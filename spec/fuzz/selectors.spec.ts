import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFieldSelector, parseLabelSelector, SelectorParseError, type FieldSelector, type LabelSelector } from '../../src/store/index.js';
import { labelSelectorFromObject } from '../../src/store/labelSelector.js';
import { bounded, nastyString, outcome, params, wildObject } from './fuzzKit.js';

/** A parse either succeeds or throws a SelectorParseError pointing inside (or just past) the input. */
function expectParsedOrTyped<S>(kind: 'label' | 'field', input: string, parse: (s: string) => S): S | undefined {
  const r = outcome(() => parse(input));
  if (r.ok) return r.value;
  expect(r.error, String(r.error)).toBeInstanceOf(SelectorParseError);
  const err = r.error as SelectorParseError;
  expect(err.selectorKind).toBe(kind);
  expect(err.input).toBe(input);
  expect(Number.isInteger(err.position) && err.position >= 0 && err.position <= input.length, `position ${err.position} of ${input.length}`).toBe(true);
  return undefined;
}

/** Text made of the label selector grammar's own pieces, so that many inputs get far into the parser. */
const labelText = fc
  .array(
    fc.oneof(
      fc.constantFrom('app', 'tier', 'x.io/name', 'a-b_c.d', 'in', 'notin', '(', ')', ',', '!', '=', '==', '!=', '>', '<', ' ', '\t', 'web', '', '5', '-3', '+7', '9223372036854775808', 'é', '/', 'A'.repeat(64)),
      nastyString,
    ),
    { maxLength: 14 },
  )
  .map((parts) => parts.join(''));

const labelKey = fc.constantFrom('app', 'tier', 'example.com/team', 'n');
const labelValue = fc.constantFrom('web', 'db', '', 'a.b', '7', '12');

/** Well-formed requirements, written with random spacing, and what they mean. */
const requirement = fc.oneof(
  fc.tuple(labelKey, fc.constantFrom('=', '==', '!='), labelValue).map(([k, op, v]) => ({ text: `${k}${op}${v}`, test: (l: Record<string, string>) => (op === '!=' ? l[k] !== v : l[k] === v) })),
  fc.tuple(labelKey, fc.constantFrom('in', 'notin'), fc.array(labelValue as fc.Arbitrary<string>, { minLength: 1, maxLength: 3 })).map(([k, op, vs]) => ({
    text: `${k} ${op} (${vs.join(',')})`,
    test: (l: Record<string, string>) => (op === 'in' ? l[k] !== undefined && vs.includes(l[k] as string) : l[k] === undefined || !vs.includes(l[k] as string)),
  })),
  labelKey.map((k) => ({ text: k, test: (l: Record<string, string>) => l[k] !== undefined })),
  labelKey.map((k) => ({ text: `!${k}`, test: (l: Record<string, string>) => l[k] === undefined })),
  // Negative bounds are no valid label values, for Kubernetes too ('-1' does not start with an alphanumeric).
  fc.tuple(labelKey, fc.constantFrom('>', '<'), fc.integer({ min: 0, max: 20 })).map(([k, op, n]) => ({
    text: `${k}${op}${n}`,
    test: (l: Record<string, string>) => l[k] !== undefined && /^[+-]?\d+$/.test(l[k] as string) && (op === '>' ? Number(l[k]) > n : Number(l[k]) < n),
  })),
);

/** Objects' labels may hold what no selector could name: '-2' and '+3' still compare as integers. */
const labelSet = fc.dictionary(labelKey, fc.oneof(labelValue, fc.constantFrom('-2', '+3', '007', '99999999999999999999', ' 7')), { maxKeys: 4 });

/** Label sets as they may arrive from a bad object: null, arrays, numbers, inherited keys, non-string values. */
const wildLabels: fc.Arbitrary<unknown> = fc.oneof(
  labelSet,
  fc.constant(undefined),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.integer(),
  fc.string(),
  fc.dictionary(fc.constantFrom('app', '__proto__', 'constructor', 'toString', 'hasOwnProperty'), fc.oneof(labelValue, fc.integer(), fc.constant(null), fc.object({ maxDepth: 1 }))),
  fc.constant(Object.create({ app: 'web' }) as unknown),
);

const fieldText = fc
  .array(
    fc.oneof(fc.constantFrom('metadata.name', 'spec.nodeName', 'status.phase', 'a..b', '.', '=', '==', '!=', '!', ',', '\\', '\\,', '\\=', '\\\\', '\\x', ' ', '\t', 'é', '😀', 'x'), nastyString),
    { maxLength: 14 },
  )
  .map((parts) => parts.join(''));

function labelsOf(v: unknown): Readonly<Record<string, string>> | undefined {
  return v as Readonly<Record<string, string>> | undefined;
}

describe('label selectors under bad input', () => {
  it('property: any text parses or throws a SelectorParseError with its position, in bounded time', () => {
    fc.assert(
      fc.property(fc.oneof(labelText, fc.string({ unit: 'binary', maxLength: 40 })), (text) => {
        bounded(() => expectParsedOrTyped('label', text, parseLabelSelector), 1_000);
      }),
      params(300),
    );
  });

  it('property: what parses prints canonically, re-parses to the same selector and matches any label set the same way, never throwing', () => {
    fc.assert(
      fc.property(labelText, fc.array(wildLabels, { maxLength: 6 }), (text, labelSets) => {
        const sel = expectParsedOrTyped<LabelSelector>('label', text, parseLabelSelector);
        if (sel === undefined) return;
        const again = parseLabelSelector(String(sel));
        expect(String(again)).toBe(String(sel));
        expect(again.requirements).toEqual(sel.requirements);
        for (const labels of labelSets) {
          const m = outcome(() => sel.matches(labelsOf(labels)));
          expect(m.ok, `matches threw ${String((m as { error?: unknown }).error)}`).toBe(true);
          expect(again.matches(labelsOf(labels))).toBe((m as { value: boolean }).value);
        }
      }),
      params(300),
    );
  });

  it('property: a selector built from the grammar means what its requirements say, however it is spaced', () => {
    fc.assert(
      fc.property(fc.array(requirement, { minLength: 1, maxLength: 4 }), fc.constantFrom(',', ' ,', ', ', '\t,\n'), fc.array(labelSet, { maxLength: 6 }), (reqs, sep, sets) => {
        const sel = parseLabelSelector(reqs.map((r) => r.text).join(sep));
        for (const labels of sets) expect(sel.matches(labels)).toBe(reqs.every((r) => r.test(labels)));
      }),
      params(300),
    );
  });

  it('property: structured selectors of any shape become a selector or a TypeError naming the field', () => {
    const expr = fc.record(
      {
        key: fc.oneof(labelKey, fc.integer(), fc.constant(null), nastyString),
        operator: fc.oneof(fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'in', 'toString', '__proto__', 'constructor'), fc.integer()),
        values: fc.oneof(fc.array(fc.oneof(labelValue, fc.integer(), nastyString), { maxLength: 3 }), fc.constant(undefined)),
      },
      { requiredKeys: [] },
    );
    const selector = fc.oneof(
      fc.record({ matchLabels: fc.oneof(fc.dictionary(fc.oneof(labelKey, nastyString), fc.oneof(labelValue, fc.integer(), fc.constant(null))), fc.constant(undefined)), matchExpressions: fc.oneof(fc.array(fc.oneof(expr, fc.constant(null)), { maxLength: 3 }), fc.constant(undefined)) }, { requiredKeys: [] }),
      fc.anything({ maxDepth: 2 }),
    );
    fc.assert(
      fc.property(selector, (s) => {
        const r = outcome(() => labelSelectorFromObject(s as never));
        if (r.ok) {
          expect(String(parseLabelSelector(String(r.value)))).toBe(String(r.value));
          return;
        }
        expect(r.error, String(r.error)).toBeInstanceOf(TypeError);
        expect((r.error as TypeError).message).toMatch(/^labelSelectorFromObject: /);
      }),
      params(300),
    );
  });
});

describe('field selectors under bad input', () => {
  it('property: any text parses or throws a SelectorParseError with its position, in bounded time', () => {
    fc.assert(
      fc.property(fc.oneof(fieldText, fc.string({ unit: 'binary', maxLength: 40 })), (text) => {
        bounded(() => expectParsedOrTyped('field', text, parseFieldSelector), 1_000);
      }),
      params(300),
    );
  });

  it('property: what parses prints back to text that re-parses to the same requirements, and matches any object without throwing', () => {
    fc.assert(
      fc.property(fieldText, fc.array(wildObject, { maxLength: 5 }), (text, objects) => {
        const sel = expectParsedOrTyped<FieldSelector>('field', text, parseFieldSelector);
        if (sel === undefined) return;
        const again = parseFieldSelector(String(sel));
        expect(again.requirements).toEqual(sel.requirements);
        for (const obj of objects) {
          const m = outcome(() => sel.matches(obj));
          expect(m.ok, `matches threw ${String((m as { error?: unknown }).error)}`).toBe(true);
          expect(again.matches(obj)).toBe((m as { value: boolean }).value);
        }
      }),
      params(300),
    );
  });

  it('property: a value of any text, escaped, parses back to itself and matches exactly that value', () => {
    fc.assert(
      fc.property(fc.oneof(nastyString, fc.string({ unit: 'binary' })), fc.constantFrom('=', '==', '!='), (value, op) => {
        const escaped = value.replace(/[\\,=]/g, (ch) => `\\${ch}`);
        const sel = parseFieldSelector(`metadata.name${op}${escaped}`);
        expect(sel.requirements).toEqual([{ field: 'metadata.name', op, value }]);
        expect(sel.matches({ metadata: { name: value } })).toBe(op !== '!=');
        expect(sel.matches({ metadata: { name: `${value}x` } })).toBe(op === '!=');
      }),
      params(300),
    );
  });

  it("splits a term at its first operator and refuses '\\' and '!' in paths, so that every selector prints back to itself", () => {
    // Found by the round-trip property: '\\ !=' read as path '\\' (the space escaped) printed as '\\!=', which read back as path '\\!'.
    for (const text of ['\\ !=', 'a! =x', 'a\\=b=c', 'a\\,b=c', 'a!b=c']) {
      const r = outcome(() => parseFieldSelector(text));
      expect(r.ok, text).toBe(false);
      expect((r as { error: unknown }).error, text).toBeInstanceOf(SelectorParseError);
    }
    expect(parseFieldSelector('a!=b').requirements).toEqual([{ field: 'a', op: '!=', value: 'b' }]);
    expect(parseFieldSelector(' spec.x ==a\\=').requirements).toEqual([{ field: 'spec.x', op: '==', value: 'a=' }]);
  });

  it('matches huge, deep and oddly typed fields without throwing', () => {
    const sel = parseFieldSelector('spec.a.b=1,metadata.name!=x');
    let deep: unknown = { b: 1 };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(sel.matches({ spec: { a: { b: 1 } } })).toBe(true);
    expect(sel.matches({ spec: { a: { b: '1' } } })).toBe(true);
    expect(sel.matches({ spec: { a: deep } })).toBe(false);
    expect(sel.matches({ spec: { a: { b: Infinity } } })).toBe(false);
    expect(sel.matches({ spec: { a: null } })).toBe(false);
    expect(sel.matches({ spec: 'a.b' })).toBe(false);
    expect(sel.matches(Object.create({ spec: { a: { b: 1 } } }))).toBe(false);
    expect(parseFieldSelector('spec.a.b=Infinity').matches({ spec: { a: { b: Infinity } } })).toBe(true);
  });
});
