import { describe, expect, it } from 'vitest';
import { FairShare } from '../../src/multicluster/fairShare.js';

const never = new AbortController().signal;

/** Lets every promise callback queued so far run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('FairShare', () => {
  it('grants at once while slots are free, then in turns: a cluster served goes to the back of the line', async () => {
    const slots = new FairShare(1);
    const first = await slots.acquire('big', never);
    const granted: string[] = [];
    const releases: (() => void)[] = [];
    // The big cluster queued three before the small one asked: turns still alternate.
    for (const c of ['big', 'big', 'big', 'small', 'small']) {
      void slots.acquire(c, never).then((release) => {
        granted.push(c);
        releases.push(release);
      });
    }
    expect([slots.waiting('big'), slots.waiting('small')]).toEqual([3, 2]);
    first();
    for (let i = 0; i < 5; i++) {
      await settle();
      expect(granted).toHaveLength(i + 1);
      expect(slots.active('big') + slots.active('small')).toBe(1);
      releases[i]?.();
    }
    expect(granted).toEqual(['big', 'small', 'big', 'small', 'big']);
  });

  it('never grants more than its slots, and counts what each cluster holds and waits for', async () => {
    const slots = new FairShare(2);
    const a1 = await slots.acquire('a', never);
    await slots.acquire('b', never);
    let third = false;
    void slots.acquire('a', never).then(() => (third = true));
    await Promise.resolve();
    expect(third).toBe(false);
    expect([slots.active('a'), slots.active('b'), slots.waiting('a')]).toEqual([1, 1, 1]);
    a1();
    a1(); // a second release is ignored
    await Promise.resolve();
    expect(third).toBe(true);
    expect([slots.active('a'), slots.waiting('a')]).toEqual([1, 0]);
  });

  it('a waiter whose signal aborts, or whose cluster is refused, gives up without taking a slot', async () => {
    const slots = new FairShare(1);
    const held = await slots.acquire('a', never);
    const abort = new AbortController();
    const gaveUp = slots.acquire('b', abort.signal);
    const refused = slots.acquire('c', never);
    abort.abort(new Error('cluster left'));
    await expect(gaveUp).rejects.toThrow('cluster left');
    slots.refuse('c', new Error('stopping'));
    await expect(refused).rejects.toThrow('stopping');
    let next = false;
    void slots.acquire('d', never).then(() => (next = true));
    held();
    await Promise.resolve();
    expect(next).toBe(true);
  });
});
