import { describe, expect, it } from 'vitest';
import { goFloat, goJson, goNumber, goQuote } from '../../../src/testing/crd/schema/goText.js';

describe('Go text', () => {
  it('quotes as strconv.Quote', () => {
    expect(goQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goQuote('\t\n\x07\x1b\x7f')).toBe('"\\t\\n\\a\\x1b\\x7f"');
    expect(goQuote('é ✓ 😀')).toBe('"é ✓ 😀"');
    expect(goQuote('\u00a0\u200b\u{e0001}')).toBe('"\\u00a0\\u200b\\U000e0001"');
    expect(goQuote('\ud800')).toBe('"\\ufffd"');
  });

  it('prints numbers as %v: int64 as digits, float64 shortest with an exponent from 1e6', () => {
    expect(goNumber(60)).toBe('60');
    expect(goNumber(-(2 ** 62))).toBe('-4611686018427387904');
    expect(goNumber(1.5)).toBe('1.5');
    expect(goFloat(1e6)).toBe('1e+06');
    expect(goFloat(123456.5)).toBe('123456.5');
    expect(goFloat(1234567.5)).toBe('1.2345675e+06');
    expect(goFloat(0.0001)).toBe('0.0001');
    expect(goFloat(0.00001)).toBe('1e-05');
    expect(goNumber(2 ** 64)).toBe('1.8446744073709552e+19');
  });

  it('marshals as encoding/json: sorted keys, HTML-safe', () => {
    expect(goJson({ b: 1, a: ['<&>', null, 1.5, 1e21] })).toBe('{"a":["\\u003c\\u0026\\u003e",null,1.5,1e+21],"b":1}');
  });
});
