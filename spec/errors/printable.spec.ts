import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { printable, printableJson } from '../../src/errors/printable.js';
import { createStderrReporter } from '../../src/errors/reportError.js';
import { KubeApiError } from '../../src/errors/api/KubeApiError.js';

/** A byte a terminal would act on: C0 but the line break, DEL, C1, and the bidi overrides and isolates. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('printable', () => {
  it('writes every C0, DEL, C1 and bidi control as a visible escape, deleting nothing', () => {
    expect(printable('a\u001b]0;title\u0007b')).toBe('a\\x1b]0;title\\x07b');
    expect(printable('\u001b[2J\u009b31m\u202eevil\u2066\u007f\r\t\u0000')).toBe('\\x1b[2J\\u009b31m\\u202eevil\\u2066\\x7f\\x0d\\x09\\x00');
    expect(printable('two\nlines')).toBe('two\\x0alines');
    expect(printable('two\nlines', { newlines: true })).toBe('two\nlines');
    expect(printable('plain text, ünïcode ✓')).toBe('plain text, ünïcode ✓');
    for (let code = 0; code <= 0x2069; code++) expect(printable(String.fromCharCode(code)).match(RAW_CONTROL), code.toString(16)).toBeNull();
  });

  it('for any text: no raw control survives, and printableJson keeps JSON that parses to the same value', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(printable(text).match(RAW_CONTROL)).toBeNull();
        expect(printable(text, { newlines: true }).replace(/\n/g, '').match(RAW_CONTROL)).toBeNull();
        const json = printableJson(JSON.stringify({ text }));
        expect(json.match(RAW_CONTROL)).toBeNull();
        expect(JSON.parse(json)).toEqual({ text });
      }),
      { numRuns: 300 },
    );
  });

  it('lets colour sequences through only when asked, and never any other sequence', () => {
    expect(printable('\u001b[31mred\u001b[0m')).toBe('\\x1b[31mred\\x1b[0m');
    expect(printable('\u001b[31mred\u001b[0m\u001b[2J\u001b]52;c;eA==\u0007', { colours: true })).toBe('\u001b[31mred\u001b[0m\\x1b[2J\\x1b]52;c;eA==\\x07');
  });

  it('printableJson escapes what JSON.stringify leaves raw, and the JSON still parses to the same value', () => {
    const value = { reason: '\u001b]0;t\u0007\u009b\u202e\u007f' };
    const json = printableJson(JSON.stringify(value));
    expect(json.match(RAW_CONTROL)).toBeNull();
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe('the default stderr reporter', () => {
  it('writes a server Status message quoting escapes as visible text: no title, clear-screen or clipboard write passes', () => {
    const lines: string[] = [];
    const report = createStderrReporter({ write: (l) => lines.push(l), intervalMs: 0 });
    const hostile = 'denied \u001b]0;owned\u0007\u001b[2J\u001b]52;c;cHduZWQ=\u0007\u009b31m\u202eevil\u007f';
    report(new KubeApiError(403, `list v1/pods: 403 Forbidden: ${hostile}`, { reason: 'Forbidden', serverMessage: hostile }));
    report(Object.assign(new Error(hostile), { name: 'Bad\u001b[2JName' }));
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line.endsWith('\n')).toBe(true);
      expect(line.match(RAW_CONTROL), JSON.stringify(line)).toBeNull();
      expect(line).toContain('\\x1b]0;owned\\x07\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07\\u009b31m\\u202eevil\\x7f');
    }
    expect(lines[1]).toMatch(/^rxkube: Bad\\x1b\[2JName: /);
  });
});
