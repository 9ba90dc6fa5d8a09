import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError, KubeApiError } from '../../src/errors/api/index.js';
import type { WatchEvent } from '../../src/sources/types.js';
import { WatchDecoder } from '../../src/sources/watchDecoder.js';
import { bounded, enc, everySplit, jsonish, nastyBytes, nastyString, outcome, params, splitAt, wildObject, withHugeNumbers, type Outcome } from './fuzzKit.js';

type Events = WatchEvent<unknown>[];

/** Feeds the chunks, then ends; the events decoded before any throw are kept in `events`. */
function decode(chunks: readonly Uint8Array[]): { events: Events; result: Outcome<void> } {
  const events: Events = [];
  const result = outcome(() => {
    const decoder = new WatchDecoder<unknown>();
    for (const c of chunks) decoder.push(c, events);
    decoder.end(events);
  });
  return { events, result };
}

/** What is compared between two decodings: the events and, if one was thrown, the error's class, message, line and position. */
function summary(d: { events: Events; result: Outcome<void> }): unknown {
  if (d.result.ok) return { events: d.events };
  const e = d.result.error as Error & { position?: unknown; line?: unknown; status?: unknown };
  return { events: d.events, error: { class: e.constructor.name, message: e.message, position: e.position, line: e.line, status: e.status } };
}

/** Only the two documented kinds of failure: a line that cannot be trusted, or the typed error of an ERROR event. */
function expectTyped(result: Outcome<void>): void {
  if (result.ok) return;
  const err = result.error;
  expect(err instanceof DecodeError || err instanceof KubeApiError, `unexpected ${String(err)}`).toBe(true);
  if (err instanceof DecodeError) {
    expect(Number.isSafeInteger(err.position) && err.position >= 0).toBe(true);
    expect(err.line.length).toBeLessThanOrEqual(257);
  }
  if (err instanceof KubeApiError) expect(Number.isInteger(err.status) && err.status >= 100 && err.status <= 599, `status ${err.status}`).toBe(true);
}

/**
 * The contract, line by line: blank lines are skipped, anything else must
 * parse as a JSON object; an ERROR event throws its Status's typed error and
 * every other object is passed on as it is (reflect() judges it).
 */
function model(body: Uint8Array): { events: Events; error: 'decode' | 'status' | undefined; position?: number } {
  const events: Events = [];
  let start = 0;
  while (start < body.length) {
    let nl = body.indexOf(0x0a, start);
    if (nl < 0) nl = body.length;
    const line = Buffer.from(body.subarray(start, nl));
    if (!/^[ \r\t]*$/.test(line.toString('latin1'))) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line.toString('utf8'));
      } catch {
        return { events, error: 'decode', position: start };
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { events, error: 'decode', position: start };
      if ((parsed as { type?: unknown }).type === 'ERROR') return { events, error: 'status' };
      events.push(parsed as WatchEvent<unknown>);
    }
    start = nl + 1;
  }
  return { events, error: undefined };
}

function expectModel(body: Uint8Array, d: { events: Events; result: Outcome<void> }): void {
  const want = model(body);
  expect(d.events).toEqual(want.events);
  if (want.error === undefined) expect(d.result.ok).toBe(true);
  else if (want.error === 'status') expect(!d.result.ok && d.result.error instanceof KubeApiError).toBe(true);
  else {
    expect(!d.result.ok && d.result.error instanceof DecodeError).toBe(true);
    expect((d.result as { error: DecodeError }).error.position).toBe(want.position);
  }
}

const eventType = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK') },
  { weight: 1, arbitrary: fc.constantFrom('ERROR', 'SYNC', 'added', '', 'ADDED ') },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(null), nastyString) },
);

const statusObject = fc.record(
  {
    kind: fc.constant('Status'),
    code: fc.oneof(fc.constantFrom(410, 500, 429, 403, 0, -1, 99, 600, 1e999, 3.5), fc.integer(), fc.constant(null), fc.string()),
    reason: fc.oneof(fc.constantFrom('Expired', 'Gone', 'TooManyRequests', 'InternalError'), nastyString),
    message: nastyString,
  },
  { requiredKeys: [] },
);

const event = eventType.chain((type) => (type === 'ERROR' ? fc.record({ type: fc.constant(type), object: fc.oneof(statusObject, jsonish) }) : fc.record({ type: fc.constant(type), object: wildObject }, { requiredKeys: ['type'] })));

/** A watch body: events as JSON lines (1e999 written as a literal, so huge numbers reach the parser), with blank and CRLF lines mixed in. */
const body = fc
  .array(fc.tuple(event, fc.constantFrom('\n', '\r\n', '\n\n', '\n  \n')), { maxLength: 8 })
  .map((lines) => enc.encode(lines.map(([e, end]) => withHugeNumbers(JSON.stringify(e)) + end).join('')));

