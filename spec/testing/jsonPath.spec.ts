import { describe, expect, it } from 'vitest';
import { evaluate, JsonPathError, parseJsonPath, setPath } from '../../src/testing/crd/jsonPath.js';
import { age, tableJson } from '../../src/testing/server/table.js';
import { toResourceType } from '../../src/testing/storage/resources.js';

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

describe('table cells', () => {
  const column = (name: string, type: string, jsonPath: string) => ({ name, type, format: '', description: '', priority: 0, jsonPath });
  const type = {
    ...toResourceType({ group: 'example.com', version: 'v1', plural: 'things', kind: 'Thing' }),
    columns: [
      { ...column('Name', 'string', ''), format: 'name', jsonPath: undefined },
      column('Count', 'integer', '.spec.count'),
      column('Text', 'string', '.spec.count'),
      column('Ports', 'integer', '.spec.ports[*]'),
      column('On', 'boolean', '.spec.on'),
      column('When', 'date', '.spec.when'),
      column('Bad', 'date', '.spec.on'),
    ],
  };
  it('take the first value, and only of the column type', () => {
    const now = Date.parse('2026-01-10T00:00:00Z');
    const thing = { metadata: { name: 't' }, spec: { count: 'three', ports: [80, 443], on: 'yes', when: '2026-01-09T23:59:15Z' } };
    const table = JSON.parse(tableJson(type, JSON.stringify(thing), 'meta.k8s.io/v1', now));
    expect(table.rows[0].cells).toEqual(['t', null, 'three', 80, null, '45s', '<invalid>']);
    const other = { metadata: { name: 'u' }, spec: { count: 3, on: true, when: '2026' } };
    expect(JSON.parse(tableJson(type, JSON.stringify(other), 'meta.k8s.io/v1', now)).rows[0].cells).toEqual(['u', 3, '3', null, true, '<invalid>', null]);
  });
});
