import { afterEach, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { controller } from '../../src/controller/controller.js';
import type { KubeObject } from '../../src/store/types.js';
import { settle, virtualClock } from '../workqueue/virtualTime.js';
import { memorySource, obj } from './memorySource.js';

const subscriptions: Subscription[] = [];
afterEach(() => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
});

describe('controller: the metrics in status()', () => {
  it('counts reconciles by controller-runtime result, times them in its buckets, and shows the queue under the controller name', async () => {
    const clock = virtualClock();
    const primary = memorySource<KubeObject>('things');
    for (const name of ['ok', 'again', 'later', 'bad']) primary.upsert(obj(name));
    let againRuns = 0;
    const ctl = controller<KubeObject>({
      for: primary,
      name: 'things',
      concurrency: 1,
      scheduler: clock.scheduler,
      errorPolicy: () => undefined,
      reconcile: (o) => {
        clock.advance(200); // each reconcile takes 200 ms of virtual time
        const name = o.metadata?.name;
        if (name === 'again') return againRuns++ === 0 ? { requeueAfter: 0 } : undefined;
        if (name === 'later') return { requeueAfter: 60_000 };
        if (name === 'bad') throw new Error('no');
        return undefined;
      },
    });
    expect(ctl.name).toBe('things');
    expect(ctl.status()).toMatchObject({ errors: 0, inFlight: 0, maxConcurrentReconciles: 1 });
    expect(controller<KubeObject>({ for: primary, reconcile: () => undefined, concurrency: 3 }).status().maxConcurrentReconciles).toBe(3);
    subscriptions.push(ctl.subscribe({ next: () => {}, error: () => {} }));
    primary.sync();
    await settle(50);
    const m = ctl.status();
    expect(m.succeeded).toEqual({ success: 2, requeue: 1, requeue_after: 1 });
    expect([m.errors, m.reconciles]).toEqual([1, 5]);
    expect(m.terminalErrors).toBe(0);
    expect(m.durationHistogram.count).toBe(5);
    expect(m.durationHistogram.sum).toBeCloseTo(1.0, 6);
    // 0.2 s falls in the 0.2 bucket, not below it.
    expect(m.durationHistogram.buckets.find((b) => b.le === 0.15)?.count).toBe(0);
    expect(m.durationHistogram.buckets.find((b) => b.le === 0.2)?.count).toBe(5);
    expect(m.queue.name).toBe('things');
    expect(m.queue.adds).toBeGreaterThanOrEqual(5);
    expect(m.queue.workDuration.count).toBe(5);
  });
});
