/**
 * The simulator's schema engine against the real kube-apiserver: one CRD with a rich structural
 * schema, then a table of objects (valid ones, one of each way to be invalid, defaults, pruning, CEL
 * rules) sent to the server as dry-run creates; the server's status code, 422 causes and returned
 * object must be what `admitCustomObject` gives. Then random schemas built from the supported
 * constructs, each as a CRD, and random objects against them: accepted and refused alike, with the
 * same defaults.
 */
import { request as httpsRequest } from 'node:https';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitCustomObject, type FieldCause } from '../../src/testing/crd/schema/index.js';
import type { StructuralSchemaInput } from '../../src/testing/crd/schema/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { startCluster, type Cluster } from './cluster.js';
import { randomCase, type RandomCase } from '../testing/crd/arbitraries.js';
import { COMPOSITE_SCHEMA, NOT_STRUCTURAL, RICH_SCHEMA } from '../testing/crd/richSchema.js';
import { structuralReasons } from '../../src/testing/crd/schema/index.js';

/** The simulator's refusal of a schema, one `<field>: <message>` line per cause. */
const refusals = (schema: StructuralSchemaInput): string[] => structuralReasons(schema).map((c) => `${c.field}: ${c.message}`);

const GROUP = 'schema.e2e.rxkube.test';
let cluster: Cluster;

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** A JSON body, or the text of one that is not JSON (a plain `404 page not found`). */
function parseBody(text: string): Record<string, unknown> {
  try {
    return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    return { text };
  }
}

/** One raw JSON request with the admin token: the server's own answer, nothing parsed into models. */
function send(method: string, path: string, body?: unknown): Promise<Reply> {
  const kc = cluster.kubeConfig;
  const ca = Buffer.from(kc.getCurrentCluster()?.caData ?? '', 'base64').toString();
  const token = kc.getCurrentUser()?.token ?? '';
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (data !== undefined) headers['content-type'] = 'application/json';
    const req = httpsRequest(`${cluster.server}${path}`, { method, ca, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, body: parseBody(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

function crd(plural: string, kind: string, schema: StructuralSchemaInput, subresources?: object): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Cluster',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, ...(subresources === undefined ? {} : { subresources }) }],
    },
  };
}

/** Creates a CRD and waits until its resource answers. */
async function install(plural: string, kind: string, schema: StructuralSchemaInput, subresources?: object): Promise<void> {
  const created = await send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd(plural, kind, schema, subresources));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await waitFor(async () => (await send('GET', `/apis/${GROUP}/v1/${plural}`)).status === 200, `${plural} to be served`, 60_000, { everyMs: 200 });
}

/** What the comparison looks at: the causes, sorted (the server walks Go maps, in no fixed order). */
function sortedCauses(causes: readonly FieldCause[]): string[] {
  return causes.map((c) => `${c.field} | ${c.reason} | ${c.message}`).sort();
}

function serverCauses(body: Record<string, unknown>): string[] {
  const details = body['details'] as { causes?: { field?: string; reason?: string; message?: string }[] } | undefined;
  return (details?.causes ?? []).map((c) => `${c.field ?? ''} | ${c.reason ?? ''} | ${c.message ?? ''}`).sort();
}

/** The object without what the server adds to metadata (uid, timestamps, managedFields…). */
function withoutServerMeta(obj: Record<string, unknown>): Record<string, unknown> {
  const { metadata, ...rest } = obj;
  const meta = (metadata ?? {}) as Record<string, unknown>;
  return { ...rest, metadata: { name: meta['name'] } };
}

interface Verdict {
  readonly status: number;
  readonly causes: string[];
  readonly object?: Record<string, unknown>;
}

async function serverVerdict(plural: string, obj: Record<string, unknown>): Promise<Verdict> {
  const reply = await send('POST', `/apis/${GROUP}/v1/${plural}?dryRun=All`, obj);
  if (reply.status === 201) return { status: 201, causes: [], object: withoutServerMeta(reply.body) };
  return { status: reply.status, causes: serverCauses(reply.body) };
}

function simulatorVerdict(schema: StructuralSchemaInput, obj: Record<string, unknown>): Verdict {
  const { object, causes } = admitCustomObject(schema, obj, undefined);
  if (causes.length === 0) return { status: 201, causes: [], object: withoutServerMeta(object) };
  return { status: 422, causes: sortedCauses(causes) };
}

