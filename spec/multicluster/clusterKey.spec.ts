import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clusterKey, splitClusterKey } from '../../src/multicluster/clusterKey.js';

describe('clusterKey', () => {
  it('reads as cluster/namespace/name for usual names, and escapes only / and %', () => {
    expect(clusterKey('eu-1', 'default/web')).toBe('eu-1/default/web');
    expect(clusterKey('eu-1', 'node-1')).toBe('eu-1/node-1');
    expect(clusterKey('arn:aws:eks:eu-west-1:1234:cluster/prod', 'default/web')).toBe('arn:aws:eks:eu-west-1:1234:cluster%2Fprod/default/web');
    expect(clusterKey('50%', 'x')).toBe('50%25/x');
    expect(splitClusterKey('arn:aws:eks:eu-west-1:1234:cluster%2Fprod/default/web')).toEqual({ cluster: 'arn:aws:eks:eu-west-1:1234:cluster/prod', key: 'default/web' });
  });

  it('every (cluster, key) pair gives one key that splits back into it, and no two pairs give the same key (property)', () => {
    const pair = fc.tuple(fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom('a', '/', '%', '2', 'F', '5') }), fc.string({ maxLength: 8, unit: fc.constantFrom('a', '/', '%', '2', 'F') }));
    fc.assert(
      fc.property(pair, pair, ([c1, k1], [c2, k2]) => {
        expect(splitClusterKey(clusterKey(c1, k1))).toEqual({ cluster: c1, key: k1 });
        if (c1 !== c2 || k1 !== k2) expect(clusterKey(c1, k1)).not.toBe(clusterKey(c2, k2));
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses what is not a key of a cluster', () => {
    expect(() => clusterKey('', 'default/web')).toThrow(/non-empty string/);
    expect(() => splitClusterKey('/default/web')).toThrow(/not a multi-cluster key/);
    expect(() => splitClusterKey('web')).toThrow(/not a multi-cluster key/);
  });
});
