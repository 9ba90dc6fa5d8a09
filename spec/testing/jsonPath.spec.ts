import { describe, expect, it } from 'vitest';
import { evaluate, JsonPathError, parseJsonPath, setPath } from '../../src/testing/crd/jsonPath.js';
import { age } from '../../src/testing/server/table.js';

// The JSONPath subset of printer columns and scale paths, and the ages the Table form prints.

const obj = {
  spec: { replicas: 3, ports: [{ port: 80 }, { port: 443 }], 'odd-key': 'x' },
  status: { conditions: [{ type: 'Synced', status: 'False' }, { type: 'Ready', status: 'True' }], ready: true },
};

describe('the JSONPath subset', () => {
  it.each([
    ['.spec.replicas', [3]],
    ['{.spec.replicas}', [3]],
    ['$.spec.replicas', [3]],
    ['.spec.ports[1].port', [443]],
    ['.spec.ports[-1].port', [443]],
    ['.spec.ports[*].port', [80, 443]],
    ['.spec.odd-key', ['x']],
    ['.status.conditions[?(@.type=="Ready")].status', ['True']],
    [".status.conditions[?(@.type!='Ready')].type", ['Synced']],
    ['.status.ready', [true]],
    ['.spec.missing', []],
    ['.spec.ports[7].port', []],
    ['.status.conditions[?(@.type=="Gone")].status', []],
  ])('%s', (path, expected) => {
    expect(evaluate(parseJsonPath(path), obj)).toEqual(expected);
  });

  it('says where a path leaves the subset', () => {
    expect(() => parseJsonPath('.spec.ports[0:1]')).toThrow(new JsonPathError('unsupported JSONPath at "[0:1]"'));
    expect(() => parseJsonPath('.spec..port')).toThrow(JsonPathError);
  });

  it('writes through field paths, creating objects on the way, and refuses others', () => {
    const target: Record<string, unknown> = {};
    setPath(target, '.spec.replicas', 4);
    expect(target).toEqual({ spec: { replicas: 4 } });
    expect(() => setPath(target, '.spec.ports[0].port', 1)).toThrow(JsonPathError);
  });
});

describe('ages', () => {
  const now = Date.parse('2026-01-10T00:00:00Z');
  it.each([
    [45, '45s'],
    [150, '2m30s'],
    [600, '10m'],
    [3 * 3600 + 600, '3h10m'],
    [20 * 3600, '20h'],
    [3 * 86400 + 3600, '3d1h'],
    [30 * 86400, '30d'],
    [3 * 365 * 86400, '3y'],
  ])('%i seconds is %s', (seconds, text) => {
    expect(age(now - seconds * 1000, now)).toBe(text);
  });
});
