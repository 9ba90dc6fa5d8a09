import { describe, expect, it } from 'vitest';
import type { V1LabelSelector } from '@kubernetes/client-node';
import { parseLabelSelector, SelectorParseError } from '../../src/store/index.js';
import { labelSelectorFromObject } from '../../src/store/labelSelector.js';

function parseError(input: string): SelectorParseError {
  try {
    parseLabelSelector(input);
  } catch (err) {
    expect(err).toBeInstanceOf(SelectorParseError);
    return err as SelectorParseError;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

describe('parseLabelSelector: matching', () => {
  const cases: readonly [selector: string, labels: Record<string, string> | undefined, expected: boolean][] = [
    ['app=web', { app: 'web' }, true],
    ['app=web', { app: 'api' }, false],
    ['app=web', {}, false],
    ['app=web', undefined, false],
    ['app==web', { app: 'web' }, true],
    ['app==web', { app: 'api' }, false],
    ['env!=prod', { env: 'dev' }, true],
    ['env!=prod', { env: 'prod' }, false],
    ['env!=prod', {}, true],
    ['tier in (a,b)', { tier: 'a' }, true],
    ['tier in (a,b)', { tier: 'b' }, true],
    ['tier in (a,b)', { tier: 'c' }, false],
    ['tier in (a,b)', {}, false],
    ['tier in (a)', { tier: 'a' }, true],
    ['tier notin (a)', { tier: 'a' }, false],
    ['tier notin (a)', { tier: 'b' }, true],
    ['tier notin (a)', {}, true],
    ['canary', { canary: '' }, true],
    ['canary', { canary: 'yes' }, true],
    ['canary', {}, false],
    ['!canary', {}, true],
    ['!canary', undefined, true],
    ['!canary', { canary: '' }, false],
    ['replicas>5', { replicas: '6' }, true],
    ['replicas>5', { replicas: '5' }, false],
    ['replicas>5', { replicas: 'many' }, false],
    ['replicas>5', {}, false],
    ['replicas<5', { replicas: '-7' }, true],
    ['replicas<5', { replicas: '5' }, false],
    ['app=', { app: '' }, true],
    ['app=', { app: 'web' }, false],
    ['app=', {}, false],
    ['app in ()', { app: '' }, true],
    ['app in ()', { app: 'x' }, false],
    ['app in (,x)', { app: '' }, true],
    ['app in (x,)', { app: '' }, true],
    ['app in (x,,y)', { app: '' }, true],
    ['app in (x,,y)', { app: 'y' }, true],
    ['a=in', { a: 'in' }, true],
    ['a in (in,notin)', { a: 'notin' }, true],
    ['example.com/app=web', { 'example.com/app': 'web' }, true],
    ['', undefined, true],
    ['', { any: 'thing' }, true],
    // Requirements are ANDed.
    ['app=web,tier in (a,b),!canary', { app: 'web', tier: 'a' }, true],
    ['app=web,tier in (a,b),!canary', { app: 'web', tier: 'a', canary: '' }, false],
    ['app=web,tier in (a,b),!canary', { app: 'web', tier: 'c' }, false],
    ['app=web,tier in (a,b),!canary', { app: 'api', tier: 'a' }, false],
  ];
  it.each(cases)('%j on %j → %s', (selector, labels, expected) => {
    expect(parseLabelSelector(selector).matches(labels)).toBe(expected);
  });

  it('never takes a label from Object.prototype', () => {
    expect(parseLabelSelector('constructor').matches({})).toBe(false);
    expect(parseLabelSelector('!constructor').matches({})).toBe(true);
    expect(parseLabelSelector('toString notin (x)').matches({})).toBe(true);
    expect(parseLabelSelector('constructor').matches({ constructor: 'x' })).toBe(true);
  });

  it('compares integers beyond 2^53 exactly', () => {
    expect(parseLabelSelector('n>9007199254740992').matches({ n: '9007199254740993' })).toBe(true);
  });
});

describe('parseLabelSelector: structure', () => {
  it('tolerates whitespace between tokens', () => {
    const loose = parseLabelSelector('  app = web ,\ttier   in(a , b)  ,! canary ,x\n');
    expect(String(loose)).toBe(String(parseLabelSelector('app=web,tier in (a,b),!canary,x')));
  });

  it('is empty for the empty or blank string and matches everything', () => {
    for (const s of ['', '   ', '\t\n']) {
      const sel = parseLabelSelector(s);
      expect(sel.empty).toBe(true);
      expect(sel.requirements).toEqual([]);
      expect(String(sel)).toBe('');
    }
    expect(parseLabelSelector('a').empty).toBe(false);
  });

  it('sorts requirements by key and set values, de-duplicated', () => {
    const sel = parseLabelSelector('z in (b,a,b),a!=1,m');
    expect(sel.requirements).toEqual([
      { key: 'a', operator: '!=', values: ['1'] },
      { key: 'm', operator: 'exists', values: [] },
      { key: 'z', operator: 'in', values: ['a', 'b'] },
    ]);
    expect(String(sel)).toBe('a!=1,m,z in (a,b)');
  });

  it('prints every operator in canonical form and re-parses to the same selector', () => {
    const text = 'a=1,b==2,c!=3,d in (x,y),e notin (z),f,!g,h>4,i<5';
    const sel = parseLabelSelector(text);
    expect(sel.requirements.map((r) => r.operator)).toEqual(['=', '==', '!=', 'in', 'notin', 'exists', '!', 'gt', 'lt']);
    expect(String(sel)).toBe(text);
    expect(String(parseLabelSelector(String(sel)))).toBe(text);
  });

  it('hands out frozen requirements', () => {
    const sel = parseLabelSelector('a in (x)');
    expect(Object.isFrozen(sel.requirements)).toBe(true);
    expect(Object.isFrozen(sel.requirements[0])).toBe(true);
    expect(Object.isFrozen(sel.requirements[0]?.values)).toBe(true);
  });

  it('accepts keys with a DNS prefix and names up to 63 characters', () => {
    expect(() => parseLabelSelector(`app.kubernetes.io/${'n'.repeat(63)}=x`)).not.toThrow();
    expect(() => parseLabelSelector(`a=${'v'.repeat(63)}`)).not.toThrow();
    expect(() => parseLabelSelector('A_b.c-D=E_f.g-H')).not.toThrow();
  });

  it('rejects a non-string with a TypeError', () => {
    expect(() => parseLabelSelector(42 as unknown as string)).toThrow(TypeError);
  });
});

describe('parseLabelSelector: errors', () => {
  const cases: readonly [input: string, position: number, reason: RegExp][] = [
    ['tier in a', 8, /found 'a', expected '\('/],
    ['a,', 2, /expected a label key or '!' after ','/],
    [',a', 0, /found ',', expected '!', a label key/],
    ['a=b c', 4, /found 'c', expected ',' or end of string/],
    ['x in (a', 7, /found 'end of string'/],
    ['x in (a b)', 8, /found 'b', expected ',' or '\)'/],
    ['!a=b', 2, /found '=', expected ',' or end of string/],
    ['!', 1, /expected a label key after '!'/],
    ['!=a', 0, /found '!='/],
    ['in=a', 0, /found 'in'/],
    ['a=(', 2, /found '\(', expected a label value/],
    ['a (b)', 2, /found '\(', expected one of/],
    ['Foo_=x', 0, /label key name "Foo_"/],
    ['a/b/c=x', 0, /more than one '\/'/],
    ['/a=x', 0, /empty prefix/],
    ['Example.com/a=x', 0, /prefix "Example.com" must be a lowercase DNS subdomain/],
    ['example.com/=x', 0, /empty name/],
    [`${'k'.repeat(64)}=x`, 0, /at most 63 characters \(got 64\)/],
    [`a=${'v'.repeat(64)}`, 2, /label value must be at most 63 characters/],
    ['a=-v', 2, /label value "-v"/],
    ['a in (x,-v)', 5, /label value "-v"/],
    ['a>b', 2, /64-bit integer, got "b"/],
    ['a>', 2, /64-bit integer, got ""/],
    ['a<9223372036854775808', 2, /64-bit integer/],
  ];
  it.each(cases)('%j fails at %i', (input, position, reason) => {
    const err = parseError(input);
    expect(err.position).toBe(position);
    expect(err.reason).toMatch(reason);
    expect(err.input).toBe(input);
    expect(err.selectorKind).toBe('label');
    expect(err.name).toBe('SelectorParseError');
    expect(err.message).toBe(`invalid label selector ${JSON.stringify(input)} at position ${position}: ${err.reason}`);
  });
});

describe('labelSelectorFromObject', () => {
  it('turns matchLabels into equalities and matchExpressions into set requirements', () => {
    const sel = labelSelectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['b', 'a', 'b'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'team', operator: 'Exists' },
        { key: 'canary', operator: 'DoesNotExist', values: [] },
      ],
    });
    expect(String(sel)).toBe('app=web,!canary,env notin (prod),team,tier in (a,b)');
    expect(sel.matches({ app: 'web', tier: 'a', team: 'x' })).toBe(true);
    expect(sel.matches({ app: 'web', tier: 'a', team: 'x', env: 'prod' })).toBe(false);
    expect(sel.matches({ app: 'web', tier: 'a' })).toBe(false);
    expect(sel.matches({ app: 'web', tier: 'a', team: 'x', canary: '' })).toBe(false);
  });

  it('accepts client-node V1LabelSelector and matches everything when empty', () => {
    const fromServer: V1LabelSelector = {};
    const sel = labelSelectorFromObject(fromServer);
    expect(sel.empty).toBe(true);
    expect(sel.matches(undefined)).toBe(true);
    expect(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }).empty).toBe(true);
  });

  it('rejects bad selectors, naming the field', () => {
    expect(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] })).toThrow(
      new TypeError('labelSelectorFromObject: matchExpressions[0].operator must be one of In, NotIn, Exists, DoesNotExist, got "in"'),
    );
    expect(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'constructor' }] })).toThrow(/operator must be one of/);
    expect(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In' }] })).toThrow(
      new TypeError('labelSelectorFromObject: matchExpressions[0].values: operator In needs at least one value'),
    );
    expect(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).toThrow(/operator Exists takes no values/);
    expect(() => labelSelectorFromObject({ matchExpressions: [{ key: 'Bad_', operator: 'Exists' }] })).toThrow(/matchExpressions\[0\]\.key: label key name "Bad_"/);
    expect(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: ['-x'] }] })).toThrow(/matchExpressions\[0\]\.values: label value "-x"/);
    expect(() => labelSelectorFromObject({ matchLabels: { 'a/b/c': 'x' } })).toThrow(/matchLabels\["a\/b\/c"\]: .*more than one/);
    expect(() => labelSelectorFromObject({ matchLabels: { a: '-x' } })).toThrow(/matchLabels\["a"\]: label value "-x"/);
    expect(() => labelSelectorFromObject(null as never)).toThrow(new TypeError('labelSelectorFromObject: selector must be an object, got null'));
  });
});
