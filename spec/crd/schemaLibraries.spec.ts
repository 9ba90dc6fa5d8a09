import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type } from 'arktype';
import { Type } from '@sinclair/typebox';
import { customResource, objectClient } from '../../src/index.js';
import { KubeApiError } from '../../src/errors/api/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';

// ArkType (Standard Schema with Standard JSON Schema) and TypeBox (plain JSON Schema with a static type)
// give the same definitions zod and valibot do: the structural CRD, validation, and a simulator that
// serves the CRD and enforces it (CR-3, CR-4, CR-23, CR-32…CR-34).

const ArkSite = customResource({
  group: 'example.com',
  version: 'v1',
  kind: 'ArkSite',
  spec: type({
    image: 'string > 0',
    replicas: '0 <= number.integer <= 50 = 1',
    'tier?': "'free' | 'pro'",
    port: '1024 < number.integer < 65536',
    'owner?': 'string | null',
    'labels?': 'Record<string, string>',
    'edge?': { region: 'string = "eu"' },
  }),
  status: type({ 'readyReplicas?': 'number.integer >= 0' }),
});

const BoxSite = customResource({
  group: 'example.com',
  version: 'v1',
  kind: 'BoxSite',
  spec: Type.Object({
    image: Type.String({ minLength: 1 }),
    replicas: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, default: 1 })),
    tier: Type.Optional(Type.Union([Type.Literal('free'), Type.Literal('pro')])),
    port: Type.Integer({ exclusiveMinimum: 1024, exclusiveMaximum: 65536 }),
    owner: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  }),
  status: Type.Object({ readyReplicas: Type.Optional(Type.Integer({ minimum: 0 })) }),
});

const specSchema = (def: { crd(): { spec: { versions: readonly { schema: { openAPIV3Schema: unknown } }[] } } }): unknown =>
  (def.crd().spec.versions[0]?.schema.openAPIV3Schema as { properties: { spec: unknown } }).properties.spec;

/** Every symbol-keyed property anywhere in a value (TypeBox marks its schemas with them). */
function symbolKeys(value: unknown): symbol[] {
  if (typeof value !== 'object' || value === null) return [];
  return [...Object.getOwnPropertySymbols(value), ...Object.values(value).flatMap(symbolKeys)];
}

const object = (kind: string, spec: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'example.com/v1', kind, metadata: { name: 'home', namespace: 'default' }, spec });

