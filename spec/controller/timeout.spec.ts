import { afterEach, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { controller } from '../../src/controller/controller.js';
import type { ReconcileOutcome } from '../../src/controller/types.js';
import type { KubeObject } from '../../src/store/types.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { mostAbortListenersAfter } from '../helpers/abortListeners.js';
import { settle, virtualClock } from '../workqueue/virtualTime.js';
import { memorySource, obj } from './memorySource.js';

const subscriptions: Subscription[] = [];
afterEach(() => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
});

describe('controller: reconcileTimeoutMs and stuck workers', () => {
  it('aborts the signal of a reconcile that outlives the timeout; one that settles then fails with the timeout named', async () => {
    const clock = virtualClock();
    const primary = memorySource<KubeObject>('things');
    primary.upsert(obj('slow'));
    const seen: AbortSignal[] = [];
    const ctl = controller<KubeObject>({
      for: primary,
      scheduler: clock.scheduler,
      reconcileTimeoutMs: 1_000,
      errorPolicy: () => undefined,
      reconcile: (_o, ctx) => {
        seen.push(ctx.signal);
        // A well-behaved reconcile: it gives up when its signal aborts.
        return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)));
      },
    });
    const outcomes: ReconcileOutcome<KubeObject>[] = [];
    subscriptions.push(ctl.subscribe((o) => outcomes.push(o)));
    primary.sync();
    await settle(50);
    expect(seen).toHaveLength(1);
    clock.advance(999);
    await settle(50);
    expect(seen[0]?.aborted).toBe(false);
    clock.advance(1);
    await settle(50);
    expect(seen[0]?.aborted).toBe(true);
    expect(outcomes.map((o) => o.type)).toEqual(['failed']);
    const failed = outcomes[0];
    expect(failed?.type === 'failed' && failed.error.message).toMatch(/the reconcile of default\/slow ran longer than 1000 ms \(reconcileTimeoutMs\)/);
    // It settled: nothing is stuck.
    expect(ctl.status().stuck).toEqual([]);
  });

  it('lists a reconcile that ignores its aborted signal in status().stuck until it settles, and emits the change', async () => {
    const clock = virtualClock();
    const primary = memorySource<KubeObject>('things');
    primary.upsert(obj('hung'));
    primary.upsert(obj('fine'));
    const hung = deferred();
    const ctl = controller<KubeObject>({
      for: primary,
      scheduler: clock.scheduler,
      concurrency: 2,
      reconcileTimeoutMs: 500,
      reconcile: (o) => (o.metadata?.name === 'hung' ? hung.promise.then(() => undefined) : undefined),
    });
    const stuckSeen: (readonly string[])[] = [];
    subscriptions.push(ctl.status$.subscribe((s) => stuckSeen.push(s.stuck)));
    subscriptions.push(ctl.subscribe());
    primary.sync();
    await settle(50);
    expect(ctl.status().stuck).toEqual([]);
    clock.advance(500);
    await settle(50);
    expect(ctl.status().stuck).toEqual(['default/hung']);
    expect(stuckSeen.some((s) => s.includes('default/hung'))).toBe(true);
    hung.resolve();
    await settle(50);
    expect(ctl.status().stuck).toEqual([]);
    expect(stuckSeen.at(-1)).toEqual([]);
  });

  it('has no timeout by default: a long reconcile is never listed as stuck', async () => {
    const clock = virtualClock();
    const primary = memorySource<KubeObject>('things');
    primary.upsert(obj('long'));
    const long = deferred();
    let signal: AbortSignal | undefined;
    const ctl = controller<KubeObject>({
      for: primary,
      scheduler: clock.scheduler,
      reconcile: async (_o, ctx) => {
        signal = ctx.signal;
        await long.promise;
      },
    });
    subscriptions.push(ctl.subscribe());
    primary.sync();
    await settle(50);
    clock.advance(24 * 3600_000);
    await settle(50);
    expect(signal?.aborted).toBe(false);
    expect(ctl.status().stuck).toEqual([]);
    long.resolve();
  });

  it('lets go of the run\'s signal as each timed reconcile ends: its listeners do not pile up', async () => {
    // Each timed reconcile follows the run's signal, which outlives them all.
    const primary = memorySource<KubeObject>('things');
    for (let i = 0; i < 20; i++) primary.upsert(obj(`o${i}`));
    const most = await mostAbortListenersAfter(async () => {
      const ctl = controller<KubeObject>({ for: primary, reconcileTimeoutMs: 60_000, reconcile: () => undefined });
      const outcomes: ReconcileOutcome<KubeObject>[] = [];
      subscriptions.push(ctl.subscribe((o) => outcomes.push(o)));
      primary.sync();
      await waitFor(() => outcomes.length === 20, '20 reconciles');
    });
    expect(most).toBeLessThan(5);
  });

  it('rejects a negative or non-numeric reconcileTimeoutMs, naming it', () => {
    const primary = memorySource<KubeObject>();
    expect(() => controller<KubeObject>({ for: primary, reconcile: () => undefined, reconcileTimeoutMs: -1 })).toThrow(
      /option "reconcileTimeoutMs" must be .*-1/,
    );
    expect(() => controller<KubeObject>({ for: primary, reconcile: () => undefined, reconcileTimeoutMs: '5s' as never })).toThrow(/reconcileTimeoutMs/);
  });
});

describe('controller: sources', () => {
  it('lists every informer it reads, for first, then owns and watches in order', () => {
    const primary = memorySource<KubeObject>('primary');
    const owned = memorySource<KubeObject>('owned');
    const watched = memorySource<KubeObject>('watched');
    const ctl = controller<KubeObject>({
      for: primary,
      owns: [{ source: owned }],
      watches: [{ source: watched, map: () => undefined }],
      reconcile: () => undefined,
    });
    expect(ctl.sources).toEqual([primary, owned, watched]);
  });
});
