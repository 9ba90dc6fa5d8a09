/**
 * One schema, two judges: for random zod schemas built from the constructs a CRD carries (strings with
 * bounds, patterns and enums, integers and numbers with bounds, booleans, optional fields, defaults, nested
 * objects, arrays with item bounds), the definition's own validator (zod's) and the simulator serving the
 * definition's CRD accept and refuse the same objects, and an accepted object is stored as zod parses it
 * (defaults applied, unknown fields dropped). The simulator is checked against the real kube-apiserver on
 * random schemas in spec/e2e/crdSchema.e2e.spec.ts; together they tie the library to the server.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { objectClient } from '../../src/client/objectClient.js';
import { customResource } from '../../src/crd/index.js';
import { KubeApiError } from '../../src/errors/api/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';

/** A field's schema and values to try in it: some fitting, some not. */
interface Field {
  readonly schema: z.ZodType;
  readonly values: fc.Arbitrary<unknown>;
}

const ascii = (min: number, max: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'abcxyz09-'), minLength: min, maxLength: max });
const anyValue: fc.Arbitrary<unknown> = fc.oneof(fc.constant(null), fc.boolean(), fc.integer({ min: -5, max: 60 }), ascii(0, 3));

const stringField: fc.Arbitrary<Field> = fc
  .record({ min: fc.nat(3), extra: fc.nat(6), pattern: fc.boolean(), enumOf: fc.option(fc.uniqueArray(ascii(1, 3), { minLength: 1, maxLength: 3 }), { nil: undefined }) })
  .map(({ min, extra, pattern, enumOf }) => {
    if (enumOf !== undefined) return { schema: z.enum(enumOf as [string, ...string[]]), values: fc.oneof(fc.constantFrom(...enumOf), ascii(0, 3), anyValue) };
    let s = z.string().min(min).max(min + extra);
    if (pattern) s = s.regex(/^[a-z]*$/);
    return { schema: s, values: fc.oneof(ascii(0, min + extra + 2), anyValue) };
  });

const integerField: fc.Arbitrary<Field> = fc.record({ min: fc.integer({ min: -3, max: 10 }), span: fc.nat(40) }).map(({ min, span }) => ({
  schema: z.number().int().min(min).max(min + span),
  values: fc.oneof(fc.integer({ min: min - 3, max: min + span + 3 }), fc.constant(min + 0.5), anyValue),
}));

const numberField: fc.Arbitrary<Field> = fc.record({ max: fc.integer({ min: 0, max: 10 }) }).map(({ max }) => ({
  schema: z.number().max(max),
  values: fc.oneof(fc.double({ min: -2, max: max + 2, noNaN: true, noDefaultInfinity: true }), anyValue),
}));

const booleanField: Fc<Field> = fc.constant({ schema: z.boolean(), values: fc.oneof(fc.boolean(), anyValue) });
type Fc<T> = fc.Arbitrary<T>;

const arrayField: Fc<Field> = fc.record({ maxItems: fc.integer({ min: 1, max: 3 }) }).map(({ maxItems }) => ({
  schema: z.array(z.string().max(3)).max(maxItems),
  values: fc.oneof(fc.array(ascii(0, 4), { maxLength: maxItems + 1 }), anyValue),
}));

const leaf: Fc<Field> = fc.oneof(stringField, integerField, numberField, booleanField, arrayField);

/** A field made optional, given a default (one it accepts), or left required. */
function modify(field: Field, how: 'required' | 'optional' | 'default', sample: unknown): Field {
  if (how === 'optional') return { schema: field.schema.optional(), values: fc.oneof(field.values, fc.constant(undefined)) };
  const parsed = field.schema.safeParse(sample);
  // The default as zod parses it, so it holds no field the schema does not name (the server refuses those).
  if (how === 'default' && parsed.success) return { schema: (field.schema as z.ZodType<unknown>).default(parsed.data), values: fc.oneof(field.values, fc.constant(undefined)) };
  return field;
}

/** An object schema of up to four fields (one level of nesting), and objects to try against it. */
const objectField = (inner: Fc<Field>): Fc<Field> =>
  fc
    .uniqueArray(
      fc.record({
        name: fc.constantFrom('a', 'b', 'c', 'd'),
        // A field with one of its own values, the candidate for its default.
        field: inner.chain((field) => fc.record({ field: fc.constant(field), sample: field.values })),
        how: fc.constantFrom('required', 'optional', 'default') as Fc<'required' | 'optional' | 'default'>,
      }),
      { minLength: 1, maxLength: 4, selector: (f) => f.name },
    )
    .map((entries) => {
      const fields = entries.map((e) => ({ name: e.name, field: modify(e.field.field, e.how, e.field.sample) }));
      const shape = Object.fromEntries(fields.map((f) => [f.name, f.field.schema]));
      const values = fc.record(Object.fromEntries(fields.map((f) => [f.name, f.field.values])) as Record<string, Fc<unknown>>, { requiredKeys: [] });
      // An unknown field now and then: both judges drop it.
      return { schema: z.object(shape), values: fc.tuple(values, fc.boolean()).map(([o, extra]) => (extra ? { ...o, zz: 1 } : o)) };
    });

const specField: Fc<Field> = objectField(fc.oneof({ weight: 4, arbitrary: leaf }, { weight: 1, arbitrary: objectField(leaf) }));

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});

/** Drops the keys whose value is undefined, as JSON does on the wire. */
const onTheWire = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

/**
 * What the server judges: it drops a null given for a field that is not nullable (none is here) before
 * defaulting and validation, where zod refuses it (CR-30).
 */
function withoutNullFields(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNullFields);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, withoutNullFields(x)]));
}

describe('a definition and the simulator serving its CRD judge objects alike', () => {
  it('accept and refuse the same specs, and store what zod parses', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(specField.chain((f) => fc.tuple(fc.constant(f.schema), fc.array(f.values, { minLength: 4, maxLength: 8 }))), async ([schema, specs]) => {
        run += 1;
        const kind = `Thing${run}`;
        const def = customResource({ group: 'agree.example.com', version: 'v1', kind, spec: schema as z.ZodObject });
        await objectClient(server.kubeConfig(), 'apiextensions.k8s.io/v1/customresourcedefinitions').create(def.crd() as never);
        const client = objectClient(server.kubeConfig(), def, { namespace: 'default' });
        for (const [i, spec] of specs.entries()) {
          const obj = { apiVersion: def.apiVersion, kind, metadata: { name: `o${i}`, namespace: 'default' }, spec: onTheWire(spec) };
          const judged = def.validate({ ...obj, spec: withoutNullFields(obj.spec) });
          const stored = await client.create(obj as never).then(
            (o) => ({ ok: true as const, spec: (o as { spec: unknown }).spec }),
            (err: unknown) => {
              if (!(err instanceof KubeApiError) || err.status !== 422) throw err;
              return { ok: false as const, why: err.message };
            },
          );
          const verdict = 'value' in judged ? 'accepted' : `refused: ${judged.issues.map((x) => `${x.path}: ${x.message}`).join('; ')}`;
          expect(stored.ok ? 'accepted' : `refused: ${stored.why}`, `spec ${JSON.stringify(obj.spec)} under ${JSON.stringify(def.crd().spec.versions[0]?.schema)}; zod: ${verdict}`).toSatisfy(
            (s: string) => s.startsWith('value' in judged ? 'accepted' : 'refused'),
          );
          if (stored.ok && 'value' in judged) expect(stored.spec).toEqual(onTheWire(judged.value.spec));
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
