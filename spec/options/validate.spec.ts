import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { booleanOption, checkOptionNames, describeValue, functionOption, numberOption, oneOf, optionNames } from '../../src/options/validate.js';

describe('describeValue: one way to name a bad value', () => {
  it('names primitives as written and strings quoted', () => {
    expect(describeValue('x')).toBe('"x"');
    expect(describeValue(-1)).toBe('-1');
    expect(describeValue(NaN)).toBe('NaN');
    expect(describeValue(Infinity)).toBe('Infinity');
    expect(describeValue(undefined)).toBe('undefined');
    expect(describeValue(null)).toBe('null');
    expect(describeValue(true)).toBe('true');
    expect(describeValue(10n)).toBe('10');
    expect(describeValue(Symbol('s'))).toBe('Symbol(s)');
  });

  it('names functions, arrays and objects by shape, never by what they hold', () => {
    function keyOf(): void {}
    expect(describeValue(keyOf)).toBe('function keyOf');
    expect(describeValue(() => undefined)).toBe('function (anonymous)');
    expect(describeValue([])).toBe('[]');
    expect(describeValue([1, 2, 3])).toBe('an array of 3');
    expect(describeValue({})).toBe('{}');
    expect(describeValue(Object.create(null))).toBe('{}');
    expect(describeValue(new Map())).toBe('a Map');
    // An option object may hold credentials: only its keys are named.
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }], users: [{ name: 'u', token: 'secret-token' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    const shown = describeValue({ name: 'eu', kubeConfig: kc });
    expect(shown).toBe('an object with keys ["name","kubeConfig"]');
    expect(describeValue(kc)).toBe('a KubeConfig');
    expect(`${shown} ${describeValue(kc)}`).not.toContain('secret-token');
  });

  it('does not throw on values that throw when looked at', () => {
    const hostile = new Proxy({}, { getPrototypeOf: () => { throw new Error('no'); } });
    expect(describeValue(hostile)).toBe('an object');
  });
});

describe('the option checks', () => {
  it('refuse a non-object and an unknown option, naming where and the option', () => {
    expect(() => checkOptionNames('thing', 5, ['a'])).toThrow(new TypeError('thing: options must be an object, got 5'));
    expect(() => checkOptionNames('thing', { a: 1, b: 2 }, ['a'])).toThrow(new TypeError('thing: unknown option "b"'));
    expect(checkOptionNames('thing', { a: 1 }, ['a'])).toEqual({ a: 1 });
  });

  it('optionNames lists every key of the interface, and the compiler refuses a missing or an extra one', () => {
    interface Opts {
      readonly a?: number;
      readonly b: string;
    }
    expect(optionNames<Opts>({ a: true, b: true })).toEqual(['a', 'b']);
    // @ts-expect-error b is missing
    optionNames<Opts>({ a: true });
    // @ts-expect-error c is not an option of Opts
    optionNames<Opts>({ a: true, b: true, c: true });
    expectTypeOf(optionNames<Opts>({ a: true, b: true })).toEqualTypeOf<readonly ('a' | 'b')[]>();
  });

  it('optionNames of a union lists the keys of every member, not only the shared ones', () => {
    type Where = { readonly service: { readonly name: string } } | { readonly url: string };
    expect(optionNames<Where>({ service: true, url: true })).toEqual(['service', 'url']);
    // @ts-expect-error url, a key of one member only, is missing
    optionNames<Where>({ service: true });
  });

  it('numbers: the fallback for undefined, else within bounds', () => {
    expect(numberOption('thing', 'n', undefined, 7)).toBe(7);
    expect(numberOption('thing', 'n', 0, 7)).toBe(0);
    expect(() => numberOption('thing', 'n', -1, 7)).toThrow(new TypeError('thing: option "n" must be a finite number >= 0, got -1'));
    expect(() => numberOption('thing', 'n', 1.5, 7, { min: 1, integer: true })).toThrow(new TypeError('thing: option "n" must be an integer >= 1, got 1.5'));
    expect(() => numberOption('thing', 'n', Infinity, 7)).toThrow(/got Infinity/);
    expect(numberOption('thing', 'n', Infinity, 7, { finite: false })).toBe(Infinity);
    expect(() => numberOption('thing', 'n', '5', 7)).toThrow(/got "5"/);
    expect(numberOption('thing', 'n', 10, 7, { min: 1, max: 10, integer: true })).toBe(10);
    expect(() => numberOption('thing', 'n', 11, 7, { min: 1, max: 10, integer: true })).toThrow(new TypeError('thing: option "n" must be an integer from 1 to 10, got 11'));
  });

  it('booleans, functions and a choice of strings', () => {
    expect(booleanOption('thing', 'b', undefined, true)).toBe(true);
    expect(booleanOption('thing', 'b', false, true)).toBe(false);
    expect(() => booleanOption('thing', 'b', 'yes', true)).toThrow(new TypeError('thing: option "b" must be a boolean, got "yes"'));
    expect(functionOption('thing', 'f', undefined)).toBeUndefined();
    expect(() => functionOption('thing', 'f', {})).toThrow(new TypeError('thing: option "f" must be a function, got {}'));
    expect(oneOf('thing', 'mode', undefined, ['a', 'b'], 'a')).toBe('a');
    expect(oneOf('thing', 'mode', 'b', ['a', 'b'], 'a')).toBe('b');
    expect(() => oneOf('thing', 'mode', 'c', ['a', 'b'], 'a')).toThrow(new TypeError('thing: option "mode" must be one of "a", "b", got "c"'));
  });
});
