import { describe, expect, it } from 'vitest';
import { structuralReasons, type StructuralSchemaInput } from '../../../src/testing/crd/schema/index.js';
import { COMPOSITE_SCHEMA, NOT_STRUCTURAL, RICH_SCHEMA } from './richSchema.js';

/** The simulator's refusal of a schema, one `<field>: <message>` line per cause. */
const refusals = (schema: StructuralSchemaInput): string[] => structuralReasons(schema).map((c) => `${c.field}: ${c.message}`);

// The reasons are the server's (spec/e2e/crdSchema.e2e.spec.ts posts the same schemas as CRDs).

describe('structuralReasons', () => {
  it('accepts structural schemas with valid defaults and rules', () => {
    expect(refusals(RICH_SCHEMA)).toEqual([]);
    expect(refusals(COMPOSITE_SCHEMA)).toEqual([]);
  });

  it.each(NOT_STRUCTURAL)('refuses %s', (_name, schema) => {
    expect(refusals(schema).length).toBeGreaterThan(0);
  });

  it('names each reason with its field under openAPIV3Schema', () => {
    expect(refusals({ type: 'object', properties: { spec: { properties: { a: {} } } } })).toEqual([
      'openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
      'openAPIV3Schema.properties[spec].properties[a].type: Required value: must not be empty for specified object fields',
    ]);
    expect(refusals({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'integer', default: 'x' } } } } })).toEqual([
      'openAPIV3Schema.properties[spec].properties[a].default: Invalid value: "string":  in body must be of type integer: "string"',
    ]);
    expect(refusals({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } } } })).toEqual([
      'openAPIV3Schema.properties[spec].properties[a].pattern: Invalid value: "(": must be a valid regular expression, but isn\'t: error parsing regexp: missing closing ): `(`',
    ]);
  });

  it('refuses a CEL rule that does not parse or calls an unsupported function', () => {
    const schema = (rule: string) => ({ type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule }] } } }) as const;
    expect(refusals(schema('self.'))[0]).toMatch(/^openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: "self\.": compilation failed: /);
    expect(refusals(schema("url('x') != null"))).toEqual([
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "url(\'x\') != null": the simulator\'s CEL library does not provide url()',
    ]);
  });

  it('refuses a default that fails its own CEL rules, as the server does', () => {
    const schema = { type: 'object', properties: { spec: { type: 'object', properties: {
      a: { type: 'integer', default: 3, 'x-kubernetes-validations': [{ rule: 'self % 2 == 0', message: 'must be even' }] },
    } } } } as const;
    expect(refusals(schema)).toEqual(['openAPIV3Schema.properties[spec].properties[a].default: Invalid value: "integer": must be even']);
  });

  it('tolerates a schema of the wrong shape', () => {
    expect(refusals(null as never)).toEqual(['openAPIV3Schema: Required value']);
    expect(refusals({ type: 'object', properties: { spec: 5 } } as never)).toEqual([]);
  });
});