const apiVersion = `${GROUP}/v1`;
const widget = (name: string, spec: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion,
  kind: 'Widget',
  metadata: { name },
  spec,
  ...extra,
});

/** Objects of every kind the engine must judge as the server does. */
const TABLE: readonly (readonly [string, Record<string, unknown>])[] = [
  ['a minimal valid object, defaulted', widget('w-min', { image: 'nginx' })],
  ['unknown fields pruned, preserved ones kept', widget('w-prune', {
    image: 'nginx', extra: 1, ports: [{ name: 'http', port: 80, junk: true }], free: { any: { thing: [1] } },
    template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', bogus: 1 }, spec: { x: 1 } },
  }, { top: 'level' })],
  ['maximum', widget('w-max', { image: 'nginx', replicas: 60 })],
  ['minimum', widget('w-min2', { image: 'nginx', replicas: -1 })],
  ['a string for an integer', widget('w-type', { image: 'nginx', replicas: 'many' })],
  ['a fraction for an integer', widget('w-frac', { image: 'nginx', replicas: 1.5 })],
  ['a whole float for an integer', widget('w-whole', { image: 'nginx', replicas: 2.0 })],
  ['a required field missing', widget('w-req', { replicas: 1 })],
  ['a null for a required field without default', widget('w-null-req', { image: null })],
  ['nulls: nullable kept, defaulted replaced, others dropped', widget('w-nulls', {
    image: 'nginx', nullableNum: null, nonNullDefault: null, replicas: null, step: null,
  })],
  ['too long', widget('w-long', { image: 'a'.repeat(21) })],
  ['too long in code points', widget('w-runes', { image: 'é'.repeat(20) })],
  ['too short', widget('w-short', { image: '' })],
  ['a pattern', widget('w-pattern', { image: 'UPPER' })],
  ['an enum', widget('w-enum', { image: 'nginx', mode: 'Medium' })],
  ['an exclusive minimum', widget('w-exmin', { image: 'nginx', ratio: 0 })],
  ['a float maximum', widget('w-fmax', { image: 'nginx', ratio: 1.5 })],
  ['multipleOf', widget('w-mult', { image: 'nginx', step: 7 })],
  ['formats', widget('w-fmt', { image: 'nginx', ip: '300.1.1.1', created: 'yesterday', id: 'not-a-uuid' })],
  ['non-strings in formatted string fields', widget('w-fmt-kinds', { image: 'nginx', ip: { a: 1 }, id: 5 })],
  ['a list in a formatted string field', widget('w-fmt-list', { image: 'nginx', ip: ['10.0.0.1'] })],
  ['valid formats', widget('w-fmt-ok', { image: 'nginx', ip: '10.0.0.1', created: '2024-01-02T03:04:05Z', id: '123e4567-e89b-12d3-a456-426614174000' })],
  ['int-or-string', widget('w-ios', { image: 'nginx', port: true })],
  ['int-or-string accepted', widget('w-ios-ok', { image: 'nginx', port: 'http' })],
  ['a set with a repeat, too many items', widget('w-set', { image: 'nginx', tags: ['a', 'b', 'a', 'c'] })],
  ['a map list with a repeated key and a missing key', widget('w-map', {
    image: 'nginx', ports: [{ name: 'a', port: 1 }, { name: 'a', port: 2 }, { port: 3 }],
  })],
  ['too many properties, a wrong map value', widget('w-props', { image: 'nginx', labels: { a: 'x', b: 1, c: 'z' } })],
  ['a CEL rule on an object', widget('w-cel', { image: 'nginx', replicas: 2, minReplicas: 5 })],
  ['a CEL messageExpression on a string', widget('w-celmsg', { image: 'nginx', name: 'xyz' })],
  ['a root CEL rule', widget('w-celroot', { image: 'nginx', step: 100 })],
  ['a CEL rule with fieldPath and reason', widget('w-celpath', { image: 'nginx', limits: { low: 5, high: 1 } })],
  ['CEL not run after a blocking error', widget('w-block', { image: 'nginx', replicas: 'x', minReplicas: 5 })],
  ['an embedded resource without kind', widget('w-embed', { image: 'nginx', template: { apiVersion: 'v1' } })],
  ['metadata.name constrained by the schema', widget('w-long-name-x', { image: 'nginx' })],
  ['a wrong status type', widget('w-status', { image: 'nginx' }, { status: { ready: 'yes' } })],
  ['an object where a list belongs', widget('w-list-type', { image: 'nginx', tags: { a: 1 } })],
  ['numbers printed as Go prints them', widget('w-floats', { image: 'nginx', ratio: 1234567.5, replicas: 1e6 })],
  ['strings quoted as Go quotes them', widget('w-quote', { image: 'tab\there "q" \u00a0 ✓ \u0007' })],
  ['a CEL rule reading a missing field', widget('w-nokey', { image: 'nginx', limits: { high: 1 } })],
  ['a null list item', widget('w-null-item', { image: 'nginx', tags: [null, 'a'] })],
  ['a map key with a control character', widget('w-key', { image: 'nginx', labels: { 'a\u0007': 1 } })],
  ['CEL on timestamps and durations', widget('w-time', { image: 'nginx', created: '1999-12-31T23:59:59Z', timeout: '90m' })],
  ['CEL on timestamps and durations, passing', widget('w-time-ok', { image: 'nginx', created: '2024-01-02T03:04:05.5+01:00', timeout: '59m59.5s' })],
  ['many errors at once', widget('w-many', { image: '', replicas: 99, mode: 'x', ratio: 2, tags: 'a' })],
];

