import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { workQueue } from '../../src/workqueue/index.js';
import { virtualClock } from './virtualTime.js';

const KEYS = ['a', 'b', 'c', 'd', 'e'] as const;

type Op = { readonly add: (typeof KEYS)[number] } | { readonly yield: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ add: fc.constantFrom(...KEYS) }),
  fc.record({ yield: fc.integer({ min: 1, max: 6 }) }),
);

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

describe('workQueue: concurrent workers (Q-4), property', () => {
  it('never hands one item to two workers at once, and runs every item once more after its last add', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 10 }),
        async (ops, concurrency, workTurns) => {
          const q = workQueue<string>({ scheduler: virtualClock().scheduler });
          const inFlight = new Set<string>();
          const overlaps: string[] = [];
          // The add counter when each run of a key started, and the counter of each key's last add.
          let addCount = 0;
          const lastAdd = new Map<string, number>();
          const starts = new Map<string, number[]>();
          let call = 0;
          const done = lastValueFrom(
            q
              .process(
                async (key) => {
                  if (inFlight.has(key)) overlaps.push(key);
                  inFlight.add(key);
                  starts.set(key, [...(starts.get(key) ?? []), addCount]);
                  await turns(workTurns[call++ % workTurns.length] ?? 0);
                  inFlight.delete(key);
                },
                { concurrency },
              )
              .pipe(toArray()),
          );
          for (const o of ops) {
            if ('add' in o) {
              addCount++;
              lastAdd.set(o.add, addCount);
              q.add(o.add);
            } else {
              await turns(o.yield);
            }
          }
          await q.shutDownWithDrain();
          const outcomes = await done;

          expect(overlaps).toEqual([]);
          expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
          for (const [key, added] of lastAdd) {
            const runs = starts.get(key) ?? [];
            // Adds collapse: never more runs than adds, and one run began after the last add.
            expect(runs.length).toBeGreaterThan(0);
            expect(runs.length).toBeLessThanOrEqual(ops.filter((o) => 'add' in o && o.add === key).length);
            expect(Math.max(...runs)).toBeGreaterThanOrEqual(added);
          }
          expect([...starts.keys()].every((key) => lastAdd.has(key))).toBe(true);
          expect(q.len()).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
