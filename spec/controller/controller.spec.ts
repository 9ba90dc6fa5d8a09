import { afterEach, describe, expect, it } from 'vitest';
import { lastValueFrom, type Subscription } from 'rxjs';
import { controller, type Controller } from '../../src/controller/controller.js';
import type { ControllerOptions, ReconcileOutcome } from '../../src/controller/types.js';
import { CallbackError } from '../../src/errors/CallbackError.js';
import type { KubeObject } from '../../src/store/types.js';
import { itemExponentialFailureRateLimiter } from '../../src/workqueue/rateLimiters.js';
import { deferred } from '../helpers/waitFor.js';
import { settle, virtualClock, type VirtualClock } from '../workqueue/virtualTime.js';
import { memorySource, obj, type MemorySource } from './memorySource.js';

let clock: VirtualClock;
const subscriptions: Subscription[] = [];

afterEach(() => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
});

interface Harness {
  readonly ctl: Controller<KubeObject>;
  readonly outcomes: ReconcileOutcome<KubeObject>[];
  readonly errors: Error[];
  readonly calls: string[];
}

function run(primary: MemorySource<KubeObject>, opts: Partial<ControllerOptions<KubeObject>>): Harness {
  clock = virtualClock();
  const calls: string[] = [];
  const errors: Error[] = [];
  const userReconcile = opts.reconcile;
  const ctl = controller<KubeObject>({
    for: primary,
    scheduler: clock.scheduler,
    onError: (err) => errors.push(err),
    ...opts,
    reconcile: (o, ctx) => {
      calls.push(ctx.key);
      return userReconcile?.(o, ctx);
    },
  });
  const outcomes: ReconcileOutcome<KubeObject>[] = [];
  // A source failing for good ends the outcomes with its error; specs that expect it check it on their own subscription.
  subscriptions.push(ctl.subscribe({ next: (o) => outcomes.push(o), error: () => {} }));
  return { ctl, outcomes, errors, calls };
}

/** Lets worker loops and promise callbacks run, then moves virtual time. */
async function advance(ms: number): Promise<void> {
  await settle(50);
  clock.advance(ms);
  await settle(50);
}

describe('controller: keys and sync', () => {
  it('starts reconciling only once every source synced, then reconciles each primary key once', async () => {
    const primary = memorySource<KubeObject>('things');
    const owned = memorySource<KubeObject>('children');
    primary.upsert(obj('a'));
    primary.upsert(obj('b'));
    const h = run(primary, { owns: [{ source: owned, kind: 'Thing' }] });
    await advance(0);
    expect(primary.subscribers).toBe(1);
    expect(owned.subscribers).toBe(1);
    primary.sync();
    await advance(0);
    expect(h.calls).toEqual([]); // the owned source has not synced
    expect(h.ctl.status().state).toBe('waitingForSync');
    expect(h.ctl.status().queueDepth).toBe(2);
    owned.sync();
    await advance(0);
    expect(h.calls).toEqual(['default/a', 'default/b']);
    expect(h.outcomes.map((o) => [o.type, o.key])).toEqual([
      ['reconciled', 'default/a'],
      ['reconciled', 'default/b'],
    ]);
    expect(h.ctl.status()).toMatchObject({ state: 'running', reconciles: 2, errors: 0, inFlight: 0, queueDepth: 0 });
  });

  it('maps owned objects to their controlling owner and watched objects through the mapper', async () => {
    const primary = memorySource<KubeObject>();
    const owned = memorySource<KubeObject>();
    const watched = memorySource<KubeObject>();
    for (const s of [primary, owned, watched]) s.sync();
    primary.upsert(obj('web'));
    primary.upsert(obj('api'));
    const h = run(primary, {
      owns: [{ source: owned, kind: 'Thing' }],
      watches: [{ source: watched, map: (o: KubeObject) => (o.metadata?.labels?.['for'] === undefined ? undefined : [`default/${o.metadata.labels['for']}`]) }],
    });
    await advance(0);
    h.calls.length = 0;
    owned.upsert(obj('web-info', { owner: { kind: 'Thing', name: 'web' } }));
    owned.upsert(obj('stray', { owner: { kind: 'Other', name: 'api' } })); // another owner kind: ignored
    await advance(0);
    expect(h.calls).toEqual(['default/web']);
    watched.upsert(obj('cfg', { labels: { for: 'api' } }));
    await advance(0);
    expect(h.calls).toEqual(['default/web', 'default/api']);
    owned.remove('default/web-info', true); // a tombstone still names its owner
    await advance(0);
    expect(h.calls).toEqual(['default/web', 'default/api', 'default/web']);
  });

  it('reports a mapper that throws and keeps serving the other keys', async () => {
    const primary = memorySource<KubeObject>();
    const watched = memorySource<KubeObject>();
    primary.sync();
    watched.sync();
    primary.upsert(obj('a'));
    const h = run(primary, {
      watches: [
        {
          source: watched,
          map: (o: KubeObject) => {
            if (o.metadata?.name === 'bad') throw new Error('cannot map');
            return 'default/a';
          },
        },
      ],
    });
    await advance(0);
    watched.upsert(obj('bad'));
    watched.upsert(obj('good'));
    await advance(0);
    expect(h.errors).toHaveLength(1);
    expect(h.errors[0]).toBeInstanceOf(CallbackError);
    expect(h.errors[0]?.message).toMatch(/watches mapper.*cannot map/);
    expect(h.calls).toEqual(['default/a', 'default/a']);
  });

  it('does not reconcile a key whose object is gone, and says so', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const gate = deferred();
    const h = run(primary, { reconcile: () => gate.promise });
    await advance(0);
    primary.upsert(obj('a', { rv: '2' })); // queued behind the running reconcile
    primary.remove('default/a');
    gate.resolve();
    await advance(0);
    expect(h.calls).toEqual(['default/a']);
    expect(h.outcomes.map((o) => o.type)).toEqual(['reconciled', 'gone']);
    expect(h.ctl.status().gone).toBe(1);
  });
});