describe('WatchDecoder under bad input', () => {
  it('property: random bytes decode, chunked anywhere, exactly as in one chunk, failing only with a typed error', () => {
    fc.assert(
      fc.property(nastyBytes, fc.array(fc.nat(), { maxLength: 12 }), (bytes, cuts) => {
        const whole = decode([bytes]);
        expectTyped(whole.result);
        expectModel(bytes, whole);
        expect(summary(decode(splitAt(bytes, cuts)))).toEqual(summary(whole));
      }),
      params(300),
    );
  });

  it('property: a stream of valid, odd and unusable events matches the line-by-line contract for every chunking', () => {
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 20 }), (bytes, cuts) => {
        const whole = decode([bytes]);
        expectTyped(whole.result);
        expectModel(bytes, whole);
        expect(summary(decode(splitAt(bytes, cuts)))).toEqual(summary(whole));
      }),
      params(300),
    );
  });

  it('property: a stream cut short anywhere yields the complete lines and a DecodeError at the cut line, or a clean end', () => {
    fc.assert(
      fc.property(body, fc.nat(), (bytes, at) => {
        const cut = bytes.subarray(0, bytes.length === 0 ? 0 : at % (bytes.length + 1));
        const d = decode([cut]);
        expectTyped(d.result);
        expectModel(cut, d);
      }),
      params(200),
    );
  });

  it('decodes every split of multi-byte, escaped and invalid UTF-8 text as one chunk does', () => {
    const names = ['漢字', '😀😀', 'a\u2028b', 'q"\\"', '\\', '\ud800x'];
    const text = names.map((name, i) => JSON.stringify({ type: 'ADDED', object: { metadata: { name, resourceVersion: String(i) } } })).join('\n');
    // Raw invalid UTF-8 inside a string value: decoded to U+FFFD however the bytes are split.
    const invalid = Buffer.concat([Buffer.from('\n{"type":"ADDED","object":{"metadata":{"name":"x'), Buffer.from([0xe6, 0xbc, 0xff, 0xc0, 0xaf, 0xf0, 0x9f, 0x98]), Buffer.from('"}}}\n')]);
    const bytes = Buffer.concat([enc.encode(text), invalid]);
    const whole = decode([bytes]);
    expect(whole.result.ok).toBe(true);
    expect(whole.events.map((e) => (e.object as { metadata: { name: string } }).metadata.name)).toEqual([...names, 'x\ufffd\ufffd\ufffd\ufffd\ufffd']);
    for (const chunks of everySplit(bytes)) expect(summary(decode(chunks))).toEqual(summary(whole));
  });

  it('decodes a line of several megabytes fed in small chunks, in bounded time', () => {
    const big = 'x'.repeat(4 << 20);
    const line = enc.encode(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'big' }, data: { big } } })}\n`);
    const chunks = splitAt(line, Array.from({ length: 4096 }, (_, i) => i * 1024));
    const d = bounded(() => decode(chunks), 10_000);
    expect(d.result.ok).toBe(true);
    expect((d.events[0]?.object as { data: { big: string } }).data.big.length).toBe(big.length);
  });

  it('reports an unterminated several-megabyte line as a DecodeError carrying a short excerpt', () => {
    const line = enc.encode(`{"type":"ADDED","object":{"metadata":{"name":"${'y'.repeat(4 << 20)}`);
    const d = bounded(() => decode(splitAt(line, [7, 1 << 20, 3 << 20])), 10_000);
    expect(!d.result.ok && d.result.error instanceof DecodeError).toBe(true);
    const err = (d.result as { error: DecodeError }).error;
    expect(err.position).toBe(0);
    expect(err.line.length).toBeLessThanOrEqual(257);
  });

  it('passes deeply nested objects on, and reports unbalanced deep nesting as a DecodeError', () => {
    const depth = 100_000;
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const ok = decode([enc.encode(`{"type":"ADDED","object":{"metadata":{"name":"deep"},"spec":${deep}}}\n`)]);
    expect(ok.result.ok).toBe(true);
    expect(ok.events).toHaveLength(1);
    const bad = decode([enc.encode(`{"type":"ADDED","object":{"metadata":{"name":"deep"},"spec":${'['.repeat(depth)}}}\n`)]);
    expect(!bad.result.ok && bad.result.error instanceof DecodeError).toBe(true);
  });

  it('passes huge numbers, duplicate keys and wrong metadata types on unchanged, as JSON.parse reads them', () => {
    const lines = [
      '{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":1e999,"generation":123456789012345678901234567890}}}',
      '{"type":"ADDED","type":"MODIFIED","object":{"metadata":{"name":"a","name":"b"}}}',
      '{"type":"ADDED","object":{"metadata":{"name":7,"labels":["x"],"namespace":null}}}',
      '{"type":"ADDED","object":{"metadata":null}}',
      '{"type":"ADDED","object":[]}',
    ];
    const d = decode([enc.encode(lines.join('\n'))]);
    expect(d.result.ok).toBe(true);
    expect(d.events).toEqual(lines.map((l) => JSON.parse(l)));
    expect((d.events[0]?.object as { metadata: { resourceVersion: number } }).metadata.resourceVersion).toBe(Infinity);
    expect(d.events[1]?.type).toBe('MODIFIED');
  });

  it('turns an ERROR event whose code is not an HTTP status into a KubeApiError of status 500', () => {
    for (const code of ['1e999', '3.5', '-1', '0', '99', '600', '"410"', 'null', '[]']) {
      const d = decode([enc.encode(`{"type":"ERROR","object":{"kind":"Status","code":${code}}}\n`)]);
      expect(!d.result.ok && d.result.error instanceof KubeApiError, code).toBe(true);
      expect((d.result as { error: KubeApiError }).error.status, code).toBe(500);
    }
  });
});
