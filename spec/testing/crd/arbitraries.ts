import fc from 'fast-check';
import type { StructuralSchemaInput } from '../../../src/testing/crd/schema/index.js';

// Random structural schemas built from the constructs the engine supports, and random objects for
// them: values that fit, values of the wrong type, nulls, missing fields and unknown fields, so a
// sample exercises acceptance, every refusal, defaulting and pruning. Every default is valid for
// its schema, so the real server accepts every generated CRD.

type Schema = StructuralSchemaInput;
type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** A schema and how to make values for it. */
interface Shape {
  readonly schema: Schema;
  readonly value: fc.Arbitrary<unknown>;
}

const junk = fc.oneof(fc.constant(null), fc.boolean(), fc.integer({ min: -5, max: 200 }), fc.string({ maxLength: 4 }), fc.constant([1]), fc.constant({ x: 1 }));

function withWrong(schema: Schema, good: fc.Arbitrary<unknown>): Shape {
  return { schema, value: fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: junk }) };
}

const integerShape: fc.Arbitrary<Shape> = fc
  .record({
    min: fc.option(fc.integer({ min: -3, max: 5 }), { nil: undefined }),
    span: fc.integer({ min: 0, max: 20 }),
    multipleOf: fc.option(fc.constantFrom(2, 3, 5), { nil: undefined }),
    exclusive: fc.boolean(),
    withDefault: fc.boolean(),
    nullable: fc.boolean(),
  })
  .map(({ min, span, multipleOf, exclusive, withDefault, nullable }) => {
    const schema: Writable<Schema> = { type: 'integer' };
    if (min !== undefined) Object.assign(schema, { minimum: min, maximum: min + span, exclusiveMaximum: exclusive });
    if (multipleOf !== undefined) schema.multipleOf = multipleOf;
    if (nullable) schema.nullable = true;
    const lo = min ?? 0;
    const hi = min === undefined ? 100 : exclusive ? min + span - 1 : min + span;
    const step = multipleOf ?? 1;
    const first = Math.ceil(lo / step) * step;
    if (withDefault && first <= hi) schema.default = first;
    return withWrong(schema, fc.integer({ min: lo - 3, max: hi + 3 }));
  });

const numberShape: fc.Arbitrary<Shape> = fc.record({ max: fc.integer({ min: 1, max: 10 }) }).map(({ max }) => ({
  schema: { type: 'number', minimum: 0, maximum: max },
  value: fc.oneof(fc.double({ min: -2, max: max + 2, noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -2, max: max + 2 }), junk),
}));

const stringShape: fc.Arbitrary<Shape> = fc
  .record({
    kind: fc.constantFrom('plain', 'enum', 'pattern', 'format'),
    minLength: fc.integer({ min: 0, max: 2 }),
    maxLength: fc.integer({ min: 2, max: 6 }),
    withDefault: fc.boolean(),
  })
  .map(({ kind, minLength, maxLength, withDefault }) => {
    if (kind === 'enum') {
      const schema: Schema = { type: 'string', enum: ['a', 'bb'], ...(withDefault ? { default: 'bb' } : {}) };
      return withWrong(schema, fc.constantFrom('a', 'bb', 'c', ''));
    }
    if (kind === 'format') return withWrong({ type: 'string', format: 'ipv4' }, fc.constantFrom('10.0.0.1', '1.2.3', 'x', '256.0.0.1'));
    const schema: Writable<Schema> = { type: 'string', minLength, maxLength };
    if (kind === 'pattern') schema.pattern = '^[a-c]+$';
    if (withDefault) schema.default = 'a'.repeat(Math.max(1, minLength));
    return withWrong(schema, fc.string({ unit: fc.constantFrom('a', 'b', 'z', 'é', '-'), maxLength: maxLength + 2 }));
  });

const booleanShape: fc.Arbitrary<Shape> = fc.boolean().map((withDefault) =>
  withWrong({ type: 'boolean', ...(withDefault ? { default: true } : {}) }, fc.boolean()),
);

/** A CEL rule on some of the scalars, so random schemas run rules too. */
function withRule(shape: fc.Arbitrary<Shape>, rule: string): fc.Arbitrary<Shape> {
  return fc.tuple(shape, fc.boolean()).map(([s, on]) =>
    on ? { ...s, schema: { ...s.schema, 'x-kubernetes-validations': [{ rule, message: `must hold: ${rule}` }] } } : s,
  );
}

