import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/store/types.js';
import { itemExponentialFailureRateLimiter } from '../../src/workqueue/rateLimiters.js';
import { deferred } from '../helpers/waitFor.js';
import { runController, type Harness } from './harness.js';
import { memorySource, obj } from './memorySource.js';

const harnesses: Harness[] = [];
afterEach(() => {
  for (const h of harnesses.splice(0)) h.subscription.unsubscribe();
});
const track = (h: Harness): Harness => (harnesses.push(h), h);

describe('controller: one schedule per key (CR-10)', () => {
  it('an event supersedes the requeue an earlier reconcile asked for: reconciled at 0, 200 and 1200 ms, not at 1000', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const h = track(runController(primary, { reconcile: () => ({ requeueAfter: 1_000 }) }));
    await h.advance(200);
    primary.upsert(obj('a', { rv: '2' }));
    for (let t = 200; t < 3_000; t += 100) await h.advance(100);
    expect(h.timesOf('default/a')).toEqual([0, 200, 1_200, 2_200]);
  });

  it('an event during a reconcile supersedes the requeue that reconcile returns', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const first = deferred<{ requeueAfter: number }>();
    let calls = 0;
    const h = track(runController(primary, { reconcile: () => (++calls === 1 ? first.promise : undefined) }));
    await h.advance(100);
    primary.upsert(obj('a', { rv: '2' })); // during the first reconcile
    first.resolve({ requeueAfter: 1_000 }); // which asks to run again in 1000 ms
    await h.advance(0);
    expect(h.timesOf('default/a')).toEqual([0, 100]); // the event's run, at once
    for (let t = 100; t < 3_000; t += 100) await h.advance(100);
    expect(h.timesOf('default/a')).toEqual([0, 100]); // and nothing at 1100 ms
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('an event whose reconcile succeeds supersedes the backoff of an earlier failure', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    let calls = 0;
    const h = track(
      runController(primary, {
        rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 1_000 }),
        reconcile: () => {
          if (++calls === 1) throw new Error('first try fails');
        },
      }),
    );
    await h.advance(0);
    expect(h.outcomes[0]).toMatchObject({ type: 'failed', requeueAfter: 1_000 });
    await h.advance(200);
    primary.upsert(obj('a', { rv: '2' }));
    for (let t = 200; t < 5_000; t += 100) await h.advance(100);
    expect(h.timesOf('default/a')).toEqual([0, 200]);
    expect(h.outcomes.map((o) => o.type)).toEqual(['failed', 'reconciled']);
    expect(h.clock.pendingTimers()).toBe(0);
  });
});

describe('controller: live changes before backlog (CR-11)', () => {
  it('reconciles a change made after start-up before the keys of the initial list still waiting', async () => {
    const primary = memorySource<KubeObject>();
    for (let i = 0; i < 5; i++) primary.upsert(obj(`listed-${i}`));
    const gate = deferred();
    const h = track(runController(primary, { reconcile: (o) => (o.metadata?.name === 'listed-0' ? gate.promise : undefined) }));
    primary.sync();
    await h.advance(0);
    expect(h.calls.map((c) => c.key)).toEqual(['default/listed-0']); // busy with the first listed key
    primary.upsert(obj('listed-3', { rv: '2' })); // a live change of a listed object
    primary.upsert(obj('new')); // and a new object
    gate.resolve();
    await h.advance(0);
    expect(h.calls.map((c) => c.key)).toEqual(['default/listed-0', 'default/listed-3', 'default/new', 'default/listed-1', 'default/listed-2', 'default/listed-4']);
  });

  it('puts resyncs (an update to the same resourceVersion) behind live changes', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    for (const name of ['a', 'b', 'c']) primary.upsert(obj(name));
    const gate = deferred();
    const h = track(runController(primary, { reconcile: (o) => (o.metadata?.name === 'x' && o.metadata.resourceVersion === '1' ? gate.promise : undefined) }));
    await h.advance(0);
    primary.upsert(obj('x')); // its reconcile holds the worker
    await h.advance(0);
    h.calls.length = 0;
    primary.resync(); // a, b, c and x again, unchanged
    primary.upsert(obj('d')); // a live change, after the resync
    gate.resolve();
    await h.advance(0);
    expect(h.calls.map((c) => c.key)).toEqual(['default/d', 'default/a', 'default/b', 'default/c', 'default/x']);
  });

  it('puts the resyncPeriod requeue behind live changes', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    for (const name of ['a', 'b', 'c']) primary.upsert(obj(name));
    const gate = deferred();
    const h = track(
      runController(primary, { resyncPeriod: 10_000, reconcile: (o) => (o.metadata?.name === 'x' ? gate.promise : undefined) }),
    );
    await h.advance(9_000);
    primary.upsert(obj('x')); // reconciled at 9 s, and still running at 10 s
    await h.advance(1_000); // a, b and c are due again
    primary.upsert(obj('d'));
    gate.resolve();
    await h.advance(0);
    expect(h.calls.map((c) => [c.key, c.at])).toEqual([
      ['default/a', 0],
      ['default/b', 0],
      ['default/c', 0],
      ['default/x', 9_000],
      ['default/d', 10_000],
      ['default/a', 10_000],
      ['default/b', 10_000],
      ['default/c', 10_000],
    ]);
  });

  it('with priorityQueue: false hands keys out first in, first out, whatever their origin', async () => {
    const primary = memorySource<KubeObject>();
    for (let i = 0; i < 3; i++) primary.upsert(obj(`listed-${i}`));
    const gate = deferred();
    const h = track(runController(primary, { priorityQueue: false, reconcile: (o) => (o.metadata?.name === 'listed-0' ? gate.promise : undefined) }));
    primary.sync();
    await h.advance(0);
    primary.upsert(obj('new'));
    gate.resolve();
    await h.advance(0);
    expect(h.calls.map((c) => c.key)).toEqual(['default/listed-0', 'default/listed-1', 'default/listed-2', 'default/new']);
  });

  it('keeps a backlog key at the low priority when it asks for a requeue or backs off', async () => {
    const primary = memorySource<KubeObject>();
    primary.upsert(obj('listed-0'));
    primary.upsert(obj('listed-1'));
    const gates = [deferred(), deferred()];
    let call = 0;
    const h = track(
      runController(primary, {
        errorPolicy: () => ({ requeueAfter: 0 }),
        reconcile: async (o) => {
          const n = call++;
          if (n < 2) await gates[n]?.promise;
          if (o.metadata?.name === 'listed-0' && n === 0) throw new Error('retry at once, at the priority it had');
          return undefined;
        },
      }),
    );
    primary.sync();
    await h.advance(0);
    primary.upsert(obj('live')); // default priority, behind nothing
    gates[0]?.resolve(); // listed-0 fails: requeued at once, at the low priority
    await h.advance(0);
    gates[1]?.resolve();
    await h.advance(0);
    expect(h.calls.map((c) => c.key)).toEqual(['default/listed-0', 'default/live', 'default/listed-1', 'default/listed-0']);
  });
});
