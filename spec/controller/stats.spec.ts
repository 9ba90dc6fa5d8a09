/**
 * The controller's duration percentiles come from durations kept sorted as they are recorded: over any
 * sequence, longer than the window or not, they equal the nearest-rank percentiles of the last 512 sorted afresh.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ControllerStats, percentile } from '../../src/controller/stats.js';
import { QueueMetricsRecorder } from '../../src/workqueue/metrics.js';

describe('ControllerStats', () => {
  it('reports the percentiles of the last 512 durations, as sorting them would', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(50), fc.double({ min: 0, max: 1e6, noNaN: true })), { maxLength: 1_500 }), (durations) => {
        const stats = new ControllerStats();
        for (const ms of durations) stats.record('success', ms, false, undefined);
        const sorted = durations.slice(-512).sort((a, b) => a - b);
        const queue = new QueueMetricsRecorder<string>('q', () => 0).snapshot(0);
        const s = stats.snapshot({ state: 'running', queueDepth: 0, inFlight: 0, stuck: [], maxConcurrentReconciles: 1, queue, readYourWritesWaits: 0, readYourWritesTimeouts: 0 });
        expect([s.durationP50Ms, s.durationP99Ms]).toEqual([percentile(sorted, 0.5), percentile(sorted, 0.99)]);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the controller status$', () => {
  it('gives a listener that comes late the status of now, not the one held since nobody listened', async () => {
    const { controller } = await import('../../src/controller/controller.js');
    const { memorySource } = await import('./memorySource.js');
    const { firstValueFrom } = await import('rxjs');
    const source = memorySource<{ metadata: { name: string; namespace: string } }>('late-status');
    const c = controller({ for: source, reconcile: () => undefined });
    const outcomes: string[] = [];
    let bothDone: () => void = () => undefined;
    const both = new Promise<void>((resolve) => (bothDone = resolve));
    const sub = c.subscribe((o) => {
      outcomes.push(o.key);
      if (outcomes.length === 2) bothDone();
    });
    source.upsert({ metadata: { name: 'a', namespace: 'default' } });
    source.upsert({ metadata: { name: 'b', namespace: 'default' } });
    source.sync();
    await both;
    // Nobody listened to status$ while the two reconciles ran: a new listener still starts from the counts of now.
    const first = await firstValueFrom(c.status$);
    expect([first.state, first.reconciles, outcomes.sort()]).toEqual(['running', 2, ['default/a', 'default/b']]);
    sub.unsubscribe();
    await c.shutdown();
  });
});
