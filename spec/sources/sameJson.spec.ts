import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sameJson } from '../../src/sources/sameJson.js';

/** sameJson over the whole of `text`: whether the bytes are taken as `value`, and all of them read. */
function same(text: string | Buffer, value: unknown): boolean {
  const buf = typeof text === 'string' ? Buffer.from(text) : text;
  return sameJson(buf, 0, buf.length, value, 0) === buf.length;
}

/** Equal as PF-50 needs it: what JSON.parse gives, key order included, -0 apart from 0. */
function identical(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => identical((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

describe('sameJson: whether JSON bytes spell a value held (PF-50)', () => {
  it('takes the bytes of every kind of JSON value as the value JSON.parse makes of them', () => {
    const texts = [
      '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
      '[]',
      '{}',
      '""',
      '"plain"',
      '"\\n\\t\\r\\b\\f\\/\\\\\\""',
      '"\\u003chtml\\u003e \\u0026 \\u2028"',
      '"é ü 日本 😀"',
      '"\\ud83d\\ude00 and a lone \\ud800"',
      '0',
      '-0',
      '12',
      '-12',
      '123456789012345',
      '12345678901234567890',
      '1.5',
      '-0.0',
      '1e3',
      '1E+3',
      '2.5e-3',
      '0.1',
      ' { "a" : [ 1 , 2 ] , "b" : "c" } ',
    ];
    for (const text of texts) {
      const value = JSON.parse(text);
      const buf = Buffer.from(text.trim());
      expect(sameJson(buf, 0, buf.length, value, 0), text).toBe(buf.length);
    }
  });

  it('tells apart what differs in any way JSON.parse would show', () => {
    expect(same('{"a":1,"b":2}', { b: 2, a: 1 })).toBe(false);
    expect(same('{"a":1}', { a: 1, b: 2 })).toBe(false);
    expect(same('{"a":1,"b":2}', { a: 1 })).toBe(false);
    expect(same('[1,2]', [1, 2, 3])).toBe(false);
    expect(same('[1,2,3]', [1, 2])).toBe(false);
    expect(same('{"a":[]}', { a: {} })).toBe(false);
    expect(same('[]', {})).toBe(false);
    expect(same('0', -0)).toBe(false);
    expect(same('-0', 0)).toBe(false);
    expect(same('1', '1')).toBe(false);
    expect(same('"1"', 1)).toBe(false);
    expect(same('null', undefined)).toBe(false);
    expect(same('true', 1)).toBe(false);
    expect(same('"ab"', 'abc')).toBe(false);
    expect(same('"abc"', 'ab')).toBe(false);
    expect(same('"a\\u0062"', 'ac')).toBe(false);
    expect(same('"é"', 'e')).toBe(false);
    expect(same('1.5', 1.25)).toBe(false);
    expect(same('12345678901234567890', 12345678901234567000 + 4096)).toBe(false);
  });

  it('takes no bytes that JSON.parse would refuse or read otherwise, even where they would spell the value', () => {
    const cases: [string | Buffer, unknown][] = [
      ['01', 1],
      ['1.', 1],
      ['.5', 0.5],
      ['1e', 1],
      ['+1', 1],
      ['-', 0],
      ['tru', true],
      ['nul', null],
      ['"\\x41"', 'A'],
      ['"\\u00G1"', 'A'],
      ['"a\nb"', 'a\nb'],
      ['"a\tb"', 'a\tb'],
      ['"abc', 'abc'],
      ['{"a":1,}', { a: 1 }],
      ['{"a":1', { a: 1 }],
      ['{"a" 1}', { a: 1 }],
      ['[1,]', [1]],
      ['[1 2]', [1, 2]],
      // What UTF-8 decoding would replace with U+FFFD: a lone byte, an overlong form, a surrogate half, a cut sequence.
      [Buffer.from([0x22, 0xe9, 0x22]), '\ufffd'],
      [Buffer.from([0x22, 0xe9, 0x22]), 'é'],
      [Buffer.from([0x22, 0xc0, 0xaf, 0x22]), '/'],
      [Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), '\ud800'],
      [Buffer.from([0x22, 0xf0, 0x9f, 0x98, 0x22]), '\ufffd'],
    ];
    for (const [text, value] of cases) expect(same(text, value), String(text)).toBe(false);
  });

  it('gives up below 64 levels, where the bytes are parsed instead', () => {
    let deep: unknown = 1;
    let text = '1';
    for (let i = 0; i < 70; i++) {
      deep = [deep];
      text = `[${text}]`;
    }
    expect(same(text, deep)).toBe(false);
    expect(same(text.slice(10, -10), JSON.parse(text.slice(10, -10)))).toBe(true);
  });

  it('reads no further than it is told to', () => {
    const buf = Buffer.from('{"a":"bc"}');
    expect(sameJson(buf, 0, buf.length - 1, { a: 'bc' }, 0)).toBe(-1);
    expect(sameJson(buf, 5, buf.length - 2, 'bc', 0)).toBe(-1);
    expect(sameJson(buf, 5, buf.length - 1, 'bc', 0)).toBe(buf.length - 1);
  });

  it('agrees with JSON.parse on any value and any other value, compared whole', () => {
    const value = fc.jsonValue({ maxDepth: 4 });
    fc.assert(
      fc.property(value, value, fc.boolean(), (a, b, spaced) => {
        const text = JSON.stringify(a, null, spaced ? 1 : undefined);
        const parsed: unknown = JSON.parse(text);
        expect(same(text, parsed)).toBe(true);
        expect(same(text, b)).toBe(identical(parsed, b));
      }),
      { numRuns: 500, seed: 50 },
    );
  });

  it('agrees with JSON.parse on bytes changed at random, taking nothing it would read otherwise', () => {
    const sample = Buffer.from(JSON.stringify({ a: [1, -0.5, 'x\u00e9\u{1f600}'], b: { c: null, d: true, e: '\\"<>&' }, f: 1e21 }));
    const value: unknown = JSON.parse(sample.toString());
    fc.assert(
      fc.property(fc.nat(sample.length - 1), fc.integer({ min: 0, max: 255 }), (at, byte) => {
        const changed = Buffer.from(sample);
        changed[at] = byte;
        let parsed: unknown;
        try {
          parsed = JSON.parse(changed.toString('utf8'));
        } catch {
          expect(same(changed, value)).toBe(false);
          return;
        }
        // A byte that decodes to U+FFFD is a difference for sameJson even where the parse would not see one.
        if (same(changed, value)) expect(identical(parsed, value)).toBe(true);
      }),
      { numRuns: 2000, seed: 51 },
    );
  });
});
