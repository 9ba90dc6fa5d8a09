import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { customResource, CustomResourceSchemaError } from '../../src/index.js';
import { checkStructural } from '../../src/crd/structuralCheck.js';

/** The structural schema of `spec` a definition's CRD carries. */
function specOf(spec: object): Record<string, unknown> {
  const def = customResource({ group: 'example.com', version: 'v1', kind: 'Website', spec: spec as Record<string, unknown> });
  const root = def.crd().spec.versions[0]?.schema.openAPIV3Schema as { properties: Record<string, Record<string, unknown>> };
  return root.properties['spec'] as Record<string, unknown>;
}

/** The schema of one field of an object spec. */
function fieldOf(field: object): unknown {
  return (specOf({ type: 'object', properties: { f: field } })['properties'] as Record<string, unknown>)['f'];
}

function schemaError(spec: object): CustomResourceSchemaError {
  try {
    specOf(spec);
  } catch (err) {
    if (err instanceof CustomResourceSchemaError) return err;
    throw err;
  }
  throw new Error('expected a CustomResourceSchemaError');
}

describe('the structural rewrite', () => {
  it('inlines $ref into $defs and definitions', () => {
    const spec = specOf({
      type: 'object',
      properties: { a: { $ref: '#/$defs/Port' }, b: { $ref: '#/definitions/Name', description: 'the name' } },
      $defs: { Port: { type: 'integer', minimum: 1 } },
      definitions: { Name: { type: 'string' } },
    });
    expect(spec).toEqual({ type: 'object', properties: { a: { type: 'integer', minimum: 1 }, b: { type: 'string', description: 'the name' } } });
  });

  it('refuses a schema that refers to itself, naming the field', () => {
    const err = schemaError({ type: 'object', properties: { tree: { $ref: '#/$defs/Node' } }, $defs: { Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/Node' } } } } } });
    expect(err.field).toBe('spec.tree.children[]');
    expect(err.message).toMatch(/refers to itself.*recursive/);
    const throughUnion = { type: 'object', properties: { n: { $ref: '#/$defs/N' } }, $defs: { N: { anyOf: [{ $ref: '#/$defs/N' }, { type: 'null' }] } } };
    expect(schemaError(throughUnion).message).toMatch(/refers to itself \(#\/\$defs\/N\)/);
    const throughAllOf = { type: 'object', properties: { n: { $ref: '#/$defs/N' } }, $defs: { N: { allOf: [{ $ref: '#/$defs/N' }] } } };
    expect(schemaError(throughAllOf).message).toMatch(/refers to itself/);
    expect(schemaError({ type: 'object', properties: { me: { $ref: '#' } } }).field).toBe('spec.me');
    const loop: Record<string, unknown> = { type: 'object', properties: {} };
    (loop['properties'] as Record<string, unknown>)['self'] = loop;
    expect(schemaError({ type: 'object', properties: { a: loop } }).message).toMatch(/^spec\.a\.self: the schema object contains itself/);
    const zodTree: z.ZodType<{ children: unknown[] }> = z.object({ children: z.array(z.lazy(() => zodTree)) });
    expect(() => specOf(z.object({ tree: zodTree }))).toThrow(CustomResourceSchemaError);
  });

  it('turns null in a type list, a null branch of a union, or null in an enum into nullable', () => {
    expect(fieldOf({ type: ['string', 'null'] })).toEqual({ type: 'string', nullable: true });
    expect(fieldOf({ anyOf: [{ type: 'integer' }, { type: 'null' }], description: 'd' })).toEqual({ type: 'integer', nullable: true, description: 'd' });
    expect(fieldOf({ enum: ['a', null] })).toEqual({ type: 'string', enum: ['a'], nullable: true });
    expect(specOf(z.object({ o: z.string().nullable() }))['properties']).toEqual({ o: { type: 'string', nullable: true } });
    expect(specOf(toStandardJsonSchema(v.object({ o: v.nullable(v.string()) })))['properties']).toEqual({ o: { type: 'string', nullable: true } });
    expect(schemaError({ type: 'object', properties: { n: { type: 'null' } } }).field).toBe('spec.n');
  });

  it('turns const into a one-value enum, and merges unions of enums', () => {
    expect(fieldOf({ const: 'x' })).toEqual({ type: 'string', enum: ['x'] });
    expect(fieldOf({ anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'string', const: 'c' }] })).toEqual({ type: 'string', enum: ['a', 'b', 'c'] });
    expect(specOf(z.object({ e: z.union([z.literal('a'), z.literal('b')]) }))['properties']).toEqual({ e: { type: 'string', enum: ['a', 'b'] } });
  });

  it('hoists the properties of a union of objects, each branch keeping what it requires', () => {
    expect(fieldOf({ anyOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'number' } }, required: ['b'], additionalProperties: false }] })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      anyOf: [{ required: ['a'] }, { required: ['b'] }],
    });
  });

  it('merges a discriminator into one enum and restricts it in each branch', () => {
    const spec = specOf(z.object({ source: z.discriminatedUnion('kind', [z.object({ kind: z.literal('git'), url: z.string() }), z.object({ kind: z.literal('image'), ref: z.string() })]) }));
    expect((spec['properties'] as Record<string, unknown>)['source']).toEqual({
      type: 'object',
      properties: { kind: { type: 'string', enum: ['git', 'image'] }, url: { type: 'string' }, ref: { type: 'string' } },
      oneOf: [
        { required: ['kind', 'url'], properties: { kind: { enum: ['git'] } } },
        { required: ['kind', 'ref'], properties: { kind: { enum: ['image'] } } },
      ],
    });
  });

  it('refuses branches that give one field different schemas, naming the field', () => {
    const err = schemaError({ type: 'object', properties: { u: { oneOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { a: { type: 'integer' } } }] } } });
    expect(err.field).toBe('spec.u.a');
  });

  it('refuses a union of a string and an object, naming the field', () => {
    const err = schemaError(z.object({ owner: z.union([z.string(), z.object({ name: z.string() })]) }));
    expect(err.message).toBe('spec.owner: a union of a string and an object cannot be structural; use one type (an object with optional fields, say)');
  });

  it('keeps the value validations of a union of one scalar type inside the union, the type outside', () => {
    expect(fieldOf({ anyOf: [{ type: 'string', format: 'email' }, { type: 'string', pattern: '^x' }] })).toEqual({ type: 'string', anyOf: [{ format: 'email' }, { pattern: '^x' }] });
  });

  it('marks a union of an integer and a string as int-or-string', () => {
    expect(specOf(z.object({ port: z.union([z.number().int(), z.string()]) }))['properties']).toEqual({ port: { 'x-kubernetes-int-or-string': true } });
    expect(fieldOf({ type: ['integer', 'string'] })).toEqual({ 'x-kubernetes-int-or-string': true });
  });

  it('writes numeric exclusive bounds in the boolean form of OpenAPI v3', () => {
    expect(specOf(z.object({ r: z.number().gt(0).lt(1) }))['properties']).toEqual({ r: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true } });
    expect(fieldOf({ type: 'number', minimum: 5, exclusiveMinimum: 2 })).toEqual({ type: 'number', minimum: 5 });
    expect(fieldOf({ type: 'number', minimum: 1, exclusiveMinimum: true })).toEqual({ type: 'number', minimum: 1, exclusiveMinimum: true });
  });

  it('drops what JSONSchemaProps lacks, and zod\'s safe-integer bounds', () => {
    expect(fieldOf({ $schema: 'x', $id: 'y', $comment: 'z', type: 'string', readOnly: true, writeOnly: false, deprecated: true, contentEncoding: 'base64', examples: ['e'] })).toEqual({ type: 'string', example: 'e' });
    expect(specOf(z.object({ n: z.number().int() }))['properties']).toEqual({ n: { type: 'integer' } });
    expect(specOf(z.object({}))).toEqual({ type: 'object', properties: {} });
  });

  it('keeps unknown fields only where an open object or any value asks for it', () => {
    expect(specOf(z.object({ extra: z.record(z.string(), z.unknown()), any: z.unknown().optional(), labels: z.record(z.string(), z.string()) }))['properties']).toEqual({
      extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      any: { 'x-kubernetes-preserve-unknown-fields': true },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
    });
    expect(specOf(toStandardJsonSchema(v.object({ extra: v.record(v.string(), v.unknown()) })))['properties']).toEqual({ extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });
    expect(fieldOf({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'string' } } })).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'string' } } });
  });

  it('passes CEL rules and list and map types through from zod meta, valibot metadata and plain keys', () => {
    const rules = [{ rule: 'self.min <= self.max', message: 'min above max' }];
    const fromZod = specOf(z.object({ range: z.object({ min: z.number(), max: z.number() }).meta({ 'x-kubernetes-validations': rules }) }));
    expect((fromZod['properties'] as Record<string, Record<string, unknown>>)['range']?.['x-kubernetes-validations']).toEqual(rules);
    const fromValibot = specOf(toStandardJsonSchema(v.object({ tags: v.pipe(v.array(v.string()), v.metadata({ 'x-kubernetes-list-type': 'set' })) })));
    expect((fromValibot['properties'] as Record<string, unknown>)['tags']).toEqual({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' });
    expect(fieldOf({ type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })).toMatchObject({ 'x-kubernetes-list-map-keys': ['name'] });
    expect(fieldOf({ type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' })).toMatchObject({ 'x-kubernetes-map-type': 'atomic' });
  });

  it('merges allOf branches into their node', () => {
    expect(specOf(z.object({ both: z.intersection(z.object({ a: z.string() }), z.object({ b: z.number() })) }))['properties']).toEqual({
      both: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a', 'b'] },
    });
  });

  it('keeps defaults, from the input direction, so the field is optional', () => {
    const spec = specOf(z.object({ replicas: z.number().int().min(0).default(1), image: z.string() }));
    expect(spec).toEqual({ type: 'object', properties: { replicas: { type: 'integer', minimum: 0, default: 1 }, image: { type: 'string' } }, required: ['image'] });
  });
});

describe('what cannot be structural is named at definition time', () => {
  it.each([
    ['uniqueItems', { type: 'array', items: { type: 'string' }, uniqueItems: true }, 'spec.f', /uniqueItems.*x-kubernetes-list-type: set/],
    ['patternProperties', { type: 'object', patternProperties: { '^a': { type: 'string' } } }, 'spec.f', /patternProperties/],
    ['a tuple', { type: 'array', prefixItems: [{ type: 'string' }] }, 'spec.f', /tuple/],
    ['an array without items', { type: 'array' }, 'spec.f', /items/],
    ['properties beside a schema for other keys', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'integer' } }, 'spec.f', /properties and additionalProperties/],
    ['a node with validations and no type', { minLength: 1 }, 'spec.f', /no type/],
    ['a value of several types', { type: ['string', 'boolean'] }, 'spec.f', /several types/],
    ['a default that does not validate', { type: 'integer', minimum: 0, default: -1 }, 'spec.f', /default -1 does not validate: below the minimum 0/],
    ['a default of the wrong type', { type: 'string', default: 3 }, 'spec.f', /expected string, got integer/],
    ['a default with a field pruning would drop', { type: 'object', properties: { a: { type: 'integer' } }, default: { a: 1, zz: 1 } }, 'spec.f', /has the field "zz" its schema does not name/],
    ['a restriction on map keys', { type: 'object', propertyNames: { pattern: '^a' }, additionalProperties: { type: 'string' } }, 'spec.f', /propertyNames/],
    ['a list map whose key is not required', { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }, 'spec.f[]', /required or have a default/],
    ['a CEL rule without its rule', { type: 'string', 'x-kubernetes-validations': [{ message: 'x' }] }, 'spec.f', /CEL rule/],
    ['a CEL rule that does not parse', { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() <=' }] }, 'spec.f', /x-kubernetes-validations\[0\]\.rule "self\.size\(\) <=" is not CEL kube-apiserver can compile: 1:/],
    ['a message expression that does not parse', { type: 'string', 'x-kubernetes-validations': [{ rule: 'true', messageExpression: '"a" +' }] }, 'spec.f', /x-kubernetes-validations\[0\]\.messageExpression/],
    ['a rule message of two lines', { type: 'string', 'x-kubernetes-validations': [{ rule: 'true', message: 'a\nb' }] }, 'spec.f', /message must be one line/],
    ['a rule reason the server does not know', { type: 'string', 'x-kubernetes-validations': [{ rule: 'true', reason: 'Nope' }] }, 'spec.f', /reason must be one of FieldValueInvalid/],
    ['a $ref to nowhere', { $ref: '#/$defs/Missing' }, 'spec.f', /does not name a definition/],
  ])('%s', (_name, field, path, message) => {
    const err = schemaError({ type: 'object', properties: { f: field } });
    expect(err.field).toBe(path);
    expect(err.message).toMatch(message);
  });

  it.each([
    ['a lookahead', '^\\d+(?=px)$', /a lookahead \(\?=…\)/],
    ['a negative lookahead', '^(?!x)', /a lookahead \(\?!…\)/],
    ['a lookbehind', '(?<=a)b', /a lookbehind \(\?<=…\)/],
    ['a backreference', '^(a)\\1$', /a backreference \(\\1\)/],
    ['a \\u escape', '^\\u0041$', /a \\u escape/],
  ])('refuses a pattern RE2 cannot compile: %s', (_name, pattern, message) => {
    const err = schemaError({ type: 'object', properties: { f: { type: 'string', pattern } } });
    expect(err.field).toBe('spec.f');
    expect(err.message).toMatch(message);
    expect(err.message).toMatch(/kube-apiserver's regular expressions \(RE2\)/);
  });

  it('names the field of a zod format whose pattern RE2 cannot compile, and takes the pattern given instead', () => {
    expect(() => specOf(z.object({ host: z.hostname() }))).toThrow(/^spec\.host: the pattern uses a lookahead/);
    expect(() => specOf(z.object({ every: z.iso.duration() }))).toThrow(/^spec\.every: the pattern uses a lookahead/);
    expect(specOf(z.object({ host: z.hostname().meta({ pattern: '^[a-z0-9.-]+$' }) }))['properties']).toEqual({ host: { type: 'string', format: 'hostname', pattern: '^[a-z0-9.-]+$' } });
  });

  it('accepts what only looks like RE2-less syntax: escaped, or inside a character class', () => {
    expect(fieldOf({ type: 'string', pattern: '^\\(?=[(?=]\\\\1$' })).toEqual({ type: 'string', pattern: '^\\(?=[(?=]\\\\1$' });
    expect(fieldOf({ type: 'string', pattern: '^[](?=]+(?:x)(?P<n>y)(?<m>z)$' })).toMatchObject({ type: 'string' });
  });

  it('refuses a default inside a union, as kube-apiserver does', () => {
    const err = schemaError({ type: 'object', properties: { f: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, anyOf: [{ required: ['a'], default: { a: 'x' } }, { required: ['b'] }] } } });
    expect(err.message).toMatch(/default inside a branch of a union cannot be structural/);
  });
});

describe('the structural check, on schemas written by hand', () => {
  // The rewrite never produces these; the check is the second line, and names what kube-apiserver would refuse.
  it.each([
    ['a node without a type', { type: 'object', properties: { a: { minLength: 1 } } }, 'spec.a', /has no type/],
    ['a type inside a junctor', { type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ properties: { a: { type: 'string' } } }] }, 'spec.a', /only value validations may appear, not type/],
    ['a description inside a junctor', { type: 'string', oneOf: [{ description: 'x' }] }, 'spec', /not description/],
    ['a default inside a junctor', { type: 'object', anyOf: [{ default: {} }] }, 'spec', /not default/],
    ['preserve-unknown-fields false', { type: 'object', 'x-kubernetes-preserve-unknown-fields': false }, 'spec', /must be true/],
    ['int-or-string with a type', { type: 'string', 'x-kubernetes-int-or-string': true }, 'spec', /cannot have a type/],
    ['both properties and additionalProperties', { type: 'object', properties: {}, additionalProperties: { type: 'string' } }, 'spec', /both/],
    ['a set of objects', { type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'set' }, 'spec', /scalar items/],
    ['a map type on a string', { type: 'string', 'x-kubernetes-map-type': 'atomic' }, 'spec', /on an object/],
  ])('refuses %s', (_name, schema, field, message) => {
    let caught: unknown;
    try {
      checkStructural('spec', schema);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CustomResourceSchemaError);
    expect((caught as CustomResourceSchemaError).field).toBe(field);
    expect((caught as CustomResourceSchemaError).message).toMatch(message);
  });

  it('accepts what kube-apiserver accepts', () => {
    expect(() => checkStructural('spec', { type: 'object', properties: { a: { type: 'string' }, p: { 'x-kubernetes-int-or-string': true }, any: { 'x-kubernetes-preserve-unknown-fields': true } }, anyOf: [{ required: ['a'], properties: { a: { enum: ['x'] } } }, { required: ['p'] }] })).not.toThrow();
  });
});