describe('controller: one reconcile in flight per key', () => {
  it('collapses every change during a reconcile into one more run after it, and runs other keys beside it', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    primary.upsert(obj('b'));
    const running = new Map<string, number>();
    let maxPerKey = 0;
    let maxTotal = 0;
    const gates = new Map<string, { promise: Promise<void>; resolve: () => void }>();
    const h = run(primary, {
      concurrency: 3,
      reconcile: async (_o, ctx) => {
        running.set(ctx.key, (running.get(ctx.key) ?? 0) + 1);
        maxPerKey = Math.max(maxPerKey, ...running.values());
        maxTotal = Math.max(maxTotal, [...running.values()].reduce((a, b) => a + b, 0));
        const gate = deferred<void>();
        gates.set(ctx.key, { promise: gate.promise, resolve: () => gate.resolve() });
        await gate.promise;
        running.set(ctx.key, (running.get(ctx.key) ?? 1) - 1);
      },
    });
    await advance(0);
    expect(h.calls).toEqual(['default/a', 'default/b']);
    expect(h.ctl.status().inFlight).toBe(2);
    for (let i = 2; i < 6; i++) primary.upsert(obj('a', { rv: String(i) }));
    await advance(0);
    expect(h.calls).toEqual(['default/a', 'default/b']); // a waits for its own run to finish
    gates.get('default/a')?.resolve();
    await advance(0);
    expect(h.calls).toEqual(['default/a', 'default/b', 'default/a']);
    gates.get('default/a')?.resolve();
    gates.get('default/b')?.resolve();
    await advance(0);
    expect(h.calls).toHaveLength(3);
    expect(maxPerKey).toBe(1);
    expect(maxTotal).toBe(2);
  });
});