const intOrStringShape: fc.Arbitrary<Shape> = fc.constant(
  withWrong({ 'x-kubernetes-int-or-string': true }, fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('80%', 'http'))),
);

const scalarShape = fc.oneof(
  withRule(integerShape, 'self % 2 == 0'),
  numberShape,
  withRule(stringShape, "!self.startsWith('z')"),
  booleanShape,
  intOrStringShape,
);

const mapShape: fc.Arbitrary<Shape> = fc.tuple(scalarShape, fc.integer({ min: 1, max: 3 })).map(([value, maxProperties]) => {
  const additionalProperties: Schema = JSON.parse(JSON.stringify({ ...value.schema, default: undefined })) as Schema;
  return withWrong(
    { type: 'object', additionalProperties, maxProperties, 'x-kubernetes-validations': [{ rule: "!('zz' in self)", message: 'no zz' }] },
    fc.dictionary(fc.constantFrom('k', 'l', 'zz', 'm'), value.value, { maxKeys: 4 }),
  );
});

const preserveShape: fc.Arbitrary<Shape> = fc.constant({
  schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  value: fc.oneof(fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v === 'object' && v !== null && !Array.isArray(v)), junk),
});

const arrayShape: fc.Arbitrary<Shape> = fc
  .record({ item: fc.oneof(integerShape, stringShape), set: fc.boolean(), maxItems: fc.integer({ min: 1, max: 3 }) })
  .map(({ item, set, maxItems }) => {
    const items: Schema = { ...item.schema, nullable: undefined, default: undefined };
    const schema: Schema = { type: 'array', items: JSON.parse(JSON.stringify(items)) as Schema, maxItems, ...(set ? { 'x-kubernetes-list-type': 'set' } : {}) };
    return withWrong(schema, fc.array(fc.oneof(item.value.filter((v) => v !== null), fc.constant('a')), { maxLength: maxItems + 1 }));
  });

function objectShape(fields: fc.Arbitrary<Shape>, preserve: boolean): fc.Arbitrary<Shape> {
  return fc
    .uniqueArray(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fields), { minLength: 1, maxLength: 4, selector: ([k]) => k })
    .chain((entries) =>
      fc.subarray(entries.map(([k]) => k)).map((required) => {
        const properties = Object.fromEntries(entries.map(([k, s]) => [k, s.schema]));
        const schema: Schema = {
          type: 'object',
          properties,
          ...(required.length > 0 ? { required } : {}),
          ...(preserve ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
        };
        const record = Object.fromEntries(entries.map(([k, s]) => [k, s.value]));
        const value = fc
          .tuple(fc.record(record, { requiredKeys: [] }), fc.option(fc.record({ unknown: junk }), { nil: undefined }))
          .map(([known, extra]) => ({ ...known, ...extra }));
        return withWrong(schema, value);
      }),
    );
}

const specShape: fc.Arbitrary<Shape> = objectShape(
  fc.oneof(
    { weight: 4, arbitrary: scalarShape },
    { weight: 1, arbitrary: arrayShape },
    { weight: 1, arbitrary: objectShape(scalarShape, false) },
    { weight: 1, arbitrary: mapShape },
    { weight: 1, arbitrary: preserveShape },
  ),
  false,
);

/** A random schema (as a version's openAPIV3Schema, the random part under `spec`) and eight specs for it. */
export interface RandomCase {
  readonly schema: Schema;
  readonly objects: readonly unknown[];
}

/** Random cases: a schema from the supported constructs and objects that mostly fit it. */
export function randomCase(): fc.Arbitrary<RandomCase> {
  return specShape.chain((spec) =>
    fc.array(spec.value, { minLength: 8, maxLength: 8 }).map((objects) => ({
      schema: { type: 'object', properties: { spec: JSON.parse(JSON.stringify(spec.schema)) as Schema } },
      objects,
    })),
  );
}

/** The spec part of a random case's schema. */
export function specSchema(c: RandomCase): Schema {
  return c.schema.properties?.['spec'] ?? {};
}