beforeAll(async () => {
  cluster = await startCluster();
  await Promise.all([
    install('widgets', 'Widget', RICH_SCHEMA),
    install('composites', 'Composite', COMPOSITE_SCHEMA),
    install('gizmos', 'Gizmo', RICH_SCHEMA, { status: {} }),
  ]);
});

afterAll(async () => {
  await cluster?.stop();
});

describe('admitCustomObject against kube-apiserver', () => {
  it.each(TABLE)('%s', async (_name, obj) => {
    const server = await serverVerdict('widgets', obj);
    expect(simulatorVerdict(RICH_SCHEMA, obj)).toEqual(server);
  });

  const composite = (name: string, spec: unknown): Record<string, unknown> => ({ apiVersion, kind: 'Composite', metadata: { name }, spec });
  it.each([
    ['oneOf with none valid', composite('c-one-none', {})],
    ['oneOf with two valid', composite('c-one-two', { a: 1, b: 'x' })],
    ['oneOf with one valid', composite('c-one-ok', { a: 1 })],
    ['not', composite('c-not', { a: 1, x: 13 })],
    ['anyOf with none valid', composite('c-any', { a: 1, y: 'abc' })],
    ['anyOf with one valid', composite('c-any-ok', { a: 1, y: 'zzzz' })],
    ['allOf', composite('c-all', { a: 1, z: 9 })],
    ['a nullable enum without null', composite('c-null-enum', { a: 1, e: null })],
    ['a float multipleOf within rounding', composite('c-mult-ok', { a: 1, f: 0.3 })],
    ['a float multipleOf failing', composite('c-mult-bad', { a: 1, f: 0.35 })],
    ['a fractional multipleOf on an integer', composite('c-mult-int', { a: 1, h: 2 })],
  ])('value validations: %s', async (_name, obj) => {
    const server = await serverVerdict('composites', obj);
    expect(simulatorVerdict(COMPOSITE_SCHEMA, obj)).toEqual(server);
  });

  it.each(NOT_STRUCTURAL)('refuses a schema as the server refuses its CRD: %s', async (_name, schema) => {
    const reply = await send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All', crd('refused', 'Refused', schema));
    // One schema for every version is validated as the internal spec.validation, as the server reports it.
    const prefix = 'spec.validation.';
    const server = serverCauses(reply.body).map((c) => {
      const [field = '', , message = ''] = c.split(' | ');
      return `${field}: ${message}`;
    });
    expect({ status: reply.status, reasons: server }).toEqual({ status: 422, reasons: refusals(schema).map((r) => prefix + r).sort() });
  });

  it('runs a transition rule on update with oldSelf, as the server does', async () => {
    const obj = widget('w-update', { image: 'nginx', immutable: 'one' });
    const created = await send('POST', `/apis/${GROUP}/v1/widgets`, obj);
    expect(created.status).toBe(201);
    const stored = created.body;
    const changed = { ...stored, spec: { ...(stored['spec'] as object), immutable: 'two' } };
    const reply = await send('PUT', `/apis/${GROUP}/v1/widgets/w-update?dryRun=All`, changed);
    const sim = admitCustomObject(RICH_SCHEMA, changed, stored);
    expect({ status: reply.status, causes: serverCauses(reply.body) }).toEqual({ status: 422, causes: sortedCauses(sim.causes) });
    const same = { ...stored, spec: { ...(stored['spec'] as object), replicas: 3 } };
    const ok = await send('PUT', `/apis/${GROUP}/v1/widgets/w-update?dryRun=All`, same);
    expect(ok.status).toBe(200);
    expect(admitCustomObject(RICH_SCHEMA, same, stored).causes).toEqual([]);
  });

  it('correlates map-list items by key for a transition rule', async () => {
    const obj = widget('w-ports', { image: 'nginx', ports: [{ name: 'a', port: 5 }] });
    const created = await send('POST', `/apis/${GROUP}/v1/widgets`, obj);
    expect(created.status).toBe(201);
    const stored = created.body;
    const spec = { ...(stored['spec'] as object), ports: [{ name: 'b', port: 1 }, { name: 'a', port: 4 }] };
    const changed = { ...stored, spec };
    const reply = await send('PUT', `/apis/${GROUP}/v1/widgets/w-ports?dryRun=All`, changed);
    const sim = admitCustomObject(RICH_SCHEMA, changed, stored);
    expect(sortedCauses(sim.causes)).toEqual(['spec.ports[1] | FieldValueInvalid | Invalid value: "object": port may only grow']);
    expect({ status: reply.status, causes: serverCauses(reply.body) }).toEqual({ status: 422, causes: sortedCauses(sim.causes) });
  });

  it('validates a /status update on the status alone, as the server does', async () => {
    const obj = { apiVersion, kind: 'Gizmo', metadata: { name: 'g-status' }, spec: { image: 'nginx' } };
    const created = await send('POST', `/apis/${GROUP}/v1/gizmos`, obj);
    expect(created.status).toBe(201);
    const stored = created.body;
    const changed = { ...stored, status: { ready: 'yes' } };
    const reply = await send('PUT', `/apis/${GROUP}/v1/gizmos/g-status/status?dryRun=All`, changed);
    const sim = admitCustomObject(RICH_SCHEMA, changed, stored, 'status');
    expect({ status: reply.status, causes: serverCauses(reply.body) }).toEqual({ status: 422, causes: sortedCauses(sim.causes) });
  });

  it('judges random objects against random schemas as the server does', async () => {
    const cases: RandomCase[] = fc.sample(randomCase(), { numRuns: 40, seed: 25 });
    const accepted = await Promise.all(
      cases.map(async (c, i) => {
        const reply = await send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All', crd(`randoms${i}`, `Random${i}`, c.schema));
        const reasons = serverCauses(reply.body).map((r) => r.split(' | ')).map(([f = '', , m = '']) => `${f}: ${m}`);
        const ours = refusals(c.schema).map((r) => `spec.validation.${r}`).sort();
        expect({ status: reply.status, reasons }, JSON.stringify(c.schema)).toEqual({ status: ours.length === 0 ? 201 : 422, reasons: ours });
        if (ours.length === 0) await install(`randoms${i}`, `Random${i}`, c.schema);
        return ours.length === 0;
      }),
    );
    let checked = 0;
    for (const [i, c] of cases.entries()) {
      if (accepted[i] !== true) continue;
      for (const [j, spec] of c.objects.slice(0, 8).entries()) {
        const obj = { apiVersion, kind: `Random${i}`, metadata: { name: `r-${i}-${j}` }, spec };
        const server = await serverVerdict(`randoms${i}`, obj);
        expect(simulatorVerdict(c.schema, obj), JSON.stringify({ schema: c.schema, obj })).toEqual(server);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(30);
    expect(accepted.filter(Boolean).length).toBeGreaterThan(accepted.length / 2);
  });
});
