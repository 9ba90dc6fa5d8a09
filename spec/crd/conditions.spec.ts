import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { conditions, customResource, jsonSchema, setCondition, type Condition } from '../../src/index.js';
import { conditions as zodConditions } from 'rxkube/zod';
import { conditions as valibotConditions } from 'rxkube/valibot';

const t0 = new Date('2026-01-02T03:04:05.678Z');
const t1 = new Date('2026-01-02T04:00:00.000Z');
const ready: Condition = Object.freeze({ type: 'Ready', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Starting', message: 'waiting', observedGeneration: 1 });

describe('setCondition', () => {
  it('adds a condition of a new type, stamped now to the second in UTC', () => {
    expect(setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Available' }, t0)).toEqual([{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-02T03:04:05Z', reason: 'Available', message: '' }]);
    expect(setCondition([ready], { type: 'Degraded', status: 'False', reason: 'AsExpected', lastTransitionTime: '2025-12-31T00:00:00Z' }, t0)[1]?.lastTransitionTime).toBe('2025-12-31T00:00:00Z');
  });

  it('keeps lastTransitionTime while the status stays, and updates reason, message and generation', () => {
    const list = Object.freeze([ready]);
    const next = setCondition(list, { type: 'Ready', status: 'False', reason: 'Pulling', message: 'pulling image', observedGeneration: 2 }, t0);
    expect(next).toEqual([{ ...ready, reason: 'Pulling', message: 'pulling image', observedGeneration: 2 }]);
    expect(list).toEqual([ready]);
  });

  it('moves lastTransitionTime when the status changes: to the update\'s own time, else now', () => {
    expect(setCondition([ready], { type: 'Ready', status: 'True', reason: 'Available' }, t1)[0]?.lastTransitionTime).toBe('2026-01-02T04:00:00Z');
    expect(setCondition([ready], { type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: '2026-01-02T03:30:00Z' }, t1)[0]?.lastTransitionTime).toBe('2026-01-02T03:30:00Z');
    expect(setCondition([ready], { type: 'Ready', status: 'False', reason: 'Starting', message: 'waiting', observedGeneration: 1, lastTransitionTime: '2026-01-02T03:30:00Z' }, t1)[0]?.lastTransitionTime).toBe(ready.lastTransitionTime);
  });

  it('answers the very list given when nothing changed, and keeps the other conditions in place', () => {
    const other: Condition = { type: 'Degraded', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'AsExpected', message: '' };
    const list = Object.freeze([other, ready]);
    expect(setCondition(list, { type: 'Ready', status: 'False', reason: 'Starting', message: 'waiting', observedGeneration: 1 }, t1)).toBe(list);
    const next = setCondition(list, { type: 'Ready', status: 'True', reason: 'Available' }, t1);
    expect(next).not.toBe(list);
    expect(next.map((c) => c.type)).toEqual(['Degraded', 'Ready']);
    expect(next[0]).toBe(other);
  });

  it.each([
    [{ type: 'not ready', status: 'True', reason: 'A' }, /type must be CamelCase/],
    [{ type: 'x'.repeat(317), status: 'True', reason: 'A' }, /type must be/],
    [{ type: 'Ready', status: 'true', reason: 'A' }, /status must be "True", "False" or "Unknown", got "true"/],
    [{ type: 'Ready', status: 'True', reason: '' }, /reason must be CamelCase/],
    [{ type: 'Ready', status: 'True', reason: 'has space' }, /reason must be CamelCase/],
    [{ type: 'Ready', status: 'True', reason: 'A', observedGeneration: -1 }, /observedGeneration must be a non-negative integer/],
    [{ type: 'Ready', status: 'True', reason: 'A', lastTransitionTime: 'yesterday' }, /lastTransitionTime must be an RFC 3339/],
  ])('refuses %j as the API server would', (update, message) => {
    expect(() => setCondition([], update as never, t0)).toThrow(message);
  });
});

describe('conditions()', () => {
  /** The structural CRD schema of `status.conditions` of a status schema. */
  function conditionsOf(status: object): unknown {
    const def = customResource({ group: 'example.com', version: 'v1', kind: 'Website', spec: jsonSchema<object>({ type: 'object' }), status: status as Record<string, unknown> });
    const root = def.crd().spec.versions[0]?.schema.openAPIV3Schema as { properties: { status: { properties: Record<string, unknown> } } };
    return root.properties.status.properties['conditions'];
  }

  const plain = conditionsOf({ type: 'object', properties: { conditions: conditions() } });

  it('is metav1.Condition[] with apimachinery\'s bounds, a list map keyed by type', () => {
    expect(plain).toMatchObject({
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
        properties: {
          type: { type: 'string', maxLength: 316 },
          status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
          observedGeneration: { type: 'integer', minimum: 0 },
          lastTransitionTime: { type: 'string', format: 'date-time' },
          reason: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' },
          message: { type: 'string', maxLength: 32768 },
        },
      },
    });
  });

  it('gives the same CRD schema built with zod or valibot', () => {
    expect(conditionsOf(z.object({ conditions: zodConditions() }))).toEqual(plain);
    expect(conditionsOf(toStandardJsonSchema(v.object({ conditions: valibotConditions() })))).toEqual(plain);
  });

  it('validates with zod and valibot as the API server would', () => {
    const good = [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-02T03:04:05Z', reason: 'Available', message: '' }];
    const bad = [{ type: 'Ready', status: 'Yes', lastTransitionTime: 'now', reason: '', message: '' }];
    expect(zodConditions().safeParse(good).success).toBe(true);
    expect(zodConditions().safeParse(bad).error?.issues.map((i) => i.path.join('.'))).toEqual(['0.status', '0.lastTransitionTime', '0.reason', '0.reason']);
    expect(v.safeParse(valibotConditions(), good).success).toBe(true);
    expect(v.safeParse(valibotConditions(), bad).success).toBe(false);
    const fromSet = setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Available' });
    expect(zodConditions().safeParse(fromSet).success).toBe(true);
    expect(v.safeParse(valibotConditions(), fromSet).success).toBe(true);
  });
});
