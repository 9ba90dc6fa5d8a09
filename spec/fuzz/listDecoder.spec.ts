import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/errors/api/index.js';
import { ListDecoder, type ListEnvelope } from '../../src/sources/listDecoder.js';
import { bounded, enc, everySplit, jsonish, nastyBytes, nastyString, outcome, params, splitAt, wildObject, withHugeNumbers, type Outcome } from './fuzzKit.js';

interface Decoded {
  readonly items: unknown[];
  readonly result: Outcome<ListEnvelope>;
}

function decode(chunks: readonly Uint8Array[]): Decoded {
  const items: unknown[] = [];
  const result = outcome(() => {
    const decoder = new ListDecoder<unknown>();
    for (const c of chunks) decoder.push(c, items);
    return decoder.end();
  });
  return { items, result };
}

/**
 * What must not depend on chunking: the items, the envelope, and an error's
 * class, message and position. (The excerpt of a structural error shows
 * what was at hand in the chunk being read, so it may be shorter.)
 */
function summary(d: Decoded): unknown {
  if (d.result.ok) return { items: d.items, envelope: d.result.value };
  const e = d.result.error as Error & { position?: unknown };
  return { items: d.items, error: { class: e.constructor.name, message: e.message, position: e.position } };
}

/** Length of `bytes` without trailing JSON whitespace. */
function contentLength(bytes: Uint8Array): number {
  let n = bytes.length;
  while (n > 0 && [0x20, 0x0a, 0x0d, 0x09].includes(bytes[n - 1] as number)) n--;
  return n;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The oracle is JSON.parse of the whole body: the decoder may only succeed
 * where JSON.parse does, and must then hand over the same items, metadata,
 * kind and apiVersion. A failure is a DecodeError with a sane position.
 */
function expectAgreesWithJsonParse(bytes: Uint8Array, d: Decoded): void {
  if (!d.result.ok) {
    expect(d.result.error, String(d.result.error)).toBeInstanceOf(DecodeError);
    const err = d.result.error as DecodeError;
    expect(Number.isSafeInteger(err.position) && err.position >= 0 && err.position <= bytes.length, `position ${err.position}`).toBe(true);
    expect(err.line.length).toBeLessThanOrEqual(257);
    return;
  }
  let parsed: unknown;
  expect(() => (parsed = JSON.parse(Buffer.from(bytes).toString('utf8'))), 'decoder accepted a body JSON.parse refuses').not.toThrow();
  expect(isObject(parsed)).toBe(true);
  const body = parsed as Record<string, unknown>;
  // Items with neither apiVersion nor kind get the list's, as written before the items (P-15).
  const type = itemTypeBeforeItems(Buffer.from(bytes).toString('utf8'));
  const typed = (item: unknown): unknown =>
    type !== undefined && isObject(item) && item['apiVersion'] === undefined && item['kind'] === undefined ? { apiVersion: type.apiVersion, kind: type.kind, ...item } : item;
  expect(d.items).toEqual(((body['items'] ?? []) as unknown[]).map(typed));
  const envelope = d.result.value;
  expect(envelope.metadata).toEqual(normalisedMeta(body['metadata']));
  expect(envelope.kind).toBe(typeof body['kind'] === 'string' ? body['kind'] : undefined);
  expect(envelope.apiVersion).toBe(typeof body['apiVersion'] === 'string' ? body['apiVersion'] : undefined);
}

/**
 * The oracle of P-15 for a body JSON.parse reads: walks the envelope's keys
 * in the order written and answers the item type that the `kind` and
 * `apiVersion` read before `items` name (a list kind ending in `List`, a
 * non-empty apiVersion), or undefined.
 */
function itemTypeBeforeItems(text: string): { apiVersion: string; kind: string } | undefined {
  const fields: Record<string, unknown> = {};
  let i = skipSpace(text, 0) + 1;
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] === ',') i = skipSpace(text, i + 1);
    if (text[i] !== '"') return undefined;
    const keyEnd = valueEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const end = valueEnd(text, i);
    if (key === 'items') {
      const { kind, apiVersion } = fields;
      return typeof kind === 'string' && kind.endsWith('List') && kind.length > 4 && typeof apiVersion === 'string' && apiVersion !== '' ? { apiVersion, kind: kind.slice(0, -4) } : undefined;
    }
    if (key === 'kind' || key === 'apiVersion') fields[key] = JSON.parse(text.slice(i, end));
    i = end;
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && ' \n\r\t'.includes(text[i] as string)) i++;
  return i;
}

/** The end of the JSON value that starts at `i` in valid JSON text. */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  let inString = false;
  for (let k = i; k < text.length; k++) {
    const c = text[k];
    if (inString) {
      if (c === '\\') k++;
      else if (c === '"') {
        inString = false;
        if (depth === 0) return k + 1;
      }
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) return k;
      if (--depth === 0) return k + 1;
    } else if (depth === 0 && (c === ',' || ' \n\r\t'.includes(c as string))) return k;
  }
  return text.length;
}

