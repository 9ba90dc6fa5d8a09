import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/errors/api/DecodeError.js';
import { ListDecoder } from '../../src/sources/listDecoder.js';
import { EVENT_METADATA, ITEM_METADATA, managedFieldsSpan, type MetadataPath } from '../../src/sources/managedFieldsStrip.js';
import type { WatchEvent } from '../../src/sources/types.js';
import { WatchDecoder } from '../../src/sources/watchDecoder.js';

type Json = unknown;

/** What parsing the bytes with the managedFields span removed gives, and whether anything was stripped. */
function parseStripped(text: string, path: MetadataPath): { value: Json; stripped: boolean } {
  const buf = Buffer.from(text);
  const stripped = managedFieldsSpan(buf, 0, buf.length, path);
  if (stripped === undefined) return { value: JSON.parse(text), stripped: false };
  return { value: JSON.parse(Buffer.concat([buf.subarray(0, stripped[0]), buf.subarray(stripped[1])]).toString()), stripped: true };
}

function withoutManagedFields(obj: Record<string, Json>): Record<string, Json> {
  const meta = obj['metadata'] as Record<string, Json>;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...obj, metadata: rest };
}

/**
 * Keys without quotes or backslashes: Node 24's JSON.parse can hand back a key it parsed before for a key written
 * with escaped quotes (a key `\"a\":[` followed, in a later parse, by a key `"a":[]}`), which would fail this
 * property for reasons of its own. Escaped quotes are tried in values and in the fixed cases below instead.
 */
