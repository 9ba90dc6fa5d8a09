import { describe, expect, it } from 'vitest';
import { admitCustomObject, type StructuralSchemaInput } from '../../../src/testing/crd/schema/index.js';
import { RICH_SCHEMA } from './richSchema.js';

const base = { apiVersion: 'e.x/v1', kind: 'Widget', metadata: { name: 'w' } };
const causes = (schema: StructuralSchemaInput, spec: unknown, old?: unknown): string[] =>
  admitCustomObject(schema, { ...base, spec }, old === undefined ? undefined : { ...base, spec: old }).causes.map(
    (c) => `${c.field} | ${c.reason} | ${c.message}`,
  );

function withRule(rule: Record<string, unknown>, props: Record<string, StructuralSchemaInput> = {}): StructuralSchemaInput {
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: { a: { type: 'integer' }, b: { type: 'integer' }, s: { type: 'string' }, l: { type: 'array', items: { type: 'integer' } }, ...props },
        'x-kubernetes-validations': [rule as never],
      },
    },
  };
}

describe('x-kubernetes-validations', () => {
  it('reports a failed rule with its message and the schema type as the value', () => {
    expect(causes(RICH_SCHEMA, { image: 'n', replicas: 2, minReplicas: 5 })).toEqual([
      'spec | FieldValueInvalid | Invalid value: "object": minReplicas must not exceed replicas',
    ]);
  });

  it('says "failed rule" with the rule when there is no message', () => {
    expect(causes(withRule({ rule: 'self.a < self.b' }), { a: 2, b: 1 })).toEqual(['spec | FieldValueInvalid | Invalid value: "object": failed rule: self.a < self.b']);
  });

  it('uses messageExpression, fieldPath and reason', () => {
    expect(causes(RICH_SCHEMA, { image: 'n', name: 'xyz' })).toEqual(['spec.name | FieldValueInvalid | Invalid value: "string": name xyz must start with n']);
    expect(causes(RICH_SCHEMA, { image: 'n', limits: { low: 5, high: 1 } })).toEqual(['spec.limits.low | FieldValueForbidden | Forbidden: low must not exceed high']);
  });

  it('reports a rule at the root on the object itself', () => {
    expect(causes(RICH_SCHEMA, { image: 'n', step: 100 })).toEqual(['<nil> | FieldValueInvalid | Invalid value: "object": step must stay below 100']);
  });

  it('names the missing key of a rule that reads one', () => {
    expect(causes(RICH_SCHEMA, { image: 'n', limits: { high: 1 } })).toEqual([
      'spec.limits | FieldValueInvalid | Invalid value: "object": no such key: low evaluating rule: low must not exceed high',
    ]);
  });

  it('types integers as int and uses RE2 for matches()', () => {
    expect(causes(withRule({ rule: 'self.a + 1 == 3 && self.s.matches("^a+$")' }), { a: 2, s: 'aa' })).toEqual([]);
    expect(causes(withRule({ rule: 'self.s.matches("^a+$")' }), { s: 'ab' })).toHaveLength(1);
  });

  it('provides the strings extension and the cheap Kubernetes list functions', () => {
    const ok = "self.s.lowerAscii() == 'ab' && 'abc'.indexOf('b') == 1 && '%s-%d'.format(['a', 1]) == 'a-1' && self.l.isSorted() && self.l.sum() == 6 && self.l.max() == 3 && self.l.indexOf(2) == 1";
    expect(causes(withRule({ rule: ok }), { s: 'AB', l: [1, 2, 3] })).toEqual([]);
    expect(causes(withRule({ rule: 'self.l.isSorted()' }), { l: [2, 1] })).toHaveLength(1);
  });

  it('gives date-time strings as timestamps and duration strings as durations', () => {
    expect(causes(RICH_SCHEMA, { image: 'n', created: '1999-12-31T23:59:59Z', timeout: '90m' })).toEqual([
      'spec.created | FieldValueInvalid | Invalid value: "string": must be in this millennium',
      'spec.timeout | FieldValueInvalid | Invalid value: "string": at most an hour',
    ]);
    expect(causes(RICH_SCHEMA, { image: 'n', created: '2024-01-02T03:04:05.5+01:00', timeout: '59m59.5s' })).toEqual([]);
  });

  it('refuses with a clear message a rule calling a Kubernetes function the simulator lacks', () => {
    const [cause] = causes(withRule({ rule: "quantity(self.s).isGreaterThan(quantity('1'))" }), { s: '2' });
    expect(cause).toContain('rule uses quantity(), which the simulator\'s CEL library does not provide');
  });

  it('runs transition rules only on update, with oldSelf', () => {
    expect(causes(RICH_SCHEMA, { image: 'n', immutable: 'one' })).toEqual([]);
    expect(causes(RICH_SCHEMA, { image: 'n', immutable: 'two' }, { image: 'n', immutable: 'one' })).toEqual([
      'spec.immutable | FieldValueInvalid | Invalid value: "string": is immutable',
    ]);
    expect(causes(RICH_SCHEMA, { image: 'n', immutable: 'one', replicas: 3 }, { image: 'n', immutable: 'one' })).toEqual([]);
  });

  it('ratchets: an unchanged invalid value is let through on update', () => {
    const old = { image: 'n', replicas: 99 };
    expect(causes(RICH_SCHEMA, { ...old, mode: 'Fast' }, old)).toEqual([]);
    expect(causes(RICH_SCHEMA, { ...old, replicas: 98 }, old)).toEqual([
      'spec.replicas | FieldValueInvalid | Invalid value: 98: spec.replicas in body should be less than or equal to 50',
    ]);
  });
});
