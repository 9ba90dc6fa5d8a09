import { applyPatch } from 'rfc6902';
import { describe, expect, it } from 'vitest';
import { admissionPatch, type DiffWork } from '../../src/admission/patch.js';
import type { KubeObject } from '../../src/index.js';

function pod(containers: unknown[]): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n', uid: 'u' }, spec: { containers } } as KubeObject;
}
const container = (c: number, envs: number) => ({ name: `c${c}`, image: 'nginx', env: Array.from({ length: envs }, (_, e) => ({ name: `VAR_${e}`, value: `value-${c}-${e}` })) });

function diffed(sent: KubeObject, wanted: KubeObject): { ops: unknown[]; work: DiffWork } {
  const work: DiffWork = { editDistance: 0, indexByIndex: 0 };
  const result = admissionPatch(sent, wanted, work);
  if (!('ops' in result)) throw new Error(`forbidden ${result.forbidden}`);
  const copy = structuredClone(sent);
  expect(applyPatch(copy, structuredClone(result.ops) as never).every((r) => r === null)).toBe(true);
  expect(copy).toEqual(wanted);
  return { ops: [...result.ops], work };
}

describe('admissionPatch', () => {
  it('diffs a list of large items index by index, never by an edit-distance table whose every cell walks two items', () => {
    // 64 containers of 200 env entries: a 64×64 table is under the cell bound, but each cell would diff two containers.
    const containers = Array.from({ length: 64 }, (_, c) => container(c, 200));
    const rotated = [...containers.slice(1), containers[0]];
    const { ops, work } = diffed(pod(containers), pod(rotated));
    expect(work.editDistance).toBe(0);
    // Index by index: each container's fields replaced in place, no container removed or added whole.
    expect(ops.some((op) => /^\/spec\/containers\/\d+$/.test((op as { path: string }).path))).toBe(false);
    expect(ops.every((op) => (op as { op: string }).op === 'replace')).toBe(true);
  });

  it('runs no table inside a table item: a small list of items holding lists', () => {
    const containers = Array.from({ length: 3 }, (_, c) => container(c, 5));
    const wanted = [containers[1], { ...containers[0], env: [...containers[0]!.env].reverse() }, containers[2]];
    const { work } = diffed(pod(containers), pod(wanted));
    expect(work.editDistance).toBe(1);
  });

  it('keeps the edit distance for small lists: one item removed is one remove', () => {
    const containers = Array.from({ length: 4 }, (_, c) => container(c, 3));
    const { ops, work } = diffed(pod(containers), pod([containers[0], containers[2], containers[3]]));
    expect(work.editDistance).toBe(1);
    expect(ops).toEqual([{ op: 'remove', path: '/spec/containers/1' }]);
  });

  it('a list far too long for a table (300,000 items) is diffed index by index', () => {
    const items = Array.from({ length: 300_000 }, (_, i) => i);
    const sent = { ...pod([]), spec: { items } } as KubeObject;
    const { ops, work } = diffed(sent, { ...sent, spec: { items: items.map((x) => (x === 5 ? -5 : x)) } } as KubeObject);
    expect(ops).toEqual([{ op: 'replace', path: '/spec/items/5', value: -5 }]);
    expect(work).toEqual({ editDistance: 0, indexByIndex: 1 });
  });

  it('an unchanged list of large items costs no table and no op', () => {
    const containers = Array.from({ length: 64 }, (_, c) => container(c, 200));
    const { ops, work } = diffed(pod(containers), pod(structuredClone(containers)));
    expect(ops).toEqual([]);
    expect(work).toEqual({ editDistance: 0, indexByIndex: 0 });
  });
});