describe('an ArkType definition', () => {
  it('gives the structural schema with its bounds, literal union, nullable field, map and defaults (ArkType writes them only in its own toJsonSchema)', () => {
    expect(specSchema(ArkSite)).toEqual({
      type: 'object',
      properties: {
        image: { type: 'string', minLength: 1 },
        port: { type: 'integer', minimum: 1024, exclusiveMinimum: true, maximum: 65536, exclusiveMaximum: true },
        edge: { type: 'object', properties: { region: { type: 'string', default: 'eu' } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        owner: { type: 'string', nullable: true },
        replicas: { type: 'integer', minimum: 0, maximum: 50, default: 1 },
        tier: { type: 'string', enum: ['free', 'pro'] },
      },
      required: ['image', 'port'],
    });
    expect(JSON.stringify(ArkSite.crd())).not.toContain('$schema');
  });

  it('validates with ArkType itself: its defaults applied, its messages at the field paths', () => {
    expect(ArkSite.validate(object('ArkSite', { image: 'nginx', port: 8080, edge: {} }))).toEqual({ value: object('ArkSite', { image: 'nginx', port: 8080, replicas: 1, edge: { region: 'eu' } }) });
    const refused = ArkSite.validate(object('ArkSite', { image: '', port: 1024, tier: 'gold' }));
    expect(refused.issues?.map((i) => i.path)).toEqual(['spec.image', 'spec.port', 'spec.tier']);
    expect(refused.issues?.[1]?.message).toMatch(/more than 1024/);
  });

  it('refuses what has no JSON form when the definition is made', () => {
    expect(() => customResource({ group: 'example.com', version: 'v1', kind: 'When', spec: type({ at: 'Date' }) })).toThrow(/spec: .*a Date has no JSON form.*declare a string/);
    expect(() => customResource({ group: 'example.com', version: 'v1', kind: 'Big', spec: type({ n: 'bigint = 1n' }) })).toThrow(/spec: .*a default that is not JSON data \(a bigint\) cannot be written in a CRD/);
  });
});

describe('a TypeBox definition', () => {
  it('gives the structural schema, a record as a map of values, and none of TypeBox’s symbol-keyed marks', () => {
    expect(specSchema(BoxSite)).toEqual({
      type: 'object',
      properties: {
        image: { type: 'string', minLength: 1 },
        replicas: { type: 'integer', minimum: 0, maximum: 50, default: 1 },
        tier: { type: 'string', enum: ['free', 'pro'] },
        port: { type: 'integer', minimum: 1024, exclusiveMinimum: true, maximum: 65536, exclusiveMaximum: true },
        owner: { type: 'string', nullable: true },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
      required: ['image', 'port'],
    });
    expect(symbolKeys(BoxSite.crd())).toEqual([]);
  });

  it('refuses a record whose keys are restricted, naming the field', () => {
    expect(() => customResource({ group: 'example.com', version: 'v1', kind: 'Numbered', spec: Type.Object({ byIndex: Type.Record(Type.Number(), Type.String()) }) })).toThrow(
      /spec\.byIndex: a restriction on the keys of a map \(patternProperties\)/,
    );
  });

  it('validates with rxkube’s own checks of the structural schema, reporting the first problem (CR-23)', () => {
    const valid = object('BoxSite', { image: 'nginx', port: 8080, labels: { team: 'web' } });
    expect(BoxSite.validate(valid)).toEqual({ value: valid });
    expect(BoxSite.validate(object('BoxSite', { image: 'nginx', port: 1024 }))).toEqual({ issues: [{ path: 'spec.port', message: 'below the minimum 1024' }] });
    expect(BoxSite.validate(object('BoxSite', { image: 'nginx', port: 8080, labels: { team: 7 } }))).toEqual({ issues: [{ path: 'spec.labels.team', message: 'expected string, got integer' }] });
  });
});

describe('the simulator serving these CRDs', () => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer({ crds: [ArkSite.crd(), BoxSite.crd()] });
  });
  afterEach(async () => {
    await server.close();
  });

  it.each([
    ['ArkSite', ArkSite],
    ['BoxSite', BoxSite],
  ] as const)('%s: stores a valid object with the schema’s defaults, and refuses an invalid one with a 422 naming the field', async (kind, def) => {
    const client = objectClient(server.kubeConfig(), def as typeof ArkSite, { namespace: 'default' });
    const created = await client.create(object(kind, { image: 'nginx', port: 8080, labels: { team: 'web' }, ...(kind === 'ArkSite' ? { edge: {} } : {}) }) as never);
    expect(created.spec).toEqual({ image: 'nginx', port: 8080, replicas: 1, labels: { team: 'web' }, ...(kind === 'ArkSite' ? { edge: { region: 'eu' } } : {}) });
    const refused = await client.create({ ...object(kind, { image: 'nginx', port: 1024, tier: 'gold' }), metadata: { name: 'bad', namespace: 'default' } } as never).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(KubeApiError);
    expect((refused as KubeApiError).status).toBe(422);
    expect((refused as KubeApiError).serverMessage).toContain(`${kind}.example.com "bad" is invalid: [`);
    expect((refused as KubeApiError).serverMessage).toContain('spec.port: Invalid value: 1024');
    expect((refused as KubeApiError).details?.details?.causes?.map((c) => c.field).sort()).toEqual(['spec.port', 'spec.tier']);
  });
});