const plainKey = fc.string().filter((k) => !/["\\]/.test(k));
const json = (maxDepth: number) => fc.jsonValue({ maxDepth }).filter((v) => !/["\\]/.test(JSON.stringify(v).replace(/(?<!\\)"/g, '')));
const entry = fc.record({
  manager: fc.string(),
  operation: fc.constantFrom('Update', 'Apply'),
  fieldsV1: json(3),
});
/** Strings that look like the key, to tempt a stripped in the wrong place. */
const decoyString = fc.constantFrom('"managedFields":', '\\"managedFields\\":[', 'managedFields', '"managedFields":[]}', '\\');
const decoyValue = fc.oneof(json(2), decoyString, fc.array(fc.record({ managedFields: fc.array(entry, { maxLength: 2 }) }), { maxLength: 2 }));

/** An object whose metadata may hold managedFields anywhere among its keys, with decoys around it. */
const object = fc
  .record({
    before: fc.dictionary(plainKey, decoyValue, { maxKeys: 3 }),
    labels: fc.dictionary(fc.oneof(plainKey, fc.constant('managedFields')), fc.oneof(fc.string(), decoyString), { maxKeys: 3 }),
    managedFields: fc.option(fc.array(entry, { maxLength: 3 }), { nil: undefined }),
    position: fc.nat(),
    after: fc.dictionary(plainKey, decoyValue, { maxKeys: 2 }),
    spec: fc.dictionary(fc.oneof(plainKey, fc.constant('managedFields')), decoyValue, { maxKeys: 3 }),
    topLevelDecoy: fc.boolean(),
    specFirst: fc.boolean(),
  })
  .map(({ before, labels, managedFields, position, after, spec, topLevelDecoy, specFirst }) => {
    const metaEntries: [string, Json][] = [...Object.entries(before).filter(([k]) => k !== 'managedFields' && k !== 'labels'), ['labels', labels]];
    if (managedFields !== undefined) metaEntries.splice(position % (metaEntries.length + 1), 0, ['managedFields', managedFields]);
    for (const [k, v] of Object.entries(after)) if (k !== 'managedFields' && k !== 'labels' && !(k in before)) metaEntries.push([k, v]);
    const metadata = Object.fromEntries(metaEntries);
    const obj: Record<string, Json> = specFirst ? { spec, metadata } : { metadata, spec };
    if (topLevelDecoy) obj['managedFields'] = [{ manager: 'not metadata' }];
    return obj;
  });

describe('managedFieldsSpan', () => {
  it('property: stripping then parsing a LIST item gives the object without metadata.managedFields, and nothing else changes', () => {
    fc.assert(
      fc.property(object, fc.boolean(), (generated, spaced) => {
        // Through JSON once, so what is compared is what JSON can say (-0 is written as 0).
        const obj = JSON.parse(JSON.stringify(generated)) as Record<string, Json>;
        const text = spaced ? JSON.stringify(obj, null, 1) : JSON.stringify(obj);
        const { value, stripped } = parseStripped(text, ITEM_METADATA);
        const meta = obj['metadata'] as Record<string, Json>;
        if (stripped) expect(value).toEqual(withoutManagedFields(obj));
        else expect(value).toEqual(obj);
        // Written as kube-apiserver writes it, an array of managedFields is always stripped.
        if (!spaced && Array.isArray(meta['managedFields'])) expect(stripped).toBe(true);
        if (!Array.isArray(meta['managedFields'])) expect(stripped).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: in a watch event, only object.metadata.managedFields is stripped', () => {
    fc.assert(
      fc.property(object, fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), fc.boolean(), (generated, type, typeLast) => {
        const obj = JSON.parse(JSON.stringify(generated)) as Record<string, Json>;
        const event = typeLast ? { object: obj, type } : { type, object: obj };
        const text = JSON.stringify(event);
        const { value, stripped } = parseStripped(text, EVENT_METADATA);
        const meta = obj['metadata'] as Record<string, Json>;
        expect(stripped).toBe(Array.isArray(meta['managedFields']));
        expect(value).toEqual(stripped ? { ...event, object: withoutManagedFields(obj) } : event);
        // The item path does not reach into an event's object.
        expect(parseStripped(text, ITEM_METADATA).stripped).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('cuts the key with one comma, wherever it stands among the metadata keys', () => {
    const cases: [string, string][] = [
      ['{"metadata":{"name":"a","managedFields":[{"f":{"x":1}}]}}', '{"metadata":{"name":"a"}}'],
      ['{"metadata":{"managedFields":[],"name":"a"}}', '{"metadata":{"name":"a"}}'],
      ['{"metadata":{"managedFields":[{"m":"]}\\"x"}]}}', '{"metadata":{}}'],
      ['{"metadata":{"name":"a" , "managedFields":[] }}', '{"metadata":{"name":"a"  }}'],
      // The key found past a closed metadata object and a key of that name in a string or a label, in the metadata
      // JSON.parse keeps (the last).
      ['{"metadata":{"labels":{"managedFields":"x"}},"s":"\\"managedFields\\":[]","metadata":{"a":1,"managedFields":[]}}', '{"metadata":{"labels":{"managedFields":"x"}},"s":"\\"managedFields\\":[]","metadata":{"a":1}}'],
    ];
    for (const [text, expected] of cases) {
      expect(() => JSON.parse(text), text).not.toThrow();
      const buf = Buffer.from(text);
      const stripped = managedFieldsSpan(buf, 0, buf.length, ITEM_METADATA) as [number, number];
      expect(Buffer.concat([buf.subarray(0, stripped[0]), buf.subarray(stripped[1])]).toString()).toBe(expected);
    }
  });

  it('cuts nothing where the bytes are not a well-formed array or the object is stripped short', () => {
    for (const text of [
      '{"metadata":{"managedFields":null}}',
      '{"metadata":{"managedFields":{"a":1}}}',
      '{"metadata":{"managedFields":[{"a":1}',
      '{"metadata":{"managedFields":[{"a":"1}]}}',
      '{"metadata":{"labels":{"managedFields":"x"}}}',
      '{"spec":{"managedFields":[]},"metadata":{}}',
    ]) {
      const buf = Buffer.from(text);
      expect(managedFieldsSpan(buf, 0, buf.length, ITEM_METADATA), text).toBeUndefined();
    }
  });

  it('cuts nothing beside a stray or missing comma, so malformed metadata is never made to parse', () => {
    for (const text of [
      '{"metadata":{,"managedFields":[]}}',
      '{"metadata":{"managedFields":[],}}',
      '{"metadata":{"managedFields":[] , }}',
      '{"metadata":{"a":1,,"managedFields":[]}}',
      '{"metadata":{"a":,"managedFields":[]}}',
      '{"metadata":{"a":1 "managedFields":[]}}',
      '{"metadata":{"a":1 "managedFields":[],"b":2}}',
    ]) {
      expect(() => JSON.parse(text), text).toThrow();
      const buf = Buffer.from(text);
      expect(managedFieldsSpan(buf, 0, buf.length, ITEM_METADATA), text).toBeUndefined();
    }
    // Such an item fails to decode, with the option as without it.
    const list = '{"metadata":{},"items":[{"metadata":{"name":"a","managedFields":[],}}]}';
    expect(() => new ListDecoder<unknown>({ stripManagedFields: true }).push(Buffer.from(list), [])).toThrow(DecodeError);
  });

  it('cuts nothing from bytes that do not begin with the object, and does not throw on a key before any brace', () => {
    for (const text of ['"a":"managedFields":[1]', ' "a":{"metadata":{"managedFields":[]}}', ' {"metadata":{"managedFields":[]}}']) {
      const buf = Buffer.from(text);
      expect(managedFieldsSpan(buf, 0, buf.length, ITEM_METADATA), text).toBeUndefined();
      expect(managedFieldsSpan(buf, 0, buf.length, EVENT_METADATA), text).toBeUndefined();
    }
    // Such a line is no event: the error says so, as it does without the option.
    const decoder = new WatchDecoder<unknown>({ stripManagedFields: true });
    expect(() => decoder.push(Buffer.from('"a":"managedFields":[1]\n'), [])).toThrow(DecodeError);
  });

  it('looks only inside [start, end): a key in the next object is not this one', () => {
    const text = '{"metadata":{"name":"a"}},{"metadata":{"managedFields":[]}}';
    const buf = Buffer.from(text);
    expect(managedFieldsSpan(buf, 0, text.indexOf('},{') + 1, ITEM_METADATA)).toBeUndefined();
    const second = text.indexOf(',{') + 1;
    expect(managedFieldsSpan(buf, second, buf.length, ITEM_METADATA)).toEqual([second + 13, buf.length - 2]);
  });
});

/** Splits `bytes` at the given fractions. */
function chunked(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of at) {
    if (c <= from) continue;
    out.push(bytes.subarray(from, c));
    from = c;
  }
  out.push(bytes.subarray(from));
  return out;
}

const splits = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 });
const roundTrip = (o: unknown): Record<string, Json> => JSON.parse(JSON.stringify(o)) as Record<string, Json>;

describe('the decoders with stripManagedFields', () => {
  it('property: a LIST body in any chunks gives every item without metadata.managedFields, and the same envelope', () => {
    fc.assert(
      fc.property(fc.array(object, { maxLength: 6 }), splits, (generated, at) => {
        const items = generated.map(roundTrip);
        const body = Buffer.from(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items }));
        const decoder = new ListDecoder<Record<string, Json>>({ stripManagedFields: true });
        const out: Record<string, Json>[] = [];
        for (const chunk of chunked(body, at)) decoder.push(chunk, out);
        expect(decoder.end().metadata.resourceVersion).toBe('7');
        const stripped = items.map((i) => (Array.isArray((i['metadata'] as Record<string, Json>)['managedFields']) ? withoutManagedFields(i) : i));
        // An item with neither apiVersion nor kind also gets the list's (P-15).
        expect(out).toEqual(stripped.map((i) => (i['apiVersion'] === undefined && i['kind'] === undefined ? { apiVersion: 'v1', kind: 'Pod', ...i } : i)));
      }),
      { numRuns: 500 },
    );
  });

  it('property: the LIST scan cuts from each item exactly what managedFieldsSpan cuts, whether the item is whole in a chunk or split', () => {
    // An item wholly inside a chunk is stripped by the scan that finds its end; a split one is joined and walked again.
    const fixed = [
      '{"metadata":{"name":"a" , "managedFields":[] }}',
      '{"metadata":{"managedFields":[{"m":"]}\\"x"}],"name":"a"}}',
      '{"metadata":{"labels":{"managedFields":"x"}},"s":"\\"managedFields\\":[]","metadata":{"a":1,"managedFields":[]}}',
      '{"metadata":{"managedFields" :[],"name":"a"}}',
      '{"metadata" : {"managedFields":[{"a":[1,{"b":"}"}]}]}}',
      '{"metadata":{"managedFields":null,"name":"a"}}',
      '{"metadata":{"managedFields":{"a":[]}}}',
      '{"spec":{"managedFields":[]},"metadata":{}}',
      '{"metadata":"x","managedFields":[],"spec":{"metadata":{"managedFields":[]}}}',
    ];
    const cases = fc.oneof(
      fc.constantFrom(...fixed),
      fc.tuple(object, fc.boolean()).map(([o, spaced]) => (spaced ? JSON.stringify(roundTrip(o), null, 1) : JSON.stringify(roundTrip(o)))),
    );
    fc.assert(
      fc.property(fc.array(cases, { minLength: 1, maxLength: 5 }), splits, (texts, at) => {
        const body = Buffer.from(`{"metadata":{"resourceVersion":"7"},"items":[${texts.join(',')}]}`);
        const expected = texts.map((t) => parseStripped(t, ITEM_METADATA).value);
        for (const chunks of [[body], chunked(body, at)]) {
          const decoder = new ListDecoder<Json>({ stripManagedFields: true });
          const out: Json[] = [];
          for (const chunk of chunks) decoder.push(chunk, out);
          decoder.end();
          expect(out).toEqual(expected);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('property: watch lines in any chunks give every event without object.metadata.managedFields', () => {
    fc.assert(
      fc.property(fc.array(object, { maxLength: 6 }), splits, (generated, at) => {
        const objects = generated.map(roundTrip);
        const body = Buffer.from(objects.map((object) => `${JSON.stringify({ type: 'MODIFIED', object })}\n`).join(''));
        const decoder = new WatchDecoder<Record<string, Json>>({ stripManagedFields: true });
        const out: WatchEvent<Record<string, Json>>[] = [];
        for (const chunk of chunked(body, at)) decoder.push(chunk, out);
        decoder.end(out);
        expect(out.map((e) => e.object)).toEqual(objects.map((o) => (Array.isArray((o['metadata'] as Record<string, Json>)['managedFields']) ? withoutManagedFields(o) : o)));
      }),
      { numRuns: 500 },
    );
  });

  it('a malformed line or item is reported as it came, at its position, as without the option', () => {
    const good = '{"type":"MODIFIED","object":{"metadata":{"name":"a","managedFields":[{"manager":"m"}]}}}\n';
    const bad = '{"type":"MODIFIED","object":{"metadata":{"name":"b","managedFields":[]},"spec":{"x":}}}\n';
    for (const drop of [false, true]) {
      const decoder = new WatchDecoder<unknown>({ stripManagedFields: drop });
      const out: WatchEvent<unknown>[] = [];
      const error = (() => {
        try {
          decoder.push(Buffer.from(good + bad), out);
        } catch (e) {
          return e as DecodeError;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(DecodeError);
      expect(error?.line).toBe(bad.trimEnd());
      expect(error?.position).toBe(Buffer.byteLength(good));
      expect(out).toHaveLength(1);
    }
    const list = '{"metadata":{},"items":[{"metadata":{"name":"a","managedFields":[]}},{"metadata":{"name":"b","managedFields":[]},"spec":{"x":}}]}';
    const errors = [false, true].map((drop) => {
      try {
        new ListDecoder<unknown>({ stripManagedFields: drop }).push(Buffer.from(list), []);
      } catch (e) {
        return e as DecodeError;
      }
      return undefined;
    });
    expect(errors[1]).toBeInstanceOf(DecodeError);
    expect({ ...errors[1] }).toEqual({ ...errors[0] });
    expect(errors[1]?.message).toBe(errors[0]?.message);
  });
});
