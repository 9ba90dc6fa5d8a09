import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/errors/api/index.js';
import { ListDecoder } from '../../src/sources/listDecoder.js';

const enc = new TextEncoder();

interface Obj {
  metadata: { name: string; [k: string]: unknown };
  [k: string]: unknown;
}

function decodeChunks(chunks: Uint8Array[]): { items: Obj[]; envelope: ReturnType<ListDecoder<Obj>['end']> } {
  const decoder = new ListDecoder<Obj>();
  const items: Obj[] = [];
  for (const c of chunks) decoder.push(c, items);
  return { items, envelope: decoder.end() };
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  out.push(bytes.subarray(prev));
  return out;
}

const tricky: Obj[] = [
  { metadata: { name: 'quote"and\\backslash', labels: { 'a/b': 'x\\"y' } }, data: { s: 'line\nbreak\ttab \u0000 nul' } },
  { metadata: { name: 'unicode-é-漢字-😀', annotations: { e: '\u2028\u2029' } }, spec: { nested: [[1, [2, [3, { x: ']' }]]], '}', '{'] } },
  { metadata: { name: 'ends-with-backslash\\' }, a: '\\\\', b: '\\', c: [] , d: {}, n: null, t: true, f: false, num: -1.5e3 },
];

describe('ListDecoder', () => {
  it('decodes items and the envelope when metadata comes first', () => {
    const body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 }, items: tricky });
    const { items, envelope } = decodeChunks([enc.encode(body)]);
    // Items without a type get the list's (P-15), first, as the server writes a single object.
    expect(items).toEqual(tricky.map((o) => ({ apiVersion: 'v1', kind: 'Pod', ...o })));
    expect(items.map((o) => Object.keys(o).slice(0, 2))).toEqual(tricky.map(() => ['apiVersion', 'kind']));
    expect(envelope).toEqual({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 } });
  });

  it("gives an item without apiVersion and kind the list's, whichever chunk it comes in, and leaves a typed item as it is (P-15)", () => {
    const typed = { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'w' } };
    const onlyKind = { kind: 'Other', metadata: { name: 'o' } };
    const body = enc.encode(JSON.stringify({ kind: 'WidgetList', apiVersion: 'example.com/v1', metadata: {}, items: [...tricky, typed, onlyKind] }));
    const want = [...tricky.map((o) => ({ apiVersion: 'example.com/v1', kind: 'Widget', ...o })), typed, onlyKind];
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 6 }), (cuts) => {
        expect(decodeChunks(splitAt(body, cuts)).items).toEqual(want);
      }),
    );
    // A list kind that names no item type ('List', 'Table'), or no apiVersion, fills nothing.
    for (const envelope of [{ kind: 'List', apiVersion: 'v1' }, { kind: 'PodList' }, { kind: 'PodList', apiVersion: '' }]) {
      expect(decodeChunks([enc.encode(JSON.stringify({ ...envelope, metadata: {}, items: tricky }))]).items).toEqual(tricky);
    }
  });

  it('reads metadata, kind and apiVersion that come after items, and ignores unknown fields', () => {
    const body = `{"items":${JSON.stringify(tricky)},"extra":{"items":[1,2]},"n":12,"metadata":{"resourceVersion":"7"},"kind":"WidgetList","apiVersion":"example.com/v1"}`;
    const { items, envelope } = decodeChunks([enc.encode(body)]);
    // The items came before the list named its kind, in the same chunk as it too: they stay as they came.
    expect(items).toEqual(tricky);
    expect(envelope).toEqual({ kind: 'WidgetList', apiVersion: 'example.com/v1', metadata: { resourceVersion: '7' } });
  });

  it('hands over metadata written before items as soon as it is read, and none written after them', () => {
    const enc = new TextEncoder();
    const first = new ListDecoder<{ n: number }>();
    const out: { n: number }[] = [];
    first.push(enc.encode('{"kind":"PodList","metadata":{"continue":"c1","resourceVersion":"5"}'), out);
    expect(first.earlyMetadata).toEqual({ continue: 'c1', resourceVersion: '5' });
    expect(first.itemsBegun).toBe(false);
    first.push(enc.encode(',"items":[{"n":1}'), out);
    expect(first.itemsBegun).toBe(true);
    first.push(enc.encode(']}'), out);
    expect(first.end().metadata.continue).toBe('c1');
    const last = new ListDecoder<{ n: number }>();
    last.push(enc.encode('{"items":[{"n":1}],"metadata":{"continue":"c2"}}'), out);
    expect(last.earlyMetadata).toBeUndefined();
    expect(last.end().metadata.continue).toBe('c2');
    expect(out).toEqual([{ n: 1 }, { n: 1 }]);
  });

  it('accepts whitespace everywhere, an empty list and items: null', () => {
    expect(decodeChunks([enc.encode(' {\n "metadata" : { "resourceVersion" : "1" } ,\r\n "items" : [ ] } \n')]).items).toEqual([]);
    const r = decodeChunks([enc.encode('{"metadata":{"resourceVersion":"2"},"items":null}')]);
    expect(r.items).toEqual([]);
    expect(r.envelope.metadata.resourceVersion).toBe('2');
    const spaced = decodeChunks([enc.encode('{ "items" : [ {"metadata":{"name":"a"}} , {"metadata":{"name":"b"}} ] , "metadata":{} }')]);
    expect(spaced.items.map((i) => i.metadata.name)).toEqual(['a', 'b']);
  });

  it('decodes identically for every single split position', () => {
    const body = enc.encode(JSON.stringify({ kind: 'List', metadata: { resourceVersion: '9', continue: 'c"\\' }, items: tricky }));
    const expected = decodeChunks([body]);
    for (let p = 0; p <= body.length; p++) {
      expect(decodeChunks([body.subarray(0, p), body.subarray(p)])).toEqual(expected);
    }
  });

  it('decodes identically for one byte at a time', () => {
    const body = enc.encode(JSON.stringify({ metadata: { resourceVersion: '9' }, items: tricky }));
    const chunks = Array.from({ length: body.length }, (_, i) => body.subarray(i, i + 1));
    expect(decodeChunks(chunks).items).toEqual(tricky);
  });

  it('property: any chunking of any list decodes to the same items and envelope', () => {
    const jsonValue = fc.jsonValue({ maxDepth: 4 });
    const item = fc.record({
      metadata: fc.record({ name: fc.string({ minLength: 1, unit: 'binary' }), labels: fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' })) }),
      spec: jsonValue,
    });
    const list = fc.record({
      items: fc.array(item, { maxLength: 8 }),
      metadata: fc.record({ resourceVersion: fc.string({ unit: 'binary' }), continue: fc.string({ unit: 'binary' }) }),
      kind: fc.string({ unit: 'binary' }),
      extra: jsonValue,
    });
    fc.assert(
      fc.property(list, fc.boolean(), fc.array(fc.nat(), { maxLength: 20 }), (l, metadataLast, cuts) => {
        const body = metadataLast
          ? `{"items":${JSON.stringify(l.items)},"extra":${JSON.stringify(l.extra) ?? 'null'},"kind":${JSON.stringify(l.kind)},"metadata":${JSON.stringify(l.metadata)}}`
          : JSON.stringify(l);
        const bytes = enc.encode(body);
        const { items, envelope } = decodeChunks(splitAt(bytes, cuts));
        expect(items).toEqual(JSON.parse(JSON.stringify(l.items)));
        expect(envelope.metadata).toEqual(l.metadata);
        expect(envelope.kind).toBe(l.kind);
      }),
      { numRuns: 300 },
    );
  });

  it('property: long strings with escaped quotes and backslashes decode identically for any chunking', () => {
    const piece = fc.constantFrom('a', '\\', '"', '\\"', '\n', 'é', '😀', 'x'.repeat(40));
    const longString = fc.array(piece, { minLength: 10, maxLength: 80 }).map((p) => p.join(''));
    const list = fc.array(fc.record({ metadata: fc.record({ name: longString }), data: fc.dictionary(longString, longString, { maxKeys: 3 }) }), {
      minLength: 1,
      maxLength: 4,
    });
    fc.assert(
      fc.property(list, fc.array(fc.nat(), { maxLength: 25 }), (items, cuts) => {
        const bytes = enc.encode(JSON.stringify({ metadata: { resourceVersion: '1' }, items }));
        expect(decodeChunks(splitAt(bytes, cuts)).items).toEqual(items);
      }),
      { numRuns: 300 },
    );
  });

  it('hands over items as soon as their last byte arrives', () => {
    const decoder = new ListDecoder<Obj>();
    const out: Obj[] = [];
    decoder.push(enc.encode('{"items":[{"metadata":{"name":"a"}},{"metadata":{"na'), out);
    expect(out.map((o) => o.metadata.name)).toEqual(['a']);
    decoder.push(enc.encode('me":"b"}}'), out);
    expect(out.map((o) => o.metadata.name)).toEqual(['a', 'b']);
    decoder.push(enc.encode(']}'), out);
    expect(decoder.end().metadata).toEqual({});
  });

  it('reports a malformed item with its text and byte position, after the good items before it', () => {
    const body = '{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"},"x":tru}]}';
    const decoder = new ListDecoder<Obj>();
    const out: Obj[] = [];
    let err: unknown;
    try {
      decoder.push(enc.encode(body), out);
    } catch (e) {
      err = e;
    }
    expect(out.map((o) => o.metadata.name)).toEqual(['a']);
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).position).toBe(body.indexOf('{"metadata":{"name":"b"}'));
    // Values are left out of the line (a Secret's data must not reach a log); the name says which item.
    expect((err as DecodeError).line).toBe('{"metadata":{"name":"b"},"x":…}');
  });

  it('passes items without metadata.name on for the store to report, so one bad object cannot fail every relist', () => {
    expect(decodeChunks([enc.encode('{"items":[{"metadata":{}},{"metadata":{"name":"a"}},{"metadata":{"name":""}}]}')]).items.map((o) => o.metadata.name)).toEqual([
      undefined,
      'a',
      '',
    ]);
  });

  it('rejects non-object items, non-object bodies and truncated bodies', () => {
    const bad = [
      '{"items":[1]}',
      '{"items":["x"]}',
      '{"items":[[]]}',
      '{"items":{}}',
      '[]',
      '{"metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a"}}',
      '{"metadata":{"resourceVersion":"1"}} x',
      '{"metadata":[1]}',
    ];
    for (const body of bad) {
      expect(() => decodeChunks([enc.encode(body)]), body).toThrow(DecodeError);
    }
  });
});
