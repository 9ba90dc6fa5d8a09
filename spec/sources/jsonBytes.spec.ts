import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { endOfString, PAST_END, PAST_END_ESCAPED } from '../../src/sources/jsonBytes.js';
import { ListDecoder } from '../../src/sources/listDecoder.js';

/** Strings of the shapes the switch to the native search must get right: long plain runs, dense escapes, backslash runs before a quote. */
const piece = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('\\', '\\\\', '"', '\\"', '\\\\"', 'é漢😀', '\n'),
  fc.nat({ max: 200 }).map((n) => 'x'.repeat(n)),
  fc.constant(JSON.stringify({ spec: { containers: [{ name: 'app', image: 'registry.example.com/team/app:v1' }] } })),
);
const jsonString = fc.array(piece, { maxLength: 12 }).map((p) => p.join(''));

/** Whether the bytes before `at` end in an odd run of backslashes. */
function oddBackslashesBefore(buf: Buffer, at: number, from: number): boolean {
  let k = at - 1;
  while (k >= from && buf[k] === 0x5c) k--;
  return (at - 1 - k) % 2 === 1;
}

describe('endOfString', () => {
  it('property: finds the quote that closes a JSON string, followed by anything', () => {
    fc.assert(
      fc.property(jsonString, fc.string({ maxLength: 5 }), (s, after) => {
        const text = JSON.stringify(s);
        const buf = Buffer.from(text + after);
        expect(endOfString(buf, 1, buf.length)).toBe(Buffer.byteLength(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: reads no further than its bound, and says when the byte past it is escaped', () => {
    fc.assert(
      fc.property(jsonString, fc.nat(), fc.boolean(), (s, at, truncated) => {
        const text = Buffer.from(`${JSON.stringify(s)}"more"`);
        const closing = Buffer.byteLength(JSON.stringify(s)) - 1;
        const end = 1 + (at % closing);
        // The same answer whether the bytes stop at the bound or go on past it (a quote further on is no end).
        const buf = truncated ? text.subarray(0, end) : text;
        expect(endOfString(buf, 1, end)).toBe(oddBackslashesBefore(text, end, 1) ? PAST_END_ESCAPED : PAST_END);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the LIST scan over long strings', () => {
  it('property: an item with a long annotation (JSON in a string, or a long plain run) decodes the same in any chunks', () => {
    const item = (annotation: string) => ({ metadata: { name: 'a', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': annotation }, managedFields: [{ manager: 'm' }] }, spec: { s: annotation } });
    fc.assert(
      fc.property(jsonString, fc.array(fc.nat(), { maxLength: 6 }), fc.boolean(), (s, cuts, strip) => {
        const items = [item(s), item(JSON.stringify({ s }))];
        const body = Buffer.from(JSON.stringify({ metadata: { resourceVersion: '1' }, items }));
        const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
        const decoder = new ListDecoder<unknown>({ stripManagedFields: strip });
        const out: unknown[] = [];
        let from = 0;
        for (const p of [...points, body.length]) {
          decoder.push(body.subarray(from, p), out);
          from = p;
        }
        decoder.end();
        const expected = strip ? items.map((i) => ({ ...i, metadata: { name: i.metadata.name, annotations: i.metadata.annotations } })) : items;
        expect(out).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });
});
