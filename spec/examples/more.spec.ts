import { describe, expect, it } from 'vitest';
import { runExample } from '../helpers/runExample.js';

describe('more examples run against the simulator', () => {
  it('pod-logger: sums up the initial list, then one line per pod created, changed in a way worth telling, or deleted', async () => {
    const { code, stdout, stderr } = await runExample('pod-logger', ['--simulator', '--duration', '3s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('synced: 2 pods');
    // The first pod's whole life, in order; the label-only update in between gives no line.
    const web0 = lines.filter((l) => l.includes(' default/web-0 '));
    expect(web0).toEqual([
      '+ default/web-0 Pending on node-0',
      '~ default/web-0 phase Pending → Running',
      '~ default/web-0 ready false → true',
      '- default/web-0 (was Running on node-0)',
    ]);
    expect(lines).toContain('+ default/web-1 Pending on node-2');
    expect(lines.every((l) => /^(synced: |[+~-] default\/)/.test(l))).toBe(true);
  }, 30_000);

  it('indexed-lookups: pods by node and by owner from the indexes, again after pods move', async () => {
    const { code, stdout, stderr } = await runExample('indexed-lookups', ['--simulator', '--duration', '3s']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const blocks = stdout.trim().split(/^-- /m).filter((b) => b !== '');
    expect(blocks[0]?.trim().split('\n')).toEqual([
      'synced: 5 pods',
      'node node-0: default/api-0, default/api-1, default/web-0',
      'node node-1: default/web-1',
      'node node-2: default/web-2',
      'ReplicaSet default/api: 2 pods',
      'ReplicaSet default/web: 3 pods',
    ]);
    // The first move takes api-0 to node-1; owners keep their counts.
    expect(blocks[1]?.trim().split('\n')).toEqual([
      'changed: 5 pods',
      'node node-0: default/api-1, default/web-0',
      'node node-1: default/api-0, default/web-1',
      'node node-2: default/web-2',
      'ReplicaSet default/api: 2 pods',
      'ReplicaSet default/web: 3 pods',
    ]);
  }, 30_000);

  it('a misspelt flag is named, not ignored', async () => {
    const { code, stderr } = await runExample('pod-logger', ['--simulater']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/unknown argument "--simulater"/);
  }, 30_000);
});
