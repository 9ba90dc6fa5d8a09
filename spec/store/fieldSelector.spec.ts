import { describe, expect, it } from 'vitest';
import { parseFieldSelector, SelectorParseError } from '../../src/store/index.js';
import { escapeFieldValue } from '../../src/store/fieldSelector.js';

function parseError(input: string): SelectorParseError {
  try {
    parseFieldSelector(input);
  } catch (err) {
    expect(err).toBeInstanceOf(SelectorParseError);
    return err as SelectorParseError;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

const pod = {
  metadata: { namespace: 'shop', name: 'web-1', creationTimestamp: new Date('2024-05-01T10:00:00Z') },
  spec: { nodeName: 'node-1', replicas: 3, paused: false, containers: [{ name: 'c' }], tolerations: null },
  status: { phase: 'Running' },
};

describe('parseFieldSelector: parsing', () => {
  it('parses =, == and != with dotted paths', () => {
    expect(parseFieldSelector('metadata.name=web-1,status.phase!=Failed,spec.nodeName==node-1').requirements).toEqual([
      { field: 'metadata.name', op: '=', value: 'web-1' },
      { field: 'status.phase', op: '!=', value: 'Failed' },
      { field: 'spec.nodeName', op: '==', value: 'node-1' },
    ]);
  });

  it('takes the first operator, so "!=" is not read as a field ending in "!"', () => {
    expect(parseFieldSelector('a!=b').requirements).toEqual([{ field: 'a', op: '!=', value: 'b' }]);
    expect(parseFieldSelector('a==b').requirements).toEqual([{ field: 'a', op: '==', value: 'b' }]);
  });

  it('resolves \\, \\= and \\\\ in values and does not split on an escaped comma', () => {
    const sel = parseFieldSelector('a=x\\,y,b=p\\=q,c=back\\\\slash');
    expect(sel.requirements).toEqual([
      { field: 'a', op: '=', value: 'x,y' },
      { field: 'b', op: '=', value: 'p=q' },
      { field: 'c', op: '=', value: 'back\\slash' },
    ]);
    expect(String(sel)).toBe('a=x\\,y,b=p\\=q,c=back\\\\slash');
    expect(parseFieldSelector(String(sel)).requirements).toEqual(sel.requirements);
  });

  it('is empty for "" and skips empty terms', () => {
    const none = parseFieldSelector('');
    expect(none.empty).toBe(true);
    expect(none.matches(undefined)).toBe(true);
    expect(String(none)).toBe('');
    expect(parseFieldSelector('a=1,,b=2,').requirements.map((r) => r.field)).toEqual(['a', 'b']);
  });

  it('trims the path but keeps the value literal', () => {
    expect(parseFieldSelector(' metadata.name =  x ').requirements).toEqual([{ field: 'metadata.name', op: '=', value: '  x ' }]);
  });

  it('hands out frozen requirements', () => {
    const sel = parseFieldSelector('a=b');
    expect(Object.isFrozen(sel.requirements)).toBe(true);
    expect(Object.isFrozen(sel.requirements[0])).toBe(true);
  });

  it('rejects a non-string with a TypeError', () => {
    expect(() => parseFieldSelector(undefined as unknown as string)).toThrow(TypeError);
  });
});

describe('parseFieldSelector: matching', () => {
  const cases: readonly [selector: string, expected: boolean][] = [
    ['metadata.name=web-1', true],
    ['metadata.name==web-1', true],
    ['metadata.name=web-2', false],
    ['metadata.name!=web-2', true],
    ['metadata.name!=web-1', false],
    ['metadata.namespace=shop,status.phase=Running', true],
    ['metadata.namespace=shop,status.phase=Pending', false],
    // Numbers and booleans compare as their text.
    ['spec.replicas=3', true],
    ['spec.paused=false', true],
    // A missing field, or null, is "".
    ['spec.schedulerName=', true],
    ['spec.schedulerName!=', false],
    ['spec.tolerations=', true],
    ['status.phase.deeper=', true],
    ['nothing.at.all=x', false],
    // Objects and arrays equal no value.
    ['spec.containers=', false],
    ['spec.containers!=', true],
    ['spec=', false],
    // Timestamps decoded to Date compare in their wire form.
    ['metadata.creationTimestamp=2024-05-01T10:00:00Z', true],
    // Array elements by index.
    ['spec.containers.0.name=c', true],
    // Never a property inherited from Object.prototype.
    ['constructor=', true],
    ['spec.toString=', true],
  ];
  it.each(cases)('%j → %s', (selector, expected) => {
    expect(parseFieldSelector(selector).matches(pod)).toBe(expected);
  });

  it('treats a non-object as having no fields', () => {
    expect(parseFieldSelector('a=').matches(null)).toBe(true);
    expect(parseFieldSelector('a=x').matches(null)).toBe(false);
    expect(parseFieldSelector('a=x').matches('a=x')).toBe(false);
  });
});

describe('parseFieldSelector: errors', () => {
  const cases: readonly [input: string, position: number, reason: RegExp][] = [
    ['a', 0, /has no operator/],
    ['a=b,c', 4, /"c" has no operator/],
    ['a=b=c', 3, /unescaped '=' in a value/],
    ['a==b=c', 4, /unescaped '='/],
    ['a=b\\', 3, /unfinished escape/],
    ['a=\\x', 2, /invalid escape sequence '\\x'/],
    ['=b', 0, /missing field path before '='/],
    ['x=1,!=b', 4, /missing field path before '!='/],
    ['a..b=c', 0, /invalid field path "a..b"/],
    ['.a=c', 0, /invalid field path/],
    ['a b=c', 0, /invalid field path "a b"/],
  ];
  it.each(cases)('%j fails at %i', (input, position, reason) => {
    const err = parseError(input);
    expect(err.position).toBe(position);
    expect(err.reason).toMatch(reason);
    expect(err.input).toBe(input);
    expect(err.selectorKind).toBe('field');
    expect(err.message).toBe(`invalid field selector ${JSON.stringify(input)} at position ${position}: ${err.reason}`);
  });
});

describe('escapeFieldValue', () => {
  it('escapes backslash, comma and equals so the value parses back unchanged', () => {
    const raw = 'a\\b,c=d';
    expect(escapeFieldValue(raw)).toBe('a\\\\b\\,c\\=d');
    expect(parseFieldSelector(`f=${escapeFieldValue(raw)}`).requirements[0]?.value).toBe(raw);
  });

  it('leaves other text alone', () => {
    expect(escapeFieldValue('plain-text 1')).toBe('plain-text 1');
  });
});
