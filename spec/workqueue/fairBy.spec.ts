import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { LOW_PRIORITY, workQueue } from '../../src/workqueue/index.js';
import { drainNow, virtualClock } from './virtualTime.js';

/** The group of `'group:name'` items. */
const byPrefix = (item: string): string => item.slice(0, item.indexOf(':'));

describe('workQueue: fairBy serves groups in turn (LT-1, LT-2)', () => {
  it('a group served goes to the back of the line: groups alternate whatever order their items came in', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler, fairBy: byPrefix });
    // The big group queued three before the small one added anything: turns still alternate.
    for (const item of ['big:1', 'big:2', 'big:3', 'small:1', 'small:2']) q.add(item);
    expect(await drainNow(q)).toEqual(['big:1', 'small:1', 'big:2', 'small:2', 'big:3']);
  });

  it('without fairBy, items go in arrival order (the check above can fail)', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    for (const item of ['big:1', 'big:2', 'big:3', 'small:1', 'small:2']) q.add(item);
    expect(await drainNow(q)).toEqual(['big:1', 'big:2', 'big:3', 'small:1', 'small:2']);
  });

  it('fairness before priority: each group gives its highest priority item in its turn, so a live change of one group does not wait behind another group\'s backlog for long, nor starve it', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler, fairBy: byPrefix });
    q.add('a:old-1', { priority: LOW_PRIORITY });
    q.add('a:old-2', { priority: LOW_PRIORITY });
    q.add('b:old-1', { priority: LOW_PRIORITY });
    q.add('a:live-1');
    q.add('a:live-2');
    q.add('b:live-1');
    expect(await drainNow(q)).toEqual(['a:live-1', 'b:live-1', 'a:live-2', 'b:old-1', 'a:old-1', 'a:old-2']);
  });

  it('keeps one item in flight at a time and collapses re-adds: an item re-added while taken waits for done(), in its group', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler, fairBy: byPrefix });
    q.add('a:1');
    q.add('b:1');
    const first = await q.get();
    expect(first).toEqual({ shutdown: false, item: 'a:1', priority: 0 });
    q.add('a:1');
    q.add('a:1');
    expect(q.len()).toBe(1);
    const second = await q.get();
    expect(second.shutdown === false && second.item).toBe('b:1');
    let third: string | undefined;
    void q.get().then((r) => (third = r.shutdown ? 'shutdown' : r.item));
    await Promise.resolve();
    expect(third).toBeUndefined();
    q.done('a:1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBe('a:1');
  });

  it('a delayed add joins its group when it is due', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler, fairBy: byPrefix });
    q.addAfter('b:later', 100);
    q.add('a:1');
    q.add('a:2');
    expect(q.metrics().depthByGroup).toEqual({ a: 2 });
    clock.advance(100);
    expect(q.metrics().depthByGroup).toEqual({ a: 2, b: 1 });
    expect(await drainNow(q)).toEqual(['a:1', 'b:later', 'a:2']);
    expect(q.metrics().depthByGroup).toEqual({});
  });

  it('counts an item re-added while processed in its group, so the groups sum to depth (LT-2)', async () => {
    let asked = 0;
    const q = workQueue<string>({ scheduler: virtualClock().scheduler, fairBy: (item) => (asked++, byPrefix(item)) });
    q.add('a:1');
    q.add('b:1');
    expect((await q.get()).item).toBe('a:1');
    q.add('a:1');
    const m = q.metrics();
    expect(m.depth).toBe(2);
    expect(m.depthByGroup).toEqual({ a: 1, b: 1 });
    expect(Object.values(m.depthByGroup ?? {}).reduce((sum, n) => sum + n, 0)).toBe(m.depth);
    q.done('a:1');
    // Asked once per wait: the re-added item keeps the group it was given.
    expect(asked).toBe(3);
    expect(q.metrics().depthByGroup).toEqual({ a: 1, b: 1 });
    expect(await drainNow(q)).toEqual(['b:1', 'a:1']);
    expect(q.metrics().depthByGroup).toEqual({});
  });

  it('reports a fairBy that throws, and files the item in the group \'\' rather than losing it', async () => {
    const errors: Error[] = [];
    const q = workQueue<string>({
      scheduler: virtualClock().scheduler,
      onError: (err) => errors.push(err),
      fairBy: (item) => {
        if (item === 'bad') throw new Error('no group');
        return byPrefix(item);
      },
    });
    q.add('bad');
    q.add('a:1');
    expect(errors.map((e) => e.message)).toEqual(["workQueue: fairBy failed for \"bad\"; it waits in the group '': no group"]);
    expect(q.metrics().depthByGroup).toEqual({ '': 1, a: 1 });
    expect(await drainNow(q)).toEqual(['bad', 'a:1']);
  });

  it('refuses a fairBy that is not a function, and does not compile one that reads another item type or gives no string', () => {
    expect(() => workQueue<string>({ fairBy: 'cluster' as never })).toThrow(/fairBy.*"cluster"/);
    // Never called: these lines are here for the compiler only.
    const mistakes = (): void => {
      // @ts-expect-error the items are numbers
      workQueue<number>({ fairBy: (item: string) => item });
      // @ts-expect-error a group is named by a string
      workQueue<string>({ fairBy: (item: string) => item.length });
    };
    expectTypeOf(mistakes).toBeFunction();
  });

  it('property: with a backlog of 100 in one group and 3 in another, the small group is served within its first rounds, whatever the arrival order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray([...Array.from({ length: 100 }, (_, i) => `big:${i}`), 'small:0', 'small:1', 'small:2'], { minLength: 103, maxLength: 103 }),
        fc.integer({ min: 1, max: 4 }),
        async (arrivals, workers) => {
          const q = workQueue<string>({ scheduler: virtualClock().scheduler, fairBy: byPrefix });
          for (const item of arrivals) q.add(item);
          // Workers take in rounds: `workers` items at once, then all done.
          const taken: string[] = [];
          while (q.len() > 0) {
            const round: string[] = [];
            for (let i = 0; i < workers && q.len() > 0; i++) {
              const got = await q.get();
              if (!got.shutdown) round.push(got.item);
            }
            taken.push(...round);
            for (const item of round) q.done(item);
          }
          expect(taken).toHaveLength(103);
          expect(new Set(taken).size).toBe(103);
          const last = Math.max(...taken.map((item, i) => (item.startsWith('small:') ? i : -1)));
          // Turns alternate while both wait: the small group's third item is at most the sixth taken.
          expect(last).toBeLessThanOrEqual(5);
          // And each group keeps its own arrival order.
          const bigOrder = taken.filter((item) => item.startsWith('big:'));
          expect(bigOrder).toEqual(arrivals.filter((item) => item.startsWith('big:')));
        },
      ),
      { numRuns: 50 },
    );
  });
});
