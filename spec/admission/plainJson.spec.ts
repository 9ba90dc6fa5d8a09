import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asJson } from '../../src/admission/patch.js';
import { cloneRequestObject, isPlainJson } from '../../src/admission/plainJson.js';

// What a review body parses to: JSON values, `__proto__` keys included.
const parsedJson = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);

describe('cloneRequestObject', () => {
  it('gives what structuredClone gives for parsed JSON, sharing nothing with the value', () => {
    fc.assert(
      fc.property(parsedJson, (value) => {
        const copy = cloneRequestObject(value);
        expect(copy).toStrictEqual(structuredClone(value));
        if (typeof value === 'object' && value !== null) expect(copy).not.toBe(value);
        expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
      }),
    );
  });

  it('keeps a __proto__ key an own property, as structuredClone does', () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const copy = cloneRequestObject(value);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
  });

  it('leaves what is not plain data to structuredClone: shared and cyclic values, dates, null prototypes, holes', () => {
    const shared = { x: 1 };
    const twice = cloneRequestObject({ a: shared, b: shared });
    expect(twice.a).toBe(twice.b);
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic['self'] = cyclic;
    const cycleCopy = cloneRequestObject(cyclic);
    expect(cycleCopy['self']).toBe(cycleCopy);
    expect(cloneRequestObject({ at: new Date(5) }).at).toEqual(new Date(5));
    expect(Object.getPrototypeOf(cloneRequestObject(Object.assign(Object.create(null) as object, { a: 1 })))).toBe(Object.prototype);
    const holes = [1, , 3];
    expect(cloneRequestObject(holes)).toStrictEqual(structuredClone(holes));
  });

  it('throws what structuredClone throws', () => {
    expect(() => cloneRequestObject({ f: () => 1 })).toThrow(DOMException);
    let deep: unknown = {};
    for (let i = 0; i < 200_000; i++) deep = { deep };
    expect(() => cloneRequestObject(deep)).toThrow(RangeError);
  });
});

describe('isPlainJson and asJson', () => {
  it('asJson gives what a JSON round trip gives, for any value', () => {
    const values = fc.oneof(
      parsedJson,
      fc.anything({ withDate: true, withNullPrototype: true, withSparseArray: true, withBoxedValues: true, withMap: true, withSet: true }),
    );
    fc.assert(
      fc.property(values, (value) => {
        const text = JSON.stringify(value);
        expect(asJson(value)).toStrictEqual(text === undefined ? undefined : JSON.parse(text));
      }),
    );
  });

  it('is true for parsed JSON, false for what JSON would change', () => {
    fc.assert(fc.property(parsedJson, (value) => isPlainJson(value)));
    for (const changed of [{ a: undefined }, [undefined], { n: NaN }, { n: Infinity }, { d: new Date(0) }, { toJSON: 1 }, [1, , 2], Object.create(null) as object, 1n, () => 1]) {
      expect(isPlainJson(changed)).toBe(false);
    }
    const extra = Object.assign([1], { x: 2 });
    expect(isPlainJson(extra)).toBe(false);
  });

  it('still refuses a cycle as JSON does', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => asJson(cyclic)).toThrow(TypeError);
  });
});
