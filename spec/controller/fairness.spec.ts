import { describe, expect, it } from 'vitest';
import { controller } from '../../src/controller/controller.js';
import type { KubeObject } from '../../src/store/types.js';
import { waitFor } from '../helpers/waitFor.js';
import { memorySource, obj } from './memorySource.js';

// Real timers: the flood ends on its own after this long, so a controller that starves the event
// loop fails the assertions below instead of hanging the test run.
const FLOOD_GUARD_MS = 5_000;

describe('controller: a reconcile flood never starves the event loop (CR-12)', () => {
  it('keeps timers and informer events flowing while a reconcile returns { requeueAfter: 0 } every time, and shuts down promptly', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('busy'));
    const started = Date.now();
    let floodRuns = 0;
    let floodEnded = false;
    const reconciledAt = new Map<string, number>();
    const ctl = controller<KubeObject>({
      for: primary,
      concurrency: 2,
      reconcile: (o) => {
        const name = o.metadata?.name ?? '';
        if (name !== 'busy') {
          reconciledAt.set(name, floodRuns);
          return undefined;
        }
        floodRuns++;
        if (Date.now() - started < FLOOD_GUARD_MS) return { requeueAfter: 0 };
        floodEnded = true;
        return undefined;
      },
    });
    const sub = ctl.subscribe(() => {});
    await waitFor(() => floodRuns > 1_000, 'the flood to start');

    // A timer set during the flood fires during the flood, and the event it delivers is reconciled during it too.
    const timer = await new Promise<{ floodEnded: boolean }>((resolve) => {
      setTimeout(() => {
        primary.upsert(obj('live'));
        resolve({ floodEnded });
      }, 10);
    });
    // What matters is that it ran before the flood ended: a starved loop would fire it only once the guard ended the flood.
    expect(timer.floodEnded).toBe(false);
    await waitFor(() => reconciledAt.has('live'), 'the live object to be reconciled');
    const runsAtLive = reconciledAt.get('live') as number;
    await waitFor(() => floodRuns > runsAtLive + 1_000, 'the flood to go on after the live event');
    expect(floodEnded).toBe(false);

    const runsAtStop = floodRuns;
    await ctl.shutdown();
    // The shutdown ended the flood, not the guard: the busy object went round at most once more.
    expect(floodEnded).toBe(false);
    expect(floodRuns - runsAtStop).toBeLessThanOrEqual(1);
    expect(ctl.status().state).toBe('stopped');
    sub.unsubscribe();
  });
});
