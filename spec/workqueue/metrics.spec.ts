import { describe, expect, it } from 'vitest';
import { workQueue, type WorkQueueMetrics } from '../../src/workqueue/index.js';
import { virtualClock } from './virtualTime.js';

const bucket = (m: WorkQueueMetrics['queueLatency'], le: number): number | undefined => m.buckets.find((b) => b.le === le)?.count;

describe('WorkQueue metrics (Q-8)', () => {
  it('counts adds and depth as client-go does: collapsed adds are not counted, a re-add while processing is', async () => {
    const { scheduler } = virtualClock();
    const q = workQueue<string>({ name: 'pods', scheduler });
    q.add('a');
    q.add('a');
    q.add('b');
    expect(q.metrics()).toMatchObject({ name: 'pods', adds: 2, depth: 2 });
    await q.get();
    expect(q.metrics().depth).toBe(1);
    q.add('a'); // being processed: counted in depth though not in len()
    expect(q.metrics()).toMatchObject({ adds: 3, depth: 2 });
    expect(q.len()).toBe(1);
  });

  it('measures queue latency from the first add to get, and work duration from get to done, on the queue clock', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.add('a');
    q.add('b');
    clock.advance(100);
    q.add('a'); // collapsed: latency still runs from the first add
    await q.get();
    clock.advance(50);
    q.done('a');
    await q.get();
    const m = q.metrics();
    expect(m.queueLatency.count).toBe(2);
    expect(m.queueLatency.sum).toBeCloseTo(0.1 + 0.15, 9);
    expect(bucket(m.queueLatency, 0.01)).toBe(0);
    expect(bucket(m.queueLatency, 0.1)).toBe(1);
    expect(bucket(m.queueLatency, 1)).toBe(2);
    expect(bucket(m.queueLatency, 1000)).toBe(2);
    expect(m.workDuration).toMatchObject({ count: 1, sum: 0.05 });
    expect(m.queueLatency.buckets.map((b) => b.le)).toEqual([1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000]);
  });

  it('reports unfinished work and the longest running item from the items being processed', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.add('a');
    q.add('b');
    await q.get();
    clock.advance(300);
    await q.get();
    clock.advance(200);
    expect(q.metrics().unfinishedWorkSeconds).toBeCloseTo(0.5 + 0.2, 9);
    expect(q.metrics().longestRunningProcessorSeconds).toBeCloseTo(0.5, 9);
    q.done('a');
    expect(q.metrics().longestRunningProcessorSeconds).toBeCloseTo(0.2, 9);
    q.done('b');
    expect(q.metrics()).toMatchObject({ unfinishedWorkSeconds: 0, longestRunningProcessorSeconds: 0 });
  });

  it('counts retries for every delayed or rate limited add', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('a', 10);
    q.addRateLimited('b');
    q.addRateLimited('b');
    expect(q.metrics().retries).toBe(3);
    expect(q.metrics().adds).toBe(0);
    clock.advance(10);
    expect(q.metrics().adds).toBe(2);
  });

  it('metrics$ emits a snapshot at once, every 500 ms, and a last one at shutdown, then completes and leaves no timer', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ name: 'q', scheduler: clock.scheduler });
    const seen: number[] = [];
    let completed = false;
    q.metrics$.subscribe({ next: (m) => seen.push(m.adds), complete: () => (completed = true) });
    expect(seen).toEqual([0]);
    q.add('a');
    clock.advance(499);
    expect(seen).toEqual([0]);
    clock.advance(1);
    expect(seen).toEqual([0, 1]);
    q.add('b');
    clock.advance(500);
    expect(seen).toEqual([0, 1, 2]);
    q.shutDown();
    expect(seen).toEqual([0, 1, 2, 2]);
    expect(completed).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('metrics$ after shutdown gives one snapshot and completes', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.shutDown();
    const seen: WorkQueueMetrics[] = [];
    let completed = false;
    q.metrics$.subscribe({ next: (m) => seen.push(m), complete: () => (completed = true) });
    expect(seen).toHaveLength(1);
    expect(completed).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('metrics$ runs no timer once unsubscribed', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    const sub = q.metrics$.subscribe();
    expect(clock.pendingTimers()).toBe(1);
    sub.unsubscribe();
    expect(clock.pendingTimers()).toBe(0);
  });
});
