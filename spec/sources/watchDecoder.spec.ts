import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError, isExpired, isServerError, KubeApiError } from '../../src/errors/api/index.js';
import type { WatchEvent } from '../../src/sources/types.js';
import { WatchDecoder } from '../../src/sources/watchDecoder.js';

const enc = new TextEncoder();

function decodeAll(chunks: Uint8Array[]): WatchEvent<unknown>[] {
  const decoder = new WatchDecoder<unknown>();
  const out: WatchEvent<unknown>[] = [];
  for (const c of chunks) decoder.push(c, out);
  decoder.end(out);
  return out;
}

function caught(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

const events = [
  { type: 'ADDED', object: { metadata: { name: 'a\nb "q" \\', resourceVersion: '1' }, data: { x: '漢字😀\u2028' } } },
  { type: 'MODIFIED', object: { metadata: { name: 'a', resourceVersion: '2' }, spec: [[1], { y: '}\n' }] } },
  { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '3' } } },
  { type: 'DELETED', object: { metadata: { name: 'a', resourceVersion: '4' } } },
];
const body = enc.encode(events.map((e) => `${JSON.stringify(e)}\n`).join(''));

describe('WatchDecoder', () => {
  it('decodes one event per line, for every split position', () => {
    expect(decodeAll([body])).toEqual(events);
    for (let p = 0; p <= body.length; p++) {
      expect(decodeAll([body.subarray(0, p), body.subarray(p)])).toEqual(events);
    }
  });

  it('property: any chunking decodes identically', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: body.length }), { maxLength: 30 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let prev = 0;
        for (const p of points) {
          chunks.push(body.subarray(prev, p));
          prev = p;
        }
        chunks.push(body.subarray(prev));
        expect(decodeAll(chunks)).toEqual(events);
      }),
      { numRuns: 300 },
    );
  });

  it('skips blank lines, accepts CRLF and a last line without newline', () => {
    const text = `\n${JSON.stringify(events[0])}\r\n  \n${JSON.stringify(events[1])}`;
    expect(decodeAll([enc.encode(text)])).toEqual([events[0], events[1]]);
  });

  it('throws DecodeError with the line and its byte position for a malformed line, after the events before it', () => {
    const good = `${JSON.stringify(events[0])}\n`;
    const text = `${good}{"type":"ADDED","object":{"metadata":{"na\n${JSON.stringify(events[1])}\n`;
    const decoder = new WatchDecoder<unknown>();
    const out: WatchEvent<unknown>[] = [];
    const err = caught(() => decoder.push(enc.encode(text), out));
    expect(out).toEqual([events[0]]);
    expect(err).toBeInstanceOf(DecodeError);
    // A string cut short may be a value: left out, as every value is.
    expect((err as DecodeError).line).toBe('{"type":"ADDED","object":{"metadata":{"…');
    expect((err as DecodeError).position).toBe(enc.encode(good).length);
  });

  it('reports the position of a line that spans chunks', () => {
    const first = `${JSON.stringify(events[0])}\n{"type":`;
    const decoder = new WatchDecoder<unknown>();
    const out: WatchEvent<unknown>[] = [];
    decoder.push(enc.encode(first), out);
    const err = caught(() => decoder.push(enc.encode('"ADDED","object":{"metadata":{"name":"x"}}\n'), out));
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).message).toMatch(/not valid JSON/);
    expect((err as DecodeError).position).toBe(enc.encode(first).length - '{"type":'.length);
  });

  it('throws for lines that are not JSON objects, and passes parseable but unusable events on for the consumer to skip', () => {
    for (const line of ['[1,2]', '"ADDED"', 'not json', '{"type":"ADDED"']) {
      expect(() => decodeAll([enc.encode(`${line}\n`)]), line).toThrow(DecodeError);
    }
    // Ending the watch on these would replay them on every resume; reflect() reports and skips them.
    const unusable = [
      '{"type":"ADDED","object":{"metadata":{}}}',
      '{"type":"MODIFIED","object":{}}',
      '{"type":"DELETED"}',
      '{"type":"SYNC","object":{"metadata":{"name":"a"}}}',
    ];
    expect(decodeAll([enc.encode(unusable.map((l) => `${l}\n`).join(''))])).toEqual(unusable.map((l) => JSON.parse(l)));
    expect(decodeAll([enc.encode('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"5"}}}\n')])).toHaveLength(1);
  });

  it('turns ERROR events into the matching typed error', () => {
    const expired = caught(() =>
      decodeAll([enc.encode('{"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}\n')]),
    );
    expect(isExpired(expired)).toBe(true);
    expect((expired as KubeApiError).status).toBe(410);
    expect((expired as KubeApiError).serverMessage).toBe('too old resource version: 1 (5)');
    expect(isServerError(caught(() => decodeAll([enc.encode('{"type":"ERROR","object":{"reason":"InternalError","code":500}}\n')])))).toBe(true);
    const tooMany = caught(() =>
      decodeAll([enc.encode('{"type":"ERROR","object":{"reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":3}}}\n')]),
    );
    expect((tooMany as KubeApiError).retryAfterSeconds).toBe(3);
    expect(isServerError(caught(() => decodeAll([enc.encode('{"type":"ERROR","object":"gibberish"}\n')])))).toBe(true);
  });

  it('truncates the reported line of a huge malformed line to 256 characters', () => {
    const huge = `{"type":"ADDED","object":${'x'.repeat(100_000)}\n`;
    const err = caught(() => decodeAll([enc.encode(huge)])) as DecodeError;
    expect(err.line.length).toBeLessThanOrEqual(257);
  });
});
