import { describe, expect, it } from 'vitest';
import { admitCustomObject, defaultCustomObject, type StructuralSchemaInput } from '../../../src/testing/crd/schema/index.js';
import { RICH_SCHEMA } from './richSchema.js';

const base = { apiVersion: 'e.x/v1', kind: 'Widget', metadata: { name: 'w' } };
const DEFAULTS = { minReplicas: 0, mode: 'Slow', nested: { a: { b: 'x' } }, nonNullDefault: 'd', replicas: 1 };

describe('admitCustomObject: pruning', () => {
  it('drops unknown fields, keeps preserved ones, apiVersion/kind/metadata of embedded resources', () => {
    const { object, causes } = admitCustomObject(RICH_SCHEMA, {
      ...base,
      top: 'level',
      spec: {
        image: 'n', extra: 1, ports: [{ name: 'http', port: 80, junk: true }], free: { any: { thing: [1] } },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', bogus: 1 }, spec: { x: 1 } },
      },
    }, undefined);
    expect(causes).toEqual([]);
    expect(object).toEqual({
      ...base,
      spec: {
        ...DEFAULTS, image: 'n', ports: [{ name: 'http', port: 80 }], free: { any: { thing: [1] } },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 1 } },
      },
    });
  });

  it('cuts the object\'s own metadata to ObjectMeta\'s fields', () => {
    const { object } = admitCustomObject(RICH_SCHEMA, { ...base, metadata: { name: 'w', labels: { a: 'b' }, nope: 1 }, spec: { image: 'n' } }, undefined);
    expect(object['metadata']).toEqual({ name: 'w', labels: { a: 'b' } });
  });

  it('prunes one place of an object shared by two places alone, as if decoded from JSON', () => {
    const shared = { x: 1 };
    const { object } = admitCustomObject(RICH_SCHEMA, { ...base, spec: { image: 'n', free: shared, nested: { a: shared } } }, undefined);
    expect(object['spec']).toMatchObject({ free: { x: 1 }, nested: { a: { b: 'x' } } });
  });

  it('does not modify its input', () => {
    const input = { ...base, spec: { image: 'n', extra: 1 } };
    const copy = structuredClone(input);
    admitCustomObject(RICH_SCHEMA, input, undefined);
    expect(input).toEqual(copy);
  });
});

describe('admitCustomObject: defaults and nulls', () => {
  it('applies defaults top-down, a default object defaulted below', () => {
    expect(admitCustomObject(RICH_SCHEMA, { ...base, spec: { image: 'n' } }, undefined).object['spec']).toEqual({ ...DEFAULTS, image: 'n' });
  });

  it('keeps a nullable null, replaces a null that has a default, drops the other nulls', () => {
    const spec = { image: 'n', nullableNum: null, nonNullDefault: null, replicas: null, step: null };
    expect(admitCustomObject(RICH_SCHEMA, { ...base, spec }, undefined).object['spec']).toEqual({ ...DEFAULTS, image: 'n', nullableNum: null });
  });

  it('refuses a dropped null of a required field as missing', () => {
    expect(admitCustomObject(RICH_SCHEMA, { ...base, spec: { image: null } }, undefined).causes.map((c) => c.field)).toContain('spec.image');
  });

  it('replaces null map values and list items by the additionalProperties/items default', () => {
    const schema: StructuralSchemaInput = {
      type: 'object',
      properties: {
        m: { type: 'object', additionalProperties: { type: 'string', default: 'z' } },
        l: { type: 'array', items: { type: 'integer', default: 7 } },
      },
    };
    expect(admitCustomObject(schema, { m: { a: null }, l: [1, null] }, undefined).object).toEqual({ m: { a: 'z' }, l: [1, 7] });
  });
});

describe('defaultCustomObject', () => {
  it('defaults a stored object without validating it', () => {
    const stored = { ...base, spec: { image: '', replicas: 99 } };
    expect(defaultCustomObject(RICH_SCHEMA, stored)['spec']).toEqual({ ...DEFAULTS, image: '', replicas: 99 });
    expect(stored.spec).toEqual({ image: '', replicas: 99 });
  });
});
