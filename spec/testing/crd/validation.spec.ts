import { describe, expect, expectTypeOf, it } from 'vitest';
import { admitCustomObject, type FieldCause, type StructuralSchemaInput } from '../../../src/testing/crd/schema/index.js';
import { COMPOSITE_SCHEMA, RICH_SCHEMA } from './richSchema.js';

// Each expected cause below is what kube-apiserver 1.34 answered for the same object
// (spec/e2e/crdSchema.e2e.spec.ts compares the two live).

const SKIPPED =
  '<nil> | FieldValueInvalid | Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

function causes(spec: unknown, extra: Record<string, unknown> = {}, schema: StructuralSchemaInput = RICH_SCHEMA): string[] {
  const obj = { apiVersion: 'e.x/v1', kind: 'Widget', metadata: { name: 'w' }, spec, ...extra };
  return admitCustomObject(schema, obj, undefined)
    .causes.map((c: FieldCause) => `${c.field} | ${c.reason} | ${c.message}`)
    .sort();
}

describe('admitCustomObject: value validation in the server words', () => {
  it.each([
    ['maximum', { image: 'n', replicas: 60 }, ['spec.replicas | FieldValueInvalid | Invalid value: 60: spec.replicas in body should be less than or equal to 50']],
    ['exclusive minimum', { image: 'n', ratio: 0 }, ['spec.ratio | FieldValueInvalid | Invalid value: 0: spec.ratio in body should be greater than 0']],
    ['float maximum', { image: 'n', ratio: 1.5 }, ['spec.ratio | FieldValueInvalid | Invalid value: 1.5: spec.ratio in body should be less than or equal to 1']],
    ['multipleOf', { image: 'n', step: 7 }, ['spec.step | FieldValueInvalid | Invalid value: 7: spec.step in body should be a multiple of 5']],
    ['minLength', { image: '' }, ['spec.image | FieldValueInvalid | Invalid value: "": spec.image in body should be at least 1 chars long']],
    ['a set repeat (not blocking)', { image: 'n', tags: ['a', 'b', 'a'] }, ['spec.tags[2] | FieldValueDuplicate | Duplicate value: "a"']],
    ['a map-list key repeat', { image: 'n', ports: [{ name: 'a' }, { name: 'a' }] }, ['spec.ports[1] | FieldValueDuplicate | Duplicate value: {"name":"a"}']],
    ['pattern', { image: 'UPPER' }, ["spec.image | FieldValueInvalid | Invalid value: \"UPPER\": spec.image in body should match '^[a-z0-9./:é-]+$'"]],
  ])('%s', (_name, spec, want) => {
    expect(causes(spec)).toEqual(want);
  });

  it.each([
    ['type', { image: 'n', replicas: 'many' }, 'spec.replicas | FieldValueTypeInvalid | Invalid value: "string": spec.replicas in body must be of type integer: "string"'],
    ['fraction for an integer', { image: 'n', replicas: 1.5 }, 'spec.replicas | FieldValueTypeInvalid | Invalid value: "number": spec.replicas in body must be of type integer: "number"'],
    ['int-or-string', { image: 'n', port: true }, 'spec.port | FieldValueTypeInvalid | Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'],
    ['required', { replicas: 1 }, 'spec.image | FieldValueRequired | Required value'],
    ['maxLength, counted as bytes in the words only', { image: 'a'.repeat(21) }, 'spec.image | FieldValueTooLong | Too long: may not be more than 20 bytes'],
    ['enum', { image: 'n', mode: 'Medium' }, 'spec.mode | FieldValueNotSupported | Unsupported value: "Medium": supported values: "Fast", "Slow"'],
    ['format', { image: 'n', ip: '300.1.1.1' }, 'spec.ip | FieldValueTypeInvalid | Invalid value: "300.1.1.1": spec.ip in body must be of type ipv4: "300.1.1.1"'],
    ['maxItems', { image: 'n', tags: ['a', 'b', 'c', 'd'] }, 'spec.tags | FieldValueTooMany | Too many: 4: must have at most 3 items'],
    ['maxProperties', { image: 'n', labels: { a: 'x', b: 'y', c: 'z' } }, 'spec.labels | FieldValueTooMany | Too many: 3: must have at most 2 items'],
    ['a map value', { image: 'n', labels: { b: 1 } }, 'spec.labels.b | FieldValueTypeInvalid | Invalid value: "integer": spec.labels.b in body must be of type string: "integer"'],
    ['an embedded resource without kind', { image: 'n', template: { apiVersion: 'v1' } }, 'spec.template.kind | FieldValueRequired | Required value'],
  ])('%s blocks the CEL rules', (_name, spec, want) => {
    expect(causes(spec)).toEqual([SKIPPED, want]);
  });

  it('types a non-string in a formatted field by format, and lets a list through, as kube-openapi does', () => {
    expect(causes({ image: 'n', ip: { a: 1 }, id: 5 })).toEqual([
      SKIPPED,
      'spec.id | FieldValueTypeInvalid | Invalid value: "int64": spec.id in body must be of type uuid: "int64"',
      'spec.ip | FieldValueTypeInvalid | Invalid value: "": spec.ip in body must be of type ipv4: ""',
    ]);
    expect(causes({ image: 'n', ip: ['10.0.0.1'] })).toEqual([]);
  });

  it('counts lengths in code points, as Go counts runes', () => {
    expect(causes({ image: 'é'.repeat(20) })).toEqual([]);
    expect(causes({ image: 'é'.repeat(21) })).toContain('spec.image | FieldValueTooLong | Too long: may not be more than 20 bytes');
  });

  it('accepts a whole float for an integer and an integer for a number', () => {
    expect(causes({ image: 'n', replicas: 2.0, ratio: 1 })).toEqual([]);
  });

  it('prints numbers as Go %v does and strings as strconv.Quote does', () => {
    expect(causes({ image: 'n', ratio: 1234567.5 })).toContain(
      'spec.ratio | FieldValueInvalid | Invalid value: 1.2345675e+06: spec.ratio in body should be less than or equal to 1',
    );
    expect(causes({ image: 'tab\there "q" \u00a0 ✓ \u0007' })).toContain(
      'spec.image | FieldValueInvalid | Invalid value: "tab\\there \\"q\\" \\u00a0 ✓ \\a": spec.image in body should match \'^[a-z0-9./:é-]+$\'',
    );
  });

  it('applies metadata.name rules of the schema', () => {
    const obj = { apiVersion: 'e.x/v1', kind: 'Widget', metadata: { name: 'w-long-name-x' }, spec: { image: 'n' } };
    const got = admitCustomObject(RICH_SCHEMA, obj, undefined).causes.map((c) => `${c.field} | ${c.message}`);
    expect(got).toContain('metadata.name | Too long: may not be more than 12 bytes');
  });

  it('validates status with the main resource', () => {
    expect(causes({ image: 'n' }, { status: { ready: 'yes' } })).toContain(
      'status.ready | FieldValueTypeInvalid | Invalid value: "string": status.ready in body must be of type boolean: "string"',
    );
  });
});