describe('controller: requeues', () => {
  it('runs a key again after the requeueAfter its reconcile asked for, and not before', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const h = run(primary, { reconcile: () => ({ requeueAfter: 1_000 }) });
    await advance(0);
    expect(h.outcomes[0]).toMatchObject({ type: 'reconciled', key: 'default/a', requeueAfter: 1_000 });
    await advance(999);
    expect(h.calls).toHaveLength(1);
    await advance(1);
    expect(h.calls).toHaveLength(2);
    expect(h.ctl.status().requeues).toBe(2);
  });

  it('backs off a failing key exponentially through the rate limiter, and a success forgets its failures', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    let failuresLeft = 3;
    const retriesSeen: number[] = [];
    const h = run(primary, {
      rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 100, maxDelayMs: 10_000 }),
      reconcile: (_o, ctx) => {
        retriesSeen.push(ctx.retries);
        if (failuresLeft-- > 0) throw new Error('not yet');
      },
    });
    await advance(0);
    const times: number[] = [clock.scheduler.now()];
    for (const wait of [100, 200, 400]) {
      await advance(wait - 1);
      expect(h.calls).toHaveLength(times.length);
      await advance(1);
      times.push(clock.scheduler.now());
      expect(h.calls).toHaveLength(times.length);
    }
    expect(h.outcomes.map((o) => (o.type === 'failed' ? [o.requeueAfter, o.retries] : o.type))).toEqual([[100, 1], [200, 2], [400, 3], 'reconciled']);
    expect(retriesSeen).toEqual([0, 1, 2, 3]);
    primary.upsert(obj('a', { rv: '9' }));
    await advance(0);
    expect(retriesSeen.at(-1)).toBe(0);
    expect(h.ctl.status()).toMatchObject({ errors: 3, reconciles: 5 });
    expect(h.ctl.status().lastError?.message).toBe('not yet');
  });

  it('follows a custom error policy: a fixed delay, or dropping the key until it changes', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('fixed'));
    primary.upsert(obj('drop'));
    const h = run(primary, {
      reconcile: () => {
        throw new Error('boom');
      },
      errorPolicy: (_err, o) => (o.metadata?.name === 'fixed' ? { requeueAfter: 50 } : undefined),
    });
    await advance(0);
    expect(h.calls).toEqual(['default/fixed', 'default/drop']);
    await advance(50);
    await advance(1_000);
    expect(h.calls.filter((k) => k === 'default/drop')).toHaveLength(1);
    expect(h.calls.filter((k) => k === 'default/fixed').length).toBeGreaterThanOrEqual(3);
  });

  it('treats an invalid action as a failure naming what was returned', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const h = run(primary, { reconcile: () => ({ requeueAfter: -5 }), errorPolicy: () => undefined });
    await advance(0);
    const first = h.outcomes[0];
    expect(first?.type).toBe('failed');
    expect(first?.type === 'failed' && first.error).toBeInstanceOf(TypeError);
    expect(first?.type === 'failed' && first.error.message).toMatch(/reconcile must return .*requeueAfter.*-5/);
  });

  it('reconciles every object again each resyncPeriod', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const h = run(primary, { resyncPeriod: 10_000 });
    await advance(0);
    await advance(10_000);
    await advance(10_000);
    expect(h.calls).toEqual(['default/a', 'default/a', 'default/a']);
  });

  it('measures reconcile durations on its clock for the status percentiles', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    for (let i = 1; i <= 4; i++) primary.upsert(obj(`k${i}`));
    const h = run(primary, {
      reconcile: (o) =>
        new Promise<void>((resolve) => {
          clock.scheduler.schedule(() => resolve(), Number(o.metadata?.name?.slice(1)) * 10);
        }),
    });
    for (let i = 0; i < 12; i++) await advance(10);
    expect(h.outcomes.map((o) => (o.type === 'reconciled' ? o.durationMs : -1))).toEqual([10, 20, 30, 40]);
    expect(h.ctl.status()).toMatchObject({ durationP50Ms: 20, durationP99Ms: 40 });
  });
});

describe('controller: shutdown', () => {
  it('on shutdown() finishes the reconcile in flight, takes no new keys, then lets go of the sources and completes', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    primary.upsert(obj('b'));
    const gate = deferred();
    const h = run(primary, { reconcile: () => gate.promise });
    const completed = lastValueFrom(h.ctl, { defaultValue: undefined });
    await advance(0);
    expect(h.calls).toEqual(['default/a']);
    const done = h.ctl.shutdown();
    await advance(0);
    expect(h.ctl.status().state).toBe('draining');
    expect(primary.subscribers).toBe(1); // still held while a reconcile runs
    gate.resolve();
    await done;
    await completed;
    expect(h.calls).toEqual(['default/a']); // b was never started
    expect(h.outcomes.map((o) => o.key)).toEqual(['default/a']);
    expect(primary.subscribers).toBe(0);
    expect(h.ctl.status().state).toBe('stopped');
  });

  it('gives up on a reconcile that outlives shutdownTimeoutMs: aborts its signal, reports it and stops', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('stuck'));
    let aborted: unknown;
    const h = run(primary, {
      shutdownTimeoutMs: 5_000,
      reconcile: (_o, ctx) =>
        new Promise<void>((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            aborted = ctx.signal.reason;
            resolve();
          });
        }),
    });
    await advance(0);
    let finished = false;
    void h.ctl.shutdown().then(() => (finished = true));
    await advance(4_999);
    expect(finished).toBe(false);
    expect(primary.subscribers).toBe(1);
    await advance(1);
    expect(finished).toBe(true);
    expect(primary.subscribers).toBe(0);
    expect(h.errors).toHaveLength(1);
    expect(h.errors[0]?.message).toMatch(/1 reconcile\(s\) still running 5000 ms after shutdown began \(default\/stuck\)/);
    expect(aborted).toBe(h.errors[0]);
  });

  it('stops for good when the signal aborts', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const stop = new AbortController();
    const h = run(primary, { signal: stop.signal });
    let completed = false;
    subscriptions.push(h.ctl.subscribe({ complete: () => (completed = true) }));
    await advance(0);
    stop.abort();
    await advance(0);
    expect(completed).toBe(true);
    expect(primary.subscribers).toBe(0);
    let lateCompleted = false;
    h.ctl.subscribe({ complete: () => (lateCompleted = true) });
    expect(lateCompleted).toBe(true);
    primary.upsert(obj('a', { rv: '2' }));
    await advance(0);
    expect(h.calls).toEqual(['default/a']);
  });

  it('when the last subscriber leaves, drains in the background and can run again, never two runs on one key', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const gate = deferred();
    let concurrent = 0;
    let maxConcurrent = 0;
    const h = run(primary, {
      reconcile: async () => {
        maxConcurrent = Math.max(maxConcurrent, ++concurrent);
        await gate.promise;
        concurrent--;
      },
    });
    await advance(0);
    subscriptions.splice(0).forEach((s) => s.unsubscribe());
    await advance(0);
    expect(h.ctl.status().state).toBe('draining');
    expect(primary.subscribers).toBe(1);
    const again: ReconcileOutcome<KubeObject>[] = [];
    subscriptions.push(h.ctl.subscribe((o) => again.push(o)));
    await advance(0);
    expect(h.calls).toEqual(['default/a']); // the new run waits for the old one's drain
    gate.resolve();
    await advance(0);
    expect(h.calls).toEqual(['default/a', 'default/a']);
    expect(maxConcurrent).toBe(1);
    expect(again.map((o) => o.key)).toEqual(['default/a']);
    expect(primary.subscribers).toBe(1);
  });

  it('ends with the error of a source that failed for good, after the same drain', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const h = run(primary, {});
    const ended = lastValueFrom(h.ctl).catch((err: unknown) => err);
    await advance(0);
    const fatal = new Error('422 Invalid');
    primary.fail(fatal);
    await advance(0);
    expect(await ended).toBe(fatal);
    expect(h.ctl.status().state).toBe('failed');
    expect(primary.subscribers).toBe(0);
  });
});