/** ListMeta as Go reads it: `null` fields are absent. */
function normalisedMeta(meta: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries((meta ?? {}) as Record<string, unknown>).filter(([k, v]) => v !== null || !['resourceVersion', 'continue', 'remainingItemCount'].includes(k)));
}

/**
 * Whether a body JSON.parse reads is one a list decoder must accept: an
 * object; metadata an object whose resourceVersion and continue are strings
 * and remainingItemCount an integer (or null, or absent); items null or an
 * array of objects.
 */
function acceptable(value: unknown): boolean {
  if (!isObject(value)) return false;
  const { metadata, items } = value;
  if (metadata !== undefined && !isObject(metadata)) return false;
  if (isObject(metadata)) {
    const { resourceVersion, continue: token, remainingItemCount } = metadata;
    if (![resourceVersion, token].every((v) => v === undefined || v === null || typeof v === 'string')) return false;
    if (remainingItemCount !== undefined && remainingItemCount !== null && !Number.isInteger(remainingItemCount)) return false;
  }
  return items === undefined || items === null || (Array.isArray(items) && items.every(isObject));
}

const item = fc.oneof({ weight: 9, arbitrary: wildObject.filter(isObject) }, { weight: 1, arbitrary: jsonish });

/** List bodies with fields in any order, odd envelope values, unknown keys, and items that may lack metadata or carry wrong types. */
const listBody = fc
  .record(
    {
      items: fc.oneof({ weight: 9, arbitrary: fc.array(item, { maxLength: 6 }) }, { weight: 1, arbitrary: jsonish }),
      metadata: fc.oneof(
        { weight: 8, arbitrary: fc.record({ resourceVersion: fc.oneof(fc.nat().map(String), nastyString), continue: nastyString, remainingItemCount: fc.nat() }, { requiredKeys: [] }) },
        { weight: 2, arbitrary: fc.record({ resourceVersion: jsonish, continue: jsonish, remainingItemCount: jsonish }, { requiredKeys: [] }) },
        { weight: 1, arbitrary: jsonish },
      ),
      kind: fc.oneof(fc.constant('PodList'), nastyString, jsonish),
      apiVersion: fc.oneof(fc.constant('v1'), jsonish),
      extra: jsonish,
    },
    { requiredKeys: [] },
  )
  .chain((record) => fc.shuffledSubarray(Object.keys(record), { minLength: Object.keys(record).length }).map((order) => ({ record, order })))
  .chain(({ record, order }) =>
    fc.constantFrom('', ' ', '\n', '\r\n\t').map((ws) => withHugeNumbers(`{${ws}${order.map((k) => `${JSON.stringify(k)}${ws}:${ws}${JSON.stringify((record as Record<string, unknown>)[k]) ?? 'null'}`).join(`${ws},${ws}`)}${ws}}${ws}`)),
  )
  .map((text) => enc.encode(text));