describe('admitCustomObject: hostile keys', () => {
  it('treats keys named like Object.prototype members as ordinary fields', () => {
    const schema: StructuralSchemaInput = {
      type: 'object',
      properties: { spec: { type: 'object', required: ['constructor'], properties: { constructor: { type: 'string' }, toString: { type: 'string', default: 'd' } } } },
    };
    const obj = JSON.parse('{"spec":{"__proto__":{"x":1}}}') as Record<string, unknown>;
    const { object, causes } = admitCustomObject(schema, obj, undefined);
    expect(causes.map((c) => `${c.field} | ${c.message}`)).toEqual(['spec.constructor | Required value']);
    expect(JSON.stringify(object)).toBe('{"spec":{"toString":"d"}}');
  });
});

describe('admitCustomObject: the status subresource', () => {
  const stored = admitCustomObject(RICH_SCHEMA, { apiVersion: 'e.x/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { image: 'n' } }, undefined).object;

  it('stores the stored object with the sent status, validating status from its own root', () => {
    const sent = { ...stored, spec: { image: 'changed' }, status: { ready: 'yes' } };
    const { object, causes } = admitCustomObject(RICH_SCHEMA, sent, stored, 'status');
    expect(object).toMatchObject({ spec: { image: 'n', replicas: 1 }, status: { ready: 'yes' } });
    expect(causes.map((c) => `${c.field} | ${c.message}`)).toEqual([
      'status.ready | Invalid value: "string": ready in body must be of type boolean: "string"',
      SKIPPED.replace(' | FieldValueInvalid', ''),
    ]);
  });

  it('admits a valid status', () => {
    const { object, causes } = admitCustomObject(RICH_SCHEMA, { ...stored, status: { ready: true, extra: 1 } }, stored, 'status');
    expect(causes).toEqual([]);
    expect(object['status']).toEqual({ ready: true });
  });
});

describe('admitCustomObject: allOf, anyOf, oneOf, not', () => {
  it.each([
    ['oneOf, none valid', {}, ['<nil> | FieldValueInvalid | Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid', 'spec.a | FieldValueRequired | Required value']],
    ['oneOf, two valid', { a: 1, b: 'x' }, ['<nil> | FieldValueInvalid | Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives']],
    ['not', { a: 1, x: 13 }, ['<nil> | FieldValueInvalid | Invalid value: "": "spec.x" must not validate the schema (not)']],
    ['anyOf', { a: 1, y: 'abc' }, ['<nil> | FieldValueInvalid | Invalid value: "": "spec.y" must validate at least one schema (anyOf)', 'spec.y | FieldValueTooLong | Too long: may not be more than 2 bytes']],
    ['allOf', { a: 1, z: 9 }, ['<nil> | FieldValueInvalid | Invalid value: "": "spec.z" must validate all the schemas (allOf)', 'spec.z | FieldValueInvalid | Invalid value: 9: spec.z in body should be less than or equal to 5']],
    ['a float multipleOf within rounding', { a: 1, f: 0.3 }, []],
    ['a float multipleOf failing', { a: 1, f: 0.35 }, ['spec.f | FieldValueInvalid | Invalid value: 0.35: spec.f in body should be a multiple of 0.1']],
    ['a fractional multipleOf on an integer', { a: 1, h: 2 }, ['spec.h | FieldValueInvalid | Invalid value: 0: factor MultipleOf declared for spec.h must be positive: 0']],
    ['a nullable enum without null', { a: 1, e: null }, ['spec.e | FieldValueNotSupported | Unsupported value: null: supported values: "on", "off"']],
  ])('%s', (_name, spec, want) => {
    expect(causes(spec, {}, COMPOSITE_SCHEMA)).toEqual(want);
  });
});

describe('admitCustomObject: types', () => {
  it('takes a JSON schema object and plain JSON objects', () => {
    expectTypeOf(admitCustomObject).parameter(0).toEqualTypeOf<StructuralSchemaInput>();
    // @ts-expect-error a type is a string, not a number
    const bad: StructuralSchemaInput = { type: 5 };
    void bad;
    // @ts-expect-error list types are atomic, set or map
    const badList: StructuralSchemaInput = { type: 'array', 'x-kubernetes-list-type': 'unique' };
    void badList;
    expectTypeOf(admitCustomObject(RICH_SCHEMA, {}, undefined).causes).toEqualTypeOf<FieldCause[]>();
  });
});
