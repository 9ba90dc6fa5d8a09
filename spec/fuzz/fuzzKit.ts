import vm from 'node:vm';
import fc from 'fast-check';

/**
 * Runs per property: modest in CI so the fuzz suite stays fast; `FUZZ_RUNS=10`
 * multiplies every count by ten for a longer hunt by hand (give vitest time
 * for it: `FUZZ_RUNS=10 npx vitest run spec/fuzz --testTimeout=600000`).
 */
export function runs(base: number): number {
  const factor = Number(process.env['FUZZ_RUNS'] ?? '1');
  return Number.isFinite(factor) && factor > 0 ? Math.max(1, Math.round(base * factor)) : base;
}

/** Shared fast-check parameters; FUZZ_SEED replays a reported failure. */
export function params(base: number): fc.Parameters<unknown> {
  const seed = process.env['FUZZ_SEED'];
  return { numRuns: runs(base), ...(seed !== undefined && seed !== '' && { seed: Number(seed) }) };
}

// One context, reused: creating one per call costs ~2 ms, running in it ~0.1 ms.
const context = vm.createContext({ call: undefined as unknown });
const invoke = new vm.Script('call()');

/**
 * Runs `fn` synchronously with a hard time limit: V8 interrupts it, even in
 * an endless loop, and this throws an Error naming the limit. So a hang in
 * a decoder or parser fails the property (and is shrunk) instead of
 * freezing the suite. What `fn` throws or returns passes through unchanged.
 */
export function bounded<R>(fn: () => R, limitMs = 2_000): R {
  context['call'] = fn;
  try {
    return invoke.runInContext(context, { timeout: limitMs }) as R;
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      throw new Error(`did not finish within ${limitMs} ms (a hang or super-linear work)`);
    }
    throw err;
  } finally {
    context['call'] = undefined;
  }
}

/** What a synchronous call did: its value, or what it threw. */
export type Outcome<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

export function outcome<R>(fn: () => R, limitMs?: number): Outcome<R> {
  try {
    return { ok: true, value: bounded(fn, limitMs) };
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('did not finish within')) throw error;
    return { ok: false, error };
  }
}

/** Splits `bytes` at the given cut points (any numbers; taken modulo the length, sorted, de-duplicated). */
export function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const n = bytes.length;
  const points = [...new Set(cuts.map((c) => (n === 0 ? 0 : c % (n + 1))))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    chunks.push(bytes.subarray(prev, p));
    prev = p;
  }
  chunks.push(bytes.subarray(prev));
  return chunks;
}

/** Every way of cutting `bytes` in two, plus one byte at a time. */
export function everySplit(bytes: Uint8Array): Uint8Array[][] {
  const out: Uint8Array[][] = [];
  for (let p = 0; p <= bytes.length; p++) out.push([bytes.subarray(0, p), bytes.subarray(p)]);
  out.push(Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1)));
  return out;
}

export const enc = new TextEncoder();

/** Strings rich in what breaks decoders: quotes, backslashes, escapes, newlines, multi-byte and astral characters, lone surrogates. */
export const nastyString: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom('"', '\\', '\\"', '\n', '\r', '\t', '\u2028', 'é', '漢', '😀', '\ud800', '\udfff', '\u0000', '{', '}', '[', ']', ',', ':', ' ', 'a', 'items', 'metadata'),
      fc.string({ unit: 'binary', maxLength: 4 }),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

/** Bytes rich in JSON structure and in broken UTF-8 (lone continuation bytes, truncated sequences, overlongs, 0xFF). */
export const nastyBytes: fc.Arbitrary<Uint8Array> = fc
  .array(
    fc.oneof(
      fc.constantFrom(...[0x22, 0x5c, 0x0a, 0x0d, 0x20, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x30, 0x61, 0x80, 0xbf, 0xc0, 0xc3, 0xe6, 0xf0, 0xf4, 0xff].map((b) => [b])),
      fc.constantFrom([0xe6, 0xbc], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xef, 0xbb, 0xbf]),
      fc.constantFrom(...['{"type":"ADDED","object":', '{"metadata":{"name":"a"}}', '"items":[', 'null', 'true', '1e999', '\\u0000', '\\ud800'].map((s) => [...Buffer.from(s)])),
      fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 6 }),
    ),
    { maxLength: 40 },
  )
  .map((parts) => Uint8Array.from(parts.flat()));

/** Stands for a number beyond a double's range: {@link withHugeNumbers} writes it as `1e999` once serialised. */
export const HUGE = '\u0000huge\u0000';

/** Replaces every serialised {@link HUGE} with the literal `1e999`, which JSON allows and `JSON.parse` reads as Infinity. */
export function withHugeNumbers(json: string): string {
  return json.replaceAll(JSON.stringify(HUGE), '1e999');
}

/** A JSON value with room for everything JSON allows, including huge and tiny numbers. */
export const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(1e308, -1e308, 5e-324, 2 ** 53 + 1, -0, 123456789012345678901234567890, HUGE),
  nastyString,
);

/** A metadata object with every field possibly of the wrong type. */
export const wildMetadata: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ name: fc.constantFrom('a', 'b', 'c') }, { requiredKeys: ['name'] }) },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        name: fc.oneof(fc.constantFrom('a', 'b', '', 'ns/x', '😀'), fc.integer(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }), fc.object({ maxDepth: 1 })),
        namespace: fc.oneof(fc.constantFrom('default', 'kube-system', ''), fc.constant(null), fc.integer(), fc.boolean()),
        labels: fc.oneof(
          fc.dictionary(fc.constantFrom('app', 'tier', '__proto__', 'constructor', 'x/y'), fc.oneof(fc.constantFrom('web', 'db', ''), fc.integer(), fc.constant(null))),
          fc.array(fc.string(), { maxLength: 3 }),
          fc.constant(null),
          fc.string(),
        ),
        resourceVersion: fc.oneof(fc.nat().map(String), fc.integer(), fc.constant(HUGE), fc.constant(null)),
        uid: fc.oneof(fc.uuid(), fc.integer(), fc.constant(null)),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.integer(), fc.string(), fc.array(fc.integer(), { maxLength: 2 })) },
);

/** An object that may lack metadata or carry it with wrong types. */
export const wildObject: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ metadata: wildMetadata, spec: jsonish }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: jsonish },
);