describe('ListDecoder under bad input', () => {
  it('property: random bytes decode, chunked anywhere, as in one chunk and only where JSON.parse agrees', () => {
    fc.assert(
      fc.property(nastyBytes, fc.array(fc.nat(), { maxLength: 12 }), (bytes, cuts) => {
        const whole = decode([bytes]);
        expectAgreesWithJsonParse(bytes, whole);
        expect(summary(decode(splitAt(bytes, cuts)))).toEqual(summary(whole));
      }),
      params(200),
    );
  });

  it('property: list bodies with odd envelopes and items decode as JSON.parse reads them, for every chunking', () => {
    fc.assert(
      fc.property(listBody, fc.array(fc.nat(), { maxLength: 20 }), (bytes, cuts) => {
        const whole = decode([bytes]);
        expectAgreesWithJsonParse(bytes, whole);
        expect(whole.result.ok, 'a body JSON.parse reads as a list was refused').toBe(acceptable(JSON.parse(Buffer.from(bytes).toString('utf8'))));
        expect(summary(decode(splitAt(bytes, cuts)))).toEqual(summary(whole));
      }),
      params(300),
    );
  });

  it('property: a list body cut short, or with one byte changed, is refused with a DecodeError or still agrees with JSON.parse', () => {
    fc.assert(
      fc.property(listBody, fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 }), (bytes, at, where, byte) => {
        const cut = bytes.subarray(0, at % (bytes.length + 1));
        const truncated = decode([cut]);
        if (cut.length < contentLength(bytes)) expect(truncated.result.ok, 'a truncated body decoded').toBe(false);
        expectAgreesWithJsonParse(cut, truncated);
        const changed = Uint8Array.from(bytes);
        changed[where % changed.length] = byte;
        const mutated = decode(splitAt(changed, [at]));
        expectAgreesWithJsonParse(changed, mutated);
      }),
      params(300),
    );
  });

  it('refuses what JSON refuses between and around items, instead of guessing', () => {
    const bad = [
      '{"items":[{"metadata":{"name":"a"}},,{"metadata":{"name":"b"}}]}',
      '{"items":[,{"metadata":{"name":"a"}}]}',
      '{"items":[{"metadata":{"name":"a"}},]}',
      '{"items":[{"metadata":{"name":"a"}}{"metadata":{"name":"b"}}]}',
      '{"items":[{"metadata":{"name":"a"}}}',
      '{"metadata":{}"items":[]}',
      '{"metadata":{},"items":[],}',
      '{,"items":[]}',
      '{"items":[]]',
      '{"items"[]}',
      '{"items":}',
      '{:1,"items":[]}',
      '{"kind":"a" "b","items":[]}',
      '{"kind":1]',
      '{"extra":tru,"items":[]}',
      '{"extra":{"a":1,},"items":[]}',
      '{"ki\nnd":"x","items":[]}',
      '{"\\x":1}',
      '{"items":[{"metadata":{"name":"a"}}],"items":[{"metadata":{"name":"b"}}]}',
    ];
    for (const text of bad) {
      const d = decode([enc.encode(text)]);
      expect(d.result.ok, text).toBe(false);
      expect((d.result as { error: unknown }).error, text).toBeInstanceOf(DecodeError);
    }
  });

  it('refuses list metadata of the wrong types, which the next request would carry as text, and reads null as absent', () => {
    for (const meta of ['{"resourceVersion":1e999}', '{"resourceVersion":5}', '{"continue":["x"]}', '{"remainingItemCount":1.5}', '{"remainingItemCount":"3"}']) {
      const d = decode([enc.encode(`{"metadata":${meta},"items":[]}`)]);
      expect(!d.result.ok && d.result.error instanceof DecodeError, meta).toBe(true);
    }
    const d = decode([enc.encode('{"metadata":{"resourceVersion":null,"continue":null,"remainingItemCount":null,"selfLink":null},"items":[]}')]);
    expect(d.result.ok && d.result.value.metadata).toEqual({ selfLink: null });
  });

  it('reads escaped keys as JSON does', () => {
    const text = '{"\\u0069tems":[{"metadata":{"name":"a"}}],"met\\u0061data":{"resourceVersion":"7"},"\\u006bind":"PodList"}';
    const d = decode([enc.encode(text)]);
    expect(d.items).toEqual([{ metadata: { name: 'a' } }]);
    expect(d.result.ok && d.result.value).toEqual({ metadata: { resourceVersion: '7' }, kind: 'PodList' });
  });

  it('refuses a second items key: its items would be added to the first', () => {
    const d = decode([enc.encode('{"items":[{"metadata":{"name":"a"}}],"metadata":{},"items":[{"metadata":{"name":"b"}}]}')]);
    expect(d.items).toEqual([{ metadata: { name: 'a' } }]);
    expect(!d.result.ok && d.result.error instanceof DecodeError && d.result.error.message).toMatch(/more than one items/);
  });

  it('decodes every split of multi-byte and invalid UTF-8 as one chunk does', () => {
    const bytes = Buffer.concat([
      enc.encode('{"metadata":{"resourceVersion":"漢😀"},"items":[{"metadata":{"name":"\u2028é😀"}},{"metadata":{"name":"x'),
      Buffer.from([0xe6, 0xbc, 0xff, 0xc0, 0xaf, 0xf0, 0x9f, 0x98]),
      enc.encode('"}}],"kind":"\\ud800"}'),
    ]);
    const whole = decode([bytes]);
    expectAgreesWithJsonParse(bytes, whole);
    expect(whole.items).toHaveLength(2);
    for (const chunks of everySplit(bytes)) expect(summary(decode(chunks))).toEqual(summary(whole));
  });

  it('decodes deeply nested items and envelope values, and refuses unbalanced nesting', () => {
    const depth = 100_000;
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const bytes = enc.encode(`{"extra":${deep},"items":[{"metadata":{"name":"deep"},"spec":${deep}}],"metadata":{}}`);
    const d = bounded(() => decode(splitAt(bytes, [depth, depth * 3])));
    expect(d.result.ok).toBe(true);
    expect(d.items).toHaveLength(1);
    const unbalanced = decode([enc.encode(`{"items":[{"metadata":{"name":"deep"},"spec":${'['.repeat(depth)}}]}`)]);
    expect(unbalanced.result.ok).toBe(false);
    expect((unbalanced.result as { error: unknown }).error).toBeInstanceOf(DecodeError);
  });

  it('decodes a body with a several-megabyte item and a several-megabyte metadata value in small chunks, in bounded time', () => {
    const big = 'z'.repeat(4 << 20);
    const bytes = enc.encode(JSON.stringify({ items: [{ metadata: { name: 'big' }, data: { big } }], metadata: { continue: big } }));
    const d = bounded(() => decode(splitAt(bytes, Array.from({ length: 8192 }, (_, i) => i * 1024))), 10_000);
    expect(d.result.ok).toBe(true);
    expect(((d.items[0] as { data: { big: string } }).data.big)).toHaveLength(big.length);
    expect(d.result.ok && d.result.value.metadata.continue).toHaveLength(big.length);
  });
});
