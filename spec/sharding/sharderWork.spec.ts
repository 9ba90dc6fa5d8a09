/**
 * The sharder's work items: the queue tells items apart by the string each is written as, so every
 * item must read back as itself, and two different items must never be written alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { workKey, workOf, type SharderWork } from '../../src/sharding/sharderWork.js';

// Object keys and member identities as Kubernetes allows them: DNS labels, namespace/name.
const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
const objectKey = fc.oneof(label, fc.tuple(label, label).map(([ns, name]) => `${ns}/${name}`));
const work: fc.Arbitrary<SharderWork> = fc.oneof(
  objectKey.map((key) => ({ kind: 'place', key }) as const),
  fc.tuple(fc.nat(20), objectKey).map(([owned, key]) => ({ kind: 'follow', owned, key }) as const),
  label.map((member) => ({ kind: 'forget', member }) as const),
);

describe('sharder work items', () => {
  it('read back as the item they were written from', () => {
    fc.assert(
      fc.property(work, (w) => {
        expect(workOf(workKey(w))).toEqual(w);
      }),
    );
  });

  it('are written alike only when they are the same item', () => {
    fc.assert(
      fc.property(work, work, (a, b) => {
        expect(workKey(a) === workKey(b)).toBe(JSON.stringify(a) === JSON.stringify(b));
      }),
    );
  });

  it('keep a sharded object key as it is, so its queue entry is the key the informer reports', () => {
    expect(workKey({ kind: 'place', key: 'default/cm-1' })).toBe('default/cm-1');
    expect(workOf(workKey({ kind: 'follow', owned: 2, key: 'default/cm-1' }))).toEqual({ kind: 'follow', owned: 2, key: 'default/cm-1' });
  });
});
