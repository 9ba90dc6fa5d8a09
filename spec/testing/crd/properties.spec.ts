import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admitCustomObject, defaultCustomObject, type StructuralSchemaInput } from '../../../src/testing/crd/schema/index.js';
import { rootNode } from '../../../src/testing/crd/schema/node.js';
import { pruneObject } from '../../../src/testing/crd/schema/prune.js';
import { randomCase, type RandomCase } from './arbitraries.js';

// Properties over random schemas built from the supported constructs (the e2e tier checks a sample
// of the same cases against kube-apiserver).

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `value` has its schema's type everywhere and every required field, judged independently of the engine. */
function fits(value: unknown, s: StructuralSchemaInput): boolean {
  if (value === null) return s.nullable === true;
  if (s['x-kubernetes-int-or-string'] === true) return Number.isInteger(value) || typeof value === 'string';
  switch (s.type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value) && value.every((v) => fits(v, s.items ?? {}));
    case 'object':
      return (
        isObject(value) &&
        (s.required ?? []).every((k) => k in value) &&
        Object.entries(value).every(([k, v]) => {
          const p = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
          return p === undefined || fits(v, p);
        })
      );
    default:
      return true;
  }
}

/** The object with every field its schema does not name removed, and non-nullable nulls without default. */
function strip(value: unknown, s: StructuralSchemaInput | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => strip(v, s?.items));
  if (!isObject(value)) return value;
  if (s === undefined) return {};
  if (s['x-kubernetes-preserve-unknown-fields'] === true) return value;
  const out: Json = {};
  const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  for (const [k, v] of Object.entries(value)) {
    const p = s.properties?.[k] ?? extra;
    if (p === undefined) continue;
    if (v === null && p.nullable !== true && p.default === undefined) continue;
    out[k] = strip(v, p);
  }
  return out;
}

const cases = fc.tuple(randomCase(), fc.nat(7));
const objectOf = (c: RandomCase, i: number): Json => ({ apiVersion: 'e.x/v1', kind: 'R', metadata: { name: 'r' }, spec: c.objects[i] });
const specSchema = (c: RandomCase): StructuralSchemaInput => c.schema.properties?.['spec'] ?? {};

describe('the schema engine over random schemas', () => {
  it('admits only objects that fit their schema, and admits them again unchanged', () => {
    fc.assert(
      fc.property(cases, ([c, i]) => {
        const { object, causes } = admitCustomObject(c.schema, objectOf(c, i), undefined);
        if (causes.length > 0) return;
        if ('spec' in object) expect(fits(object['spec'], specSchema(c))).toBe(true);
        expect(admitCustomObject(c.schema, object, undefined)).toEqual({ object, causes: [] });
      }),
      { numRuns: 300 },
    );
  });

  it('defaults idempotently', () => {
    fc.assert(
      fc.property(cases, ([c, i]) => {
        const once = defaultCustomObject(c.schema, objectOf(c, i));
        expect(defaultCustomObject(c.schema, once)).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });

  it('prunes exactly the fields the schema does not name (and non-nullable nulls without default)', () => {
    fc.assert(
      fc.property(cases, ([c, i]) => {
        const obj = objectOf(c, i);
        const pruned = structuredClone(obj);
        pruneObject(pruned, rootNode(c.schema));
        const spec = obj['spec'];
        const want: Json = { apiVersion: 'e.x/v1', kind: 'R', metadata: { name: 'r' } };
        if ('spec' in obj && !(spec === null && c.schema.properties?.['spec']?.nullable !== true)) want['spec'] = strip(spec, specSchema(c));
        expect(pruned).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a value of the wrong type wherever it is', () => {
    fc.assert(
      fc.property(cases, ([c, i]) => {
        const obj = objectOf(c, i);
        const { causes } = admitCustomObject(c.schema, obj, undefined);
        const pruned = structuredClone(obj);
        pruneObject(pruned, rootNode(c.schema));
        const defaulted = defaultCustomObject(c.schema, pruned);
        if ('spec' in defaulted && !fits(defaulted['spec'], specSchema(c))) expect(causes.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });
});