describe('controller: options', () => {
  const primary = memorySource<KubeObject>();
  const reconcile = (): undefined => undefined;
  it.each([
    [{ reconcile }, /option "for" must be an informer/],
    [{ for: primary }, /option "reconcile" must be a function/],
    [{ for: primary, reconcile, concurrency: 0 }, /option "concurrency" must be an integer >= 1, got 0/],
    [{ for: primary, reconcile, concurrency: 1.5 }, /option "concurrency" must be an integer >= 1, got 1.5/],
    [{ for: primary, reconcile, resyncPeriod: -1 }, /option "resyncPeriod" must be a finite number >= 0, got -1/],
    [{ for: primary, reconcile, shutdownTimeoutMs: Infinity }, /option "shutdownTimeoutMs" must be a finite number >= 0, got Infinity/],
    [{ for: primary, reconcile, owns: [{ source: {} }] }, /owns\[0\]\.source must be an informer/],
    [{ for: primary, reconcile, owns: [{ source: primary, kind: '' }] }, /owns\[0\]: options\.kind must be a non-empty string/],
    [{ for: primary, reconcile, watches: [{ source: primary }] }, /watches\[0\]\.map must be a function/],
    [{ for: primary, reconcile, signal: 'stop' }, /option "signal" must be an AbortSignal, got "stop"/],
    [{ for: primary, reconcile, rateLimiter: {} }, /rateLimiter/],
    [{ for: primary, reconcile, concurency: 2 }, /unknown option "concurency"/],
  ])('rejects %o up front', (opts, message) => {
    expect(() => controller(opts as unknown as ControllerOptions<KubeObject>)).toThrow(TypeError);
    expect(() => controller(opts as unknown as ControllerOptions<KubeObject>)).toThrow(message);
  });
});

describe('controller: status$ and errors$', () => {
  it('shows its states on status$ and sends its own errors to errors$ subscribers when there is no onError', async () => {
    clock = virtualClock();
    const primary = memorySource<KubeObject>();
    const watched = memorySource<KubeObject>();
    primary.upsert(obj('a'));
    const ctl = controller<KubeObject>({
      for: primary,
      watches: [
        {
          source: watched,
          map: () => {
            throw new Error('mapper broke');
          },
        },
      ],
      reconcile: () => undefined,
      scheduler: clock.scheduler,
    });
    const states: string[] = [];
    const errors: Error[] = [];
    subscriptions.push(ctl.status$.subscribe((s) => (states.at(-1) === s.state ? undefined : states.push(s.state))));
    subscriptions.push(ctl.errors$.subscribe((e) => errors.push(e)));
    subscriptions.push(ctl.subscribe());
    primary.sync();
    watched.sync();
    await advance(0);
    watched.upsert(obj('w'));
    await advance(0);
    await ctl.shutdown();
    expect(states).toEqual(['idle', 'waitingForSync', 'running', 'draining', 'stopped']);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/mapper broke/)]);
    expect(ctl.status()).toMatchObject({ reconciles: 1, state: 'stopped' });
  });
});
