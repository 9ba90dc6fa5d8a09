/**
 * The hash ring: every replica computes the same owner for a key, shares are even, and a change of
 * membership moves only the keys it must (to a joining member, or off a leaving one).
 */
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ownerRingKey, shardLabels } from '../../src/sharding/index.js';
import { hashRing, type HashRing } from '../../src/sharding/ring.js';

const keys = (n: number, prefix = 'default/obj'): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

function shares(ring: HashRing, list: readonly string[]): Map<string, number> {
  const out = new Map<string, number>(ring.members.map((m) => [m, 0]));
  for (const k of list) {
    const owner = ring.ownerOf(k)!;
    out.set(owner, out.get(owner)! + 1);
  }
  return out;
}

describe('hashRing', () => {
  it('spreads 1 000 keys over three members within 15 % of the mean', () => {
    const ring = hashRing(['replica-0', 'replica-1', 'replica-2']);
    const counts = [...shares(ring, keys(1_000)).values()];
    const mean = 1_000 / 3;
    const spread = Math.max(...counts.map((c) => Math.abs(c - mean) / mean));
    console.log(`ring spread at 1k keys over 3 members: ${counts.join(' / ')} (max ${(spread * 100).toFixed(1)} % off the mean)`);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1_000);
    expect(spread).toBeLessThanOrEqual(0.15);
  });

  it('over many member sets, 1 000 virtual nodes keep the spread to sampling noise', () => {
    // Each trial: 3 members and 3 000 keys. With few virtual nodes the ring's own arcs are uneven on top of the noise.
    const worst = (virtualNodes: number): number => {
      let w = 0;
      for (let t = 0; t < 20; t++) {
        const ring = hashRing([`a-${t}`, `b-${t}`, `c-${t}`], { virtualNodes });
        const counts = [...shares(ring, keys(3_000, `ns-${t}/x`)).values()];
        w = Math.max(w, ...counts.map((c) => Math.abs(c - 1_000) / 1_000));
      }
      return w;
    };
    const few = worst(10);
    const many = worst(1_000);
    console.log(`worst spread over 20 member sets at 3k keys: ${(few * 100).toFixed(1)} % with 10 points each, ${(many * 100).toFixed(1)} % with 1000`);
    expect(many).toBeLessThan(0.12);
    expect(few).toBeGreaterThan(many);
  });

  it('is the same on every replica: order and duplicates of the members do not matter', () => {
    const a = hashRing(['x', 'y', 'z']);
    const b = hashRing(['z', 'x', 'y', 'x']);
    expect(b.members).toEqual(['x', 'y', 'z']);
    for (const k of keys(500)) expect(b.ownerOf(k)).toBe(a.ownerOf(k));
  });

  it('a joining member takes about a third from three, and every moved key goes to it', () => {
    const before = hashRing(['r0', 'r1', 'r2']);
    const after = hashRing(['r0', 'r1', 'r2', 'r3']);
    const list = keys(1_000);
    const moved = list.filter((k) => before.ownerOf(k) !== after.ownerOf(k));
    expect(moved.every((k) => after.ownerOf(k) === 'r3')).toBe(true);
    expect(moved.length / list.length).toBeGreaterThan(0.18);
    expect(moved.length / list.length).toBeLessThan(0.32);
  });

  it('moves only keys to a joining member, and only a leaving member\'s keys (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), { minLength: 1, maxLength: 6 }),
        fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
        fc.array(fc.string({ minLength: 1, maxLength: 20 }), { minLength: 1, maxLength: 60 }),
        (members, extra, list) => {
          fc.pre(!members.includes(extra));
          const small = hashRing(members, { virtualNodes: 50 });
          const big = hashRing([...members, extra], { virtualNodes: 50 });
          for (const k of list) {
            const from = small.ownerOf(k);
            const to = big.ownerOf(k);
            // Join: a key either stays or goes to the newcomer. Leave (big → small): only the leaver's keys move.
            expect(to === from || to === extra).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('an empty ring owns nothing', () => {
    expect(hashRing([]).ownerOf('default/a')).toBeUndefined();
  });

  it.each([
    ['virtualNodes', () => hashRing(['a'], { virtualNodes: 0 })],
    ['virtualNodes', () => hashRing(['a'], { virtualNodes: 1.5 })],
    ['members', () => hashRing(['a', ''])],
    ['options', () => hashRing(['a'], null as never)],
  ])('rejects bad %s with a TypeError', (name, make) => {
    expect(make).toThrow(TypeError);
    expect(make).toThrow(name === 'options' ? 'hashRing' : name);
  });

  it('is typed: members are strings, owners may be undefined', () => {
    expectTypeOf(hashRing(['a']).ownerOf('k')).toEqualTypeOf<string | undefined>();
    // @ts-expect-error members are strings
    expect(() => hashRing([1, 2])).toThrow(TypeError);
  });
});

describe('ring keys and labels', () => {
  it('ownerRingKey puts an owned object where its controlling owner is', () => {
    const child = {
      metadata: {
        namespace: 'default',
        name: 'web-1',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Other', name: 'not-this', uid: 'o', controller: false },
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u', controller: true },
        ],
      },
    };
    expect(ownerRingKey(child)).toBe('default/web');
    expect(ownerRingKey({ metadata: { namespace: 'default', name: 'web' } })).toBe('default/web');
    const ring = hashRing(['a', 'b', 'c', 'd']);
    expect(ring.ownerOf(ownerRingKey(child))).toBe(ring.ownerOf(ownerRingKey({ metadata: { namespace: 'default', name: 'web' } })));
  });

  it('shardLabels names the shard, drain and lease labels of one controller', () => {
    const l = shardLabels('checker');
    expect(l).toMatchObject({ shard: 'shard.rxkube.io/checker', drain: 'drain.shard.rxkube.io/checker', leaseSelector: 'lease.shard.rxkube.io/controller=checker' });
    expect(l.selectorFor('replica-0')).toBe('shard.rxkube.io/checker=replica-0');
    expect(() => l.selectorFor('Replica_0')).toThrow(/identity/);
    expect(() => shardLabels('Bad_Name')).toThrow(/controller/);
    expect(() => shardLabels('a'.repeat(64))).toThrow(TypeError);
  });
});
